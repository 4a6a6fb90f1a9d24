"""The run page's data links in a real browser (Debian's Chromium via Playwright): a click
on a commit bucket's bar and on the stall's label lands on the events explorer's URL with
exactly that window. The explorer page is another branch's: only the URL is asserted.
Screenshots at 1440 and 375 px go to the test's tmp dir (under /tmp)."""

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.dashboard.links_data import load_links
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "run-links-browser-password"
COMMITS = ".chart[data-src*='commit-rate']"
# The centre of the tallest bar of a chart: the 10:01 bucket's two commits.
TALLEST_BAR = """sel => { const bars = [...document.querySelectorAll(sel + ' .trace.bars .point path')]
  .map(p => p.getBoundingClientRect()).filter(r => r.height > 0);
  const r = bars.sort((a, b) => b.height - a.height)[0];
  return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }"""


@pytest.fixture
def world(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    load_links()
    grant(django_user_model.objects.create_user("lee", password=PASSWORD))


def signed_in(browser: Browser, base: str, width: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 1000}).new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "lee")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("header .user")).to_contain_text("lee")
    return page


def landed(page: Page) -> tuple[str, dict[str, list[str]]]:
    url = urlsplit(page.url)
    return url.path, parse_qs(url.query)


@pytest.mark.parametrize("width", [1440, 375])
def test_a_click_on_a_commit_bucket_opens_the_explorer_on_that_minute(
    browser: Browser, live_server: Any, world: None, tmp_path: Path, width: int
) -> None:
    page = signed_in(browser, live_server.url, width)
    page.goto(f"{live_server.url}/runs/links/?last=all&bucket=1m&min_gap=30m")
    expect(page.locator(f"{COMMITS} .trace.bars .point path").first).to_be_attached()
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(tmp_path / f"{width}-run-links.png"), full_page=True)
    page.locator(COMMITS).scroll_into_view_if_needed()
    spot = page.evaluate(TALLEST_BAR, COMMITS)
    page.mouse.click(spot["x"], spot["y"])
    expect(page).to_have_url(re.compile(r"/runs/links/events/\?"))
    assert landed(page) == (
        "/runs/links/events/",
        {"kind": ["commit"], "start": ["2026-01-14T10:01:00Z"], "end": ["2026-01-14T10:02:00Z"]},
    )
    page.context.close()


def test_a_click_on_the_stall_label_opens_the_events_logged_during_it(
    browser: Browser, live_server: Any, world: None
) -> None:
    page = signed_in(browser, live_server.url, 1440)
    page.goto(f"{live_server.url}/runs/links/?last=all&bucket=1m&min_gap=30m")
    label = page.locator(f"{COMMITS} .annotation", has_text="4 events")
    expect(label).to_be_visible()
    label.click()
    expect(page).to_have_url(re.compile(r"/runs/links/events/\?"))
    assert landed(page) == (
        "/runs/links/events/",
        {"start": ["2026-01-14T10:01:45Z"], "end": ["2026-01-14T10:40:00Z"]},
    )
    page.context.close()
