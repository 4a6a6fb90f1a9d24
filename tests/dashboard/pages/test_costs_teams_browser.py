"""The Costs page with a team filter in Chromium, at 1440 and 375 px: the team's runs
only (tests/analytics/costs/team_calls.py), every chart drawn, the team kept in the
chart URLs. Screenshots go to the test's tmp dir (costs-team-<width>.png)."""

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.analytics.costs.team_calls import load_team_calls
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "costs-teams-browser-password"


@pytest.fixture
def teams(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    load_team_calls()
    grant(django_user_model.objects.create_user("tess", password=PASSWORD))


@pytest.mark.parametrize("width", [1440, 375])
def test_a_teams_costs_fit_and_draw_every_chart(
    page: Page, live_server: Any, teams: None, width: int, tmp_path: Path
) -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "tess")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/costs/?date=2026-01-14&team=web")
    expect(page.locator("select[name=team]")).to_have_value("web")
    charts = page.locator(".chart[data-src]")
    page.wait_for_function(
        "n => document.querySelectorAll('.chart .plot-container').length === n",
        arg=charts.count(),
    )
    expect(page.locator(".chart .error")).to_have_count(0)
    for src in charts.evaluate_all("cs => cs.map(c => c.dataset.src)"):
        assert "team=web" in src
    body = page.locator("main").inner_text()
    assert "s-pair" in body and "alpha-1" in body and "beta-1" not in body
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= width
    page.screenshot(path=tmp_path / f"costs-team-{width}.png", full_page=True)
