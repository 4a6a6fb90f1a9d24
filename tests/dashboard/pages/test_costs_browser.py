"""The Costs page in a real browser (Debian's Chromium via Playwright): it opens on the
latest day with spend, and a month without spend shows a sentence saying what to do, not
an axis invented by Plotly (January 2000). Screenshots go to the test's tmp dir."""

import os
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.sync_api import Page, expect

from analytics.costs.models import ModelPrice
from ingest.pipelines.agent_events import ingest_body
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "costs-browser-password"


@pytest.fixture
def spend(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    """Priced calls on 2026-01-13 and 14, an unpriced one on the 15th."""
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    calls = [
        ("2026-01-13T10:00:00Z", "gpt-5", 800_000),
        ("2026-01-14T10:00:00Z", "gpt-5", 1_000_000),
        ("2026-01-15T10:00:00Z", "mystery-1", 10),
    ]
    lines = [
        {
            "ts": ts,
            "run": "r1",
            "agent": "w",
            "event": "llm_call",
            "model": model,
            "usage": {"input_tokens": tokens, "output_tokens": 0},
        }
        for ts, model, tokens in calls
    ]
    ingest_body(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    grant(django_user_model.objects.create_user("dana", password=PASSWORD))


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")


def _charts_drawn(page: Page) -> None:
    page.wait_for_function("() => document.querySelectorAll('.chart .plot-container').length === 3")
    expect(page.locator(".chart .error")).to_have_count(0)


def test_the_page_opens_on_the_latest_day_with_spend(
    page: Page, live_server: Any, spend: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/costs/")
    expect(page.locator("input[name=date]")).to_have_value("2026-01-14")
    expect(page.locator("h1")).to_contain_text("2026-01-14")
    _charts_drawn(page)
    # gpt-5's two days: $1.00 (800k x $1.25/M) and $1.25 (1M x $1.25/M), drawn as bars
    # on a date axis that ends on the 14th.
    drawn = page.evaluate(
        "() => { const d = document.querySelector('.chart').data[0];"
        " return [d.name, d.x.slice(-3), d.y.slice(-3)]; }"
    )
    assert drawn == ["gpt-5", ["2026-01-12", "2026-01-13", "2026-01-14"], [0, 1.0, 1.25]]
    expect(page.locator(".chart").first.locator(".xtick").first).to_be_visible()
    page.screenshot(path=str(tmp_path / "costs.png"), full_page=True)


def test_a_month_without_spend_says_what_to_do_at_any_width(
    page: Page, live_server: Any, spend: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    for width in (1440, 375):
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto(f"{live_server.url}/costs/?date=2025-06-01")
        _charts_drawn(page)
        chart = page.locator(".chart").first
        expect(chart).to_contain_text("No priced API spend in these days")
        expect(chart.locator(".xtick")).to_have_count(0)
        expect(chart.locator(".ytick")).to_have_count(0)
        note = chart.locator(".annotation").first.bounding_box()
        box = chart.bounding_box()
        assert note is not None and box is not None
        assert box["x"] <= note["x"] and note["x"] + note["width"] <= box["x"] + box["width"]
        page.screenshot(path=str(tmp_path / f"costs-empty-{width}.png"), full_page=True)


def test_a_user_in_no_team_sees_why_the_page_is_empty_at_any_width(
    page: Page, live_server: Any, spend: None, django_user_model: Any, tmp_path: Path
) -> None:
    from tests.analytics.costs.two_teams import make_user

    user = make_user(django_user_model, "nia")
    user.set_password(PASSWORD)
    user.save()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "nia")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    for width in (1440, 375):
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto(f"{live_server.url}/costs/?date=2026-01-14")
        _charts_drawn(page)
        expect(page.locator(".no-team")).to_contain_text("You are in no team")
        expect(page.locator(".stat .value").first).to_have_text("$0.00")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(tmp_path / f"costs-no-team-{width}.png"), full_page=True)


def test_at_phone_width_the_days_table_reads_without_scrolling_sideways(
    browser: Any, live_server: Any, spend: None, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("FLEETSCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_context(viewport={"width": 375, "height": 800}).new_page()
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/costs/?date=2026-01-14")
    _charts_drawn(page)
    table = page.locator("#days-table")
    table.scroll_into_view_if_needed()
    page.locator(".days-panel").screenshot(path=str(shots / "375-costs-days.png"))
    # The table fits its panel: nothing hidden to the right of its own box, nor of the page.
    box = table.evaluate("t => [t.scrollWidth, t.clientWidth]")
    assert box[0] <= box[1], box
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    # Each cell still says what it is: the 14th's row, input 1,000,000 tokens and $1.25.
    row = table.locator("tbody tr", has_text="2026-01-14")
    expect(row.locator("td[data-label=Input]")).to_have_text("1,000,000")
    expect(row.locator("td[data-label=USD]")).to_have_text("$1.25")
    expect(row.locator("td[data-label=Input]")).to_be_visible()
    page.context.close()
