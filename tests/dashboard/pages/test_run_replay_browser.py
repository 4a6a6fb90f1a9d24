"""The replay page in a real browser (Debian's Chromium via Playwright): a prompt holding
`<script>` shows as text and runs nothing, a folded result opens, the agent filter keeps
its choice in the URL, and the page fits at 1440 and at 375 px (no horizontal overflow).
Screenshots go to the test's tmp dir (FLEETSCOPE_SCREENSHOTS names another folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, ViewportSize, expect

from ingest.pipelines.claude_code import run_claude_code
from tests.analytics.runs.replay_world import PROMPT, SESSION, write_session
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
    write_session(tmp_path / "logs")
    run_claude_code([str(tmp_path / "logs")])
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD))


def test_the_replay_reads_as_a_conversation_and_fits_both_widths(
    browser: Browser, live_server: Any, admin: Any, tmp_path: Path
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
    url = f"{live_server.url}/runs/{SESSION}/replay/"
    page.goto(url)
    expect(page.locator("li.turn.kind-prompt").first).to_contain_text(PROMPT)
    expect(page.locator("p.first-prompt")).to_have_text(f"“{PROMPT}”")
    assert dialogs == []  # the <script> in the prompt ran nothing
    folded = page.locator("li.turn details").first
    expect(folded.locator("pre")).to_be_hidden()
    folded.locator("summary").click()
    expect(folded.locator("pre")).to_contain_text("l39")

    page.select_option("select[name=agent]", "agent-b0b")
    page.click("form.replay-filter button")
    expect(page).to_have_url(re.compile(r"/replay/\?agent=agent-b0b$"))
    expect(page.locator("li.turn")).to_have_count(2)

    for width, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(shots / f"{width}-replay.png"), full_page=True)
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= viewport["width"], f"the replay is {scroll} px wide at {width}"
