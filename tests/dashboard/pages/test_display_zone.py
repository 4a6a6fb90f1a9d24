"""Every time on the costs, overview, serving, instance, alerts, rule editor and tokens
pages follows the display zone, in a real browser (Debian's Chromium via Playwright): with
the browser's zone chosen (Asia/Tokyo) each <time> shows the Tokyo time of its datetime
(computed here with zoneinfo) and no "UTC" label is left on the page; in UTC mode they show
UTC. And the runs and tokens stylesheets take the dark colours from fleetscope.css's
variables. Screenshots go to the test's tmp dir."""

import io
import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson
import pytest
from playwright.sync_api import Browser, Page, expect

from analytics.alerts.models import AlertRule, AlertState, Channel, Evaluation, Silence, Transition
from analytics.costs.models import ModelPrice, RecipientKind, ReportDelivery
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.requests import run_requests
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.dashboard.pages.test_shell import log_in, open_page
from tests.dashboard.pages.test_shell import shell_data as shell_data  # the shell's page data

pytestmark = pytest.mark.browser

TOKYO = ZoneInfo("Asia/Tokyo")  # UTC+09:00 all year, no daylight saving
END = "2026-01-14T09:20:00Z"  # the end of the flapping-KV scenario the shell data loads
# The text of each precision, written out here rather than taken from the template tag.
FORMATS = {
    "minute": "%Y-%m-%d %H:%M",
    "second": "%Y-%m-%d %H:%M:%S",
    "date": "%Y-%m-%d",
    "clock": "%H:%M:%S",
}
# A page, and times it must show in Tokyo (worked out by hand: UTC + 9 h).
PAGES = {
    "/costs/?date=2026-01-14": {"2026-01-15T06:30:00Z": "2026-01-15 15:30"},
    "/overview/?last=all": {},
    "/serving/?last=all": {"2026-01-14T09:21:00Z": "2026-01-14 18:21:00"},
    "/serving/instance/gpu-flap/?last=all": {"2026-01-14T09:21:00Z": "2026-01-14 18:21:00"},
    "/alerts/": {
        "2026-01-14T08:33:59Z": "2026-01-14 17:33:59",
        "2026-01-14T09:00:00Z": "2026-01-14 18:00",
        "2026-01-14T09:20:00Z": "2026-01-14 18:20:00",
    },
    "/alerts/rules/new/": {
        "2026-01-13T09:20:00Z": "2026-01-13 18:20",
        "2026-01-14T08:33:59Z": "2026-01-14 17:33:59",
    },
    "/tokens/": {"2026-03-01T10:00:00Z": "2026-03-01 19:00:00"},
    "/runs/tiny/?last=all": {},
}
TIMES = """() => [...document.querySelectorAll('main time')].map(t =>
  [t.getAttribute('datetime'), t.dataset.precision || 'minute', t.textContent, t.title])"""
# The page's visible words, but for two definitions that name UTC and are not times shown
# in the display zone: the cost report's calendar days are in its own `tz` (the heading and
# the days table's say which, as the e-mail does), and the daily-spend rule counts the UTC
# day (the kinds' help).
DEFINITIONS = {"/costs/": "h1 .muted, h3 .report-tz", "/alerts/rules/new/": ".kind-help dd"}
VISIBLE = """definitions => { const main = document.querySelector('main').cloneNode(true);
  const drop = definitions[location.pathname];
  if (drop) { main.querySelectorAll(drop).forEach(el => el.remove()); }
  document.body.append(main); const text = main.innerText; main.remove(); return text; }"""


