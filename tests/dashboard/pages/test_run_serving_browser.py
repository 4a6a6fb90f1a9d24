"""The run page's "Serving under this run" section in a real browser (Debian's Chromium
via Playwright): a click on gpu-a's 10:01 KV-cache point lands on the run's events
explorer with exactly that bucket and model, and the explorer lists the events of that
window, compared with the events tests/analytics/runs/serving_load_world.py logged.
Screenshots of the section at 1440 and 375 px go to the test's tmp dir
(FLEETSCOPE_SCREENSHOTS names another folder)."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.analytics.runs.serving_load_world import EVENTS, MODEL_A, load_served
from tests.dashboard.pages.test_shell import PASSWORD, log_in, open_page
from tests.people import grant

pytestmark = pytest.mark.browser

KV = ".chart[data-src*='serving-kv']"
# The centre of the n-th marker of the chart's first trace (gpu-a's), by time.
MARKER = """([sel, n]) => { const marks = [...document.querySelectorAll(
  sel + ' .scatterlayer .trace:first-child .points path')].map(p => p.getBoundingClientRect());
  const r = marks.sort((a, b) => a.left - b.left)[n];
  return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }"""


@pytest.fixture
def viewer(lake: Path, transactional_db: None, django_user_model: Any) -> Any:
    load_served()
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD))


def truth(model: str, start: str, end: str) -> list[str]:
    """The times ("2026-01-14 10:01:10") of run `served`'s events of `model` in [start, end)."""
    lo, hi = datetime.fromisoformat(start), datetime.fromisoformat(end)
    return [
        datetime.fromisoformat(e["ts"]).strftime("%Y-%m-%d %H:%M:%S")
        for e in EVENTS
        if e["run"] == "served"
        and e.get("model") == model
        and lo <= datetime.fromisoformat(e["ts"]) < hi
    ]


@pytest.mark.parametrize("width", [1440, 375])
def test_a_click_on_a_kv_bucket_opens_the_explorer_on_that_bucket_and_its_events(
    browser: Browser, live_server: Any, viewer: Any, tmp_path: Path, width: int
) -> None:
    shots = Path(os.environ.get("FLEETSCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, viewport={"width": width, "height": 1000})
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/runs/served/?last=all&bucket=1m")
    section = page.locator("#run-serving-load")
    expect(section.locator(f"{KV} .scatterlayer .trace .points path")).to_have_count(4)
    page.wait_for_load_state("networkidle")
    section.scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    section.screenshot(path=str(shots / f"{width}-run-serving.png"))
    page.screenshot(path=str(shots / f"{width}-run-serving-page.png"), full_page=True)

    spot = page.evaluate(MARKER, [KV, 1])
    page.mouse.click(spot["x"], spot["y"])
    expect(page).to_have_url(re.compile(r"/runs/served/events/\?"))
    url = urlsplit(page.url)
    window = {"start": ["2026-01-14T10:01:00Z"], "end": ["2026-01-14T10:02:00Z"]}
    assert (url.path, parse_qs(url.query)) == (
        "/runs/served/events/",
        {"model": [MODEL_A], **window},
    )
    rows = page.locator("details.event")
    expected = truth(MODEL_A, "2026-01-14T10:01:00+00:00", "2026-01-14T10:02:00+00:00")
    assert expected == ["2026-01-14 10:01:10"]
    expect(rows).to_have_count(len(expected))
    expect(rows.locator("summary .when")).to_have_text(expected)
    expect(rows.first.locator("summary .what")).to_have_text(MODEL_A)
    page.context.close()
