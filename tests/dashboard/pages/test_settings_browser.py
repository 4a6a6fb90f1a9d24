"""The Settings pages in a real browser (Debian's Chromium via Playwright): an admin creates
an API token (its raw value shown once, gone on reload), revokes it after confirming, and
creates a team; every settings page fits at 1440 and at 375 px (no horizontal overflow).
Screenshots go to the test's tmp dir (FLEETSCOPE_SCREENSHOTS names another folder)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from analytics.costs.models import Team
from dashboard.models import ApiToken, hash_token
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "settings-browser-password"
PAGES = ["/settings/tokens/", "/settings/users/", "/settings/teams/", "/settings/audit/"]
WIDTHS: dict[str, ViewportSize] = {
    "1440": {"width": 1440, "height": 1000},
    "375": {"width": 375, "height": 800},
}


@pytest.fixture
def admin(transactional_db: None, django_user_model: Any) -> Any:
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD))


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "erin")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("header .user")).to_contain_text("erin")


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FLEETSCOPE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_an_admin_creates_a_token_and_a_team_and_every_page_fits(
    browser: Browser, live_server: Any, admin: Any, tmp_path: Path
) -> None:
    shots = _shots(tmp_path)
    context = browser.new_context(viewport=WIDTHS["1440"])
    page = context.new_page()
    page.set_default_timeout(20_000)
    _log_in(page, live_server.url)

    page.click("header nav >> text=Settings")
    expect(page).to_have_url(f"{live_server.url}/settings/tokens/")
    page.fill("#id_name", "laptop collector")
    page.check("input[name=scope][value=ingest]")
    page.fill("#id_expires_days", "30")
    page.click("#token-form button[type=submit]")
    raw = page.locator("#raw-token").inner_text()
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert (token.name, token.scope) == ("laptop collector", "ingest")
    page.screenshot(path=str(shots / "1440-token-created.png"), full_page=True)

    page.goto(f"{live_server.url}/settings/tokens/")
    expect(page.locator("#raw-token")).to_have_count(0)
    expect(page.locator(f'tr[data-token="{token.pk}"] .badge')).to_have_text("live")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f'tr[data-token="{token.pk}"] button.danger')
    expect(page.locator(f'tr[data-token="{token.pk}"] .badge')).to_have_text("revoked")

    page.goto(f"{live_server.url}/settings/teams/")
    page.fill("#id_name", "infra")
    page.fill("#id_run_patterns", "infra-*\nsolver-2")
    page.fill("#id_daily_budget_usd", "40")
    page.check("input[name=members] >> nth=0")
    page.click("#team-form button[type=submit]")
    expect(page.locator('tr[data-team="infra"]')).to_contain_text("erin")
    assert Team.objects.get(name="infra").run_patterns == ["infra-*", "solver-2"]

    for label, viewport in WIDTHS.items():
        page.set_viewport_size(viewport)
        for path in PAGES:
            page.goto(live_server.url + path)
            name = path.strip("/").replace("/", "_")
            page.screenshot(path=str(shots / f"{label}-{name}.png"), full_page=True)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], f"{path} is {width} px wide at {label} px"
    context.close()
