"""The Serving and Overview pages in a real browser (Debian's Chromium via Playwright):
every chart draws from its JSON, none fails. Screenshots go to the test's tmp dir."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from analytics.serving import charts as serving_charts
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from ingest.standin.simulation import EngineConfig
from ingest.standin_vllm import StandinServer
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "serving-browser-password"


@pytest.fixture
def served(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    """20 minutes of a busy two-engine stand-in, scraped every 15 s, ending now."""
    now = datetime.now(UTC)
    standin = StandinServer(engines=2, seed=4, config=EngineConfig(num_gpu_blocks=1024))
    start = now - timedelta(minutes=20)
    standin.restart(now=start.timestamp())
    pending = []
    for i in range(80):
        ts = start + timedelta(seconds=15 * (i + 1))
        text = standin.metrics(now=ts.timestamp())
        pending.append(PendingScrape("gpu-1", ts, scrape=parse_scrape(text)))
    load_scrapes(pending)
    grant(django_user_model.objects.create_user("dana", password=PASSWORD))


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")


def _expect_charts_drawn(page: Page, count: int) -> None:
    expect(page.locator(".chart .main-svg").first).to_be_visible()
    expect(page.locator(".chart")).to_have_count(count)
    page.wait_for_function(
        "n => document.querySelectorAll('.chart .plot-container').length === n", arg=count
    )
    expect(page.locator(".chart .error")).to_have_count(0)


def test_the_instance_page_draws_every_chart(
    page: Page, live_server: Any, served: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/serving/")
    expect(page.locator("table.data")).to_contain_text("gpu-1")
    _expect_charts_drawn(page, 2)
    page.click("text=gpu-1")
    expect(page.locator("h1")).to_contain_text("gpu-1")
    _expect_charts_drawn(page, 14)  # with admission rejections
    page.screenshot(path=str(tmp_path / "serving-instance.png"), full_page=True)


def test_the_overview_page_draws_its_shared_axis_figure(
    page: Page, live_server: Any, served: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/overview/?last=1h")
    _expect_charts_drawn(page, 1)
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)


def _notes(chart: Any) -> list[str]:
    """The chart's annotations as read, each one's lines joined by a space."""
    return chart.locator(".annotation-text").evaluate_all(
        "els => els.map(e => [...e.querySelectorAll('tspan.line')]"
        ".map(t => t.textContent).join(' ') || e.textContent)"
    )


def test_a_range_before_any_scrape_says_what_to_do_instead_of_an_axis(
    page: Page, live_server: Any, served: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/serving/?start=2020-01-01T00:00&end=2020-01-01T01:00")
    _expect_charts_drawn(page, 2)
    for chart in page.locator(".chart").all():
        assert _notes(chart) == [serving_charts.NO_INSTANCES]
        expect(chart.locator(".xtick")).to_have_count(0)
    page.goto(f"{live_server.url}/overview/?start=2020-01-01T00:00&end=2020-01-01T01:00")
    _expect_charts_drawn(page, 1)
    overview = page.locator(".chart")
    notes = _notes(overview)
    assert notes[4:] == [
        "No run selected: ingest agent events with manage.py ingest agent-events PATH.",
        "No attempts in this range, so no error rate: pick a range inside the run.",
        "No serving instance scraped in this range: register one with manage.py scrape URL.",
        "No serving instance scraped in this range: register one with manage.py scrape URL.",
    ]
    expect(overview.locator(".xtick")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "overview-empty.png"), full_page=True)


def test_the_picker_shows_its_range_and_a_bad_one_keeps_what_was_typed(
    page: Page, live_server: Any, served: None, tmp_path: Path
) -> None:
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/serving/?last=1h")
    shown = page.locator(".timerange-shown time")
    expect(shown).to_have_count(2)
    start, end = (
        datetime.fromisoformat(t.replace("Z", "+00:00"))
        for t in shown.evaluate_all("els => els.map(e => e.getAttribute('datetime'))")
    )
    # An hour back from now, widened to whole 1-minute buckets at both ends.
    assert timedelta(hours=1) <= end - start <= timedelta(hours=1, minutes=2)
    expect(shown.first).to_have_text(start.strftime("%Y-%m-%d %H:%M"))
    page.fill("input[name=start]", "2026-01-14T12:00")
    page.fill("input[name=end]", "2026-01-14T10:00")
    page.select_option("select[name=bucket]", "5m")
    with page.expect_response(lambda r: "/serving/?" in r.url) as answer:
        page.click(".timerange button:text('Apply')")
    assert answer.value.status == 422
    expect(page.locator(".timerange-problem")).to_have_text("start must be before end")
    expect(page.locator("input[name=start]")).to_have_value("2026-01-14T12:00")
    expect(page.locator("input[name=end]")).to_have_value("2026-01-14T10:00")
    expect(page.locator("select[name=bucket]")).to_have_value("5m")
    expect(page.locator(".chart")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "serving-bad-range.png"), full_page=True)
