"""The People pages in a real browser (Debian's Chromium via Playwright): the team filter
changes the table and stays in the URL, a person's name leads to their page and a session
to its run; both pages fit at 1440 and at 375 px (no horizontal overflow). Screenshots go
to the test's tmp dir (FLEETSCOPE_SCREENSHOTS names another folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ViewportSize, expect

from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB
from tests.dashboard.pages.test_shell import PASSWORD, log_in, open_page
from tests.people import grant

pytestmark = pytest.mark.browser

WIDTHS: dict[str, ViewportSize] = {
    "1440": {"width": 1440, "height": 1000},
    "375": {"width": 375, "height": 800},
}


@pytest.fixture
def admin(
    settings: Any, tmp_path: Path, lake: Path, transactional_db: None, django_user_model: Any
) -> Any:
    settings.DATA_DIR = tmp_path
    world.build()
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD))


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FLEETSCOPE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_team_filter_a_person_and_their_session_and_both_pages_fit(
    browser: Browser, live_server: Any, admin: Any, tmp_path: Path
) -> None:
    shots = _shots(tmp_path)
    page = open_page(browser, viewport=WIDTHS["1440"])
    log_in(page, live_server.url)
    page.click("header nav >> text=People")
    expect(page).to_have_url(re.compile(r"/people/(\?refresh=0)?$"))
    names = page.locator("table.people td.person-name")
    expect(names).to_have_text([ANN, BOB])

    page.select_option("select[name=team]", "web")
    expect(page).to_have_url(re.compile(r"/people/\?(.+&)?team=web(&|$)"))
    expect(names).to_have_text([BOB])
    page.select_option("select[name=team]", "")
    expect(names).to_have_text([ANN, BOB])

    page.click(f"table.people a >> text={ANN}")
    expect(page).to_have_url(re.compile(rf"/people/{re.escape(ANN)}/(\?refresh=0)?$"))
    expect(page.locator("table.sessions td.session-name")).to_have_count(3)
    page.click("table.sessions a >> text=s-ann-1")
    expect(page).to_have_url(re.compile(r"/runs/s-ann-1/(\?.*)?$"))

    for width, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        for path, name in (("/people/", "people"), (f"/people/{ANN}/", "person")):
            page.goto(live_server.url + path)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(shots / f"{width}-{name}.png"), full_page=True)
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= viewport["width"], f"{path} is {scroll} px wide at {width}"