@pytest.fixture
def zone_data(shell_data: Any, tmp_path: Path) -> Any:
    """The shell's runs, flapping-KV scenario and rule, plus a time on every page: a
    report delivery, a failed scrape, an alert firing with its change, evaluation,
    failing channel and silence, and a request whose reported tokens differ."""
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    call = {"ts": "2026-01-14T10:00:00Z", "run": "r1", "agent": "w", "event": "llm_call",
            "model": "gpt-5", "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}  # fmt: skip
    ingest_body(orjson.dumps(call) + b"\n")
    ReportDelivery.objects.create(
        report_date=date(2026, 1, 14),
        kind=RecipientKind.EMAIL,
        target="ops@example.com",
        ok=True,
        attempted_at=datetime(2026, 1, 15, 6, 30, tzinfo=UTC),
    )
    failed = datetime(2026, 1, 14, 9, 21, tzinfo=UTC)
    load_scrapes([PendingScrape("gpu-flap", failed, error="HTTP 503 Service Unavailable")])

    rule = AlertRule.objects.get(name="kv high")
    hook = Channel.objects.create(
        name="ops-hook",
        kind="webhook",
        target="https://hooks.example.com/fleet",
        failing_since=datetime(2026, 1, 14, 9, 0, tzinfo=UTC),
        last_error="HTTP 410 Gone",
    )
    rule.channels.set([hook])
    fired = datetime(2026, 1, 14, 8, 33, 59, tzinfo=UTC)
    evaluation = Evaluation.objects.create(
        at=datetime(2026, 1, 14, 9, 20, tzinfo=UTC), duration_ms=18, rules=1, subjects=1
    )
    alert = AlertState.objects.create(
        rule=rule, subject="gpu-flap", state="firing", since=fired, value=0.97,
        summary="KV usage 97% for 9 min", evaluated_at=evaluation.at,
    )  # fmt: skip
    Transition.objects.create(
        alert=alert, evaluation=evaluation, from_state="pending", to_state="firing", at=fired
    )
    Silence.objects.create(rule=rule, ends_at=datetime.now(UTC) + timedelta(hours=2))

    requests = tmp_path / "requests.jsonl"
    request = {"ts": "2026-03-01T10:00:00Z", "request_id": "req-1", "model": "gpt-4o",
               "prompt": "Where is the nearest pharmacy?", "usage": {"prompt_tokens": 500}}  # fmt: skip
    requests.write_bytes(orjson.dumps(request) + b"\n")
    run_requests([str(requests)], progress=io.StringIO())
    return shell_data


def visit(page: Page, base: str, path: str) -> None:
    """Open a page; the rule editor is previewed over the scenario first."""
    if path.startswith("/alerts/rules/new/"):
        page.goto(f"{base}{path}?end={END}")
        page.fill("#id_name", "kv saturated")
        page.select_option("#id_kind", "kv_usage")
        page.fill("#id_threshold", "0.95")
        page.fill("#id_for_duration", "5m")
        page.click("button[value=preview]")
        expect(page.locator("#incidents tbody tr")).to_have_count(1)
    else:
        page.goto(f"{base}{path}")
    page.wait_for_load_state("networkidle")


def shown_in(stamp: str, precision: str, zone: tzinfo) -> str:
    return datetime.fromisoformat(stamp).astimezone(zone).strftime(FORMATS[precision])


def test_in_the_browsers_zone_every_time_is_tokyo_time_and_no_utc_label_is_left(
    browser: Browser, live_server: Any, zone_data: Any, tmp_path: Path
) -> None:
    page = open_page(browser, viewport={"width": 1440, "height": 1000}, timezone_id="Asia/Tokyo")
    log_in(page, live_server.url)
    page.get_by_role("button", name="Local").click()
    expect(page.locator("html")).to_have_attribute("data-time-zone", "browser")
    for path, by_hand in PAGES.items():
        visit(page, live_server.url, path)
        times = page.evaluate(TIMES)
        assert times, f"{path} shows no <time>"
        for stamp, precision, text, title in times:
            assert text == shown_in(stamp, precision, TOKYO), (path, stamp)
            assert title == f"{shown_in(stamp, precision, UTC)} UTC", (path, stamp)
        shown = {stamp: text for stamp, _, text, _ in times}
        assert {stamp: shown.get(stamp) for stamp in by_hand} == by_hand, path
        labels = page.locator("main [data-zone-label]")
        expect(labels.first).to_be_attached()
        assert set(labels.all_text_contents()) == {"Asia/Tokyo"}, path
        words = page.evaluate(VISIBLE, DEFINITIONS)
        assert re.search(r"\bUTC\b", words) is None, f"{path}: {words}"
        name = path.split("?")[0].strip("/").replace("/", "_")
        page.screenshot(path=str(tmp_path / f"tokyo-{name}.png"), full_page=True)
    page.context.close()


def test_in_utc_mode_the_same_pages_show_utc(
    browser: Browser, live_server: Any, zone_data: Any
) -> None:
    page = open_page(browser, viewport={"width": 1440, "height": 1000}, timezone_id="Asia/Tokyo")
    log_in(page, live_server.url)
    expect(page.locator("html")).to_have_attribute("data-time-zone", "utc")
    for path, by_hand in PAGES.items():
        visit(page, live_server.url, path)
        times = page.evaluate(TIMES)
        assert times, f"{path} shows no <time>"
        for stamp, precision, text, title in times:
            assert text == shown_in(stamp, precision, UTC), (path, stamp)
            assert title == "", (path, stamp)  # nothing converted, so no UTC tooltip
        shown = {stamp: text for stamp, _, text, _ in times}
        utc_by_hand = {
            stamp: shown_in(stamp, "second", UTC)[: len(t)] for stamp, t in by_hand.items()
        }
        assert {stamp: shown.get(stamp) for stamp in by_hand} == utc_by_hand, path
        assert set(page.locator("main [data-zone-label]").all_text_contents()) == {"UTC"}, path
    page.context.close()


# fleetscope.css's dark values, as red, green, blue.
HEAD = (28, 35, 48)  # --head #1c2330
MUTED = (154, 163, 178)  # --muted #9aa3b2
ACCENT = (110, 161, 255)  # --accent #6ea1ff
PANEL = (23, 29, 38)  # --panel #171d26
INK = (230, 233, 239)  # --ink #e6e9ef
COLOURS = "el => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]"


def rgb(css: str) -> list[float]:
    """`rgb(28, 35, 48)`, or `color(srgb 0.165 0.228 0.336)` as a color-mix() computes,
    as red, green, blue from 0 to 255."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)]
    if css.startswith("color(srgb "):
        return [255 * n for n in numbers[:3]]
    assert css.startswith("rgb("), css
    return numbers[:3]


def test_in_dark_mode_runs_badges_and_token_tints_take_the_dark_colours(
    browser: Browser, live_server: Any, shell_data: Any, tmp_path: Path
) -> None:
    page = open_page(browser, viewport={"width": 1440, "height": 1000}, color_scheme="dark")
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/runs/tiny/?last=all")
    worker = page.locator(".badge.role-worker").first
    root = page.locator(".badge.role-root_planner").first
    assert [rgb(c) for c in worker.evaluate(COLOURS)] == [list(HEAD), list(MUTED)]
    assert [rgb(c) for c in root.evaluate(COLOURS)] == [list(ACCENT), list(PANEL)]
    page.screenshot(path=str(tmp_path / "dark-run.png"), full_page=True)

    # The page counts its sample text once on load; waiting for that answer (rather than
    # clicking Count, which redraws and detaches the spans under the locator) leaves one
    # drawing to read the colours from.
    with page.expect_response(lambda r: "/api/tokens/count" in r.url):
        page.goto(f"{live_server.url}/tokens/")
    token = page.locator(".tok.c0").first
    expect(token).to_be_visible()
    background, ink = (rgb(c) for c in token.evaluate(COLOURS))
    # 22% accent over the panel, channel by channel: (42.1, 58.0, 85.7).
    mixed = [0.22 * a + 0.78 * p for a, p in zip(ACCENT, PANEL, strict=True)]
    assert [round(c, 1) for c in background] == [round(c, 1) for c in mixed] == [42.1, 58.0, 85.7]
    assert ink == list(INK)
    page.screenshot(path=str(tmp_path / "dark-tokens.png"), full_page=True)
    page.context.close()
