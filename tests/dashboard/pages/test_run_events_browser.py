"""The events explorer in a real browser (Debian's Chromium via Playwright): a row opens
its whole record, a message holding `<script>` shows as text and runs nothing, the filter
form keeps its choice in the URL, the next page and back to the first, and the page fits
at 1440 and at 375 px (no horizontal overflow). Screenshots go to the test's tmp dir
(FLEETSCOPE_SCREENSHOTS names another folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, ViewportSize, expect

from tests.analytics.runs.events_world import RUN, XSS, load_world
from tests.dashboard.pages.test_shell import PASSWORD, log_in, open_page
from tests.people import grant

pytestmark = pytest.mark.browser

WIDTHS: dict[str, ViewportSize] = {
    "1440": {"width": 1440, "height": 1000},
    "375": {"width": 375, "height": 800},
}


@pytest.fixture
def viewer(lake: Path, transactional_db: None, django_user_model: Any) -> Any:
    load_world()
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD))


def test_the_explorer_filters_pages_opens_records_and_fits_both_widths(
    browser: Browser, live_server: Any, viewer: Any, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("FLEETSCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, viewport=WIDTHS["1440"])
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    log_in(page, live_server.url)
    url = f"{live_server.url}/runs/{RUN}/events/"
    page.goto(url)
    rows = page.locator("details.event")
    expect(rows).to_have_count(15)
    expect(rows.first).to_contain_text(XSS)  # E15, the newest: its message as text
    assert dialogs == []

    page.select_option("select[name=kind]", "llm_call")
    page.select_option("select[name=order]", "oldest")
    page.click("form.events-filter button.apply")
    expect(page).to_have_url(re.compile(r"/events/\?kind=llm_call&ok=&agent=.*order=oldest$"))
    expect(rows).to_have_count(3)
    first = rows.first
    expect(first.locator(".record")).to_be_hidden()
    expect(first.locator("summary .usd")).to_have_text("$0.0111")  # E5, priced by hand
    first.locator("summary").click()
    expect(first.locator(".record")).to_contain_text("explore.jsonl:5")
    expect(first.locator("pre.json")).to_contain_text('"temperature": 0.2')
    page.screenshot(path=str(shots / "1440-events-open.png"), full_page=True)

    page.goto(f"{url}?limit=4")
    expect(rows).to_have_count(4)
    page.get_by_role("link", name="Next page →").click()
    expect(rows).to_have_count(4)
    expect(rows.first).to_contain_text("handoff")  # E11, the fifth newest
    page.get_by_role("link", name="← First page").click()
    expect(rows.first).to_contain_text("error")  # E15 again

    for width, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        for name, query in (("events", ""), ("events-empty", "?tool=nothing")):
            page.goto(url + query)
            page.wait_for_load_state("networkidle")
            if not query:
                page.locator("details.event summary").nth(10).click()  # E5 open
            page.screenshot(path=str(shots / f"{width}-{name}.png"), full_page=True)
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= viewport["width"], f"{name} is {scroll} px wide at {width}"
    expect(page.locator(".empty")).to_contain_text("Clear filters")
    page.context.close()
