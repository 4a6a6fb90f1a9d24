"""The agent page in a real browser (Debian's Chromium via Playwright): from a run's tree a
click on an agent's name opens its page, whose timeline draws; the page fits at 1440 px
and at 375 px. Screenshots go to the test's tmp dir (looked at by hand)."""

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from analytics.costs.models import ModelPrice
from tests.analytics.runs.agent_world import GPT5_ROW, load_crew
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "agent-page-password"


@pytest.fixture
def crew(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(**GPT5_ROW)
    load_crew()
    grant(django_user_model.objects.create_user("dana", password=PASSWORD))


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("header .user")).to_contain_text("dana")


def test_an_agent_in_the_tree_opens_its_page_and_its_timeline_draws(
    crew: None, live_server: Any, page: Page, tmp_path: Path
) -> None:
    base = live_server.url
    _log_in(page, base)
    page.goto(f"{base}/runs/crew/")
    page.locator('.agent-tree li[data-node="w1"] > .node a.name').click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/crew/agents/w1/$"))
    expect(page.locator("h1 .agent-name")).to_have_text("w1")
    expect(page.locator("#stat-usd")).to_have_text("$0.50")
    chart = page.locator(".chart[data-src]")
    expect(chart.locator(".main-svg").first).to_be_attached()
    # One lane per kind the agent logged: seven traces of marks.
    expect(chart.locator(".scatterlayer .trace")).to_have_count(7)
    page.screenshot(path=str(tmp_path / "agent-1440.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440

    page.locator("#agent-parent").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/crew/agents/p1/$"))
    expect(page.locator("ul.agent-children li a")).to_have_text(["<b>x</b>", "w1", "w2"])


def test_the_agent_page_fits_a_phone(
    crew: None, live_server: Any, browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    _log_in(page, live_server.url)
    for agent, name in (("w1", "w1"), ("%3Cb%3Ex%3C/b%3E", "xss"), ("lead", "lead")):
        page.goto(f"{live_server.url}/runs/crew/agents/{agent}/")
        page.wait_for_load_state("networkidle")
        if agent != "lead":
            expect(page.locator(".chart .main-svg").first).to_be_attached()
        page.screenshot(path=str(tmp_path / f"agent-375-{name}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, agent
    page.goto(f"{live_server.url}/runs/crew/")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(tmp_path / "run-375.png"), full_page=True)
    context.close()
