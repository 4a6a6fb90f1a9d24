"""The Alerts page and the rule editor in a real browser (Debian's Chromium via
Playwright): the page opens, the editor previews the flapping-KV scenario and its Plotly
timeline draws, with no console error. Screenshots go to the test's tmp dir."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from analytics.alerts.models import AlertRule, AlertState, Channel, Evaluation
from tests.analytics.alerts import scenarios
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "alerts-browser-password"
END = "2026-01-14T09:20:00Z"  # the end of the flapping-KV scenario


@pytest.fixture
def alerting(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    """The flapping-KV scenario in the warehouse, a rule firing on it, a failing channel."""
    scenarios.load_flapping_kv()
    now = timezone.now()
    hook = Channel.objects.create(
        name="ops-hook",
        kind="webhook",
        target="https://hooks.example.com/fleet",
        failing_since=now - timedelta(minutes=30),
        last_error="HTTP 410 Gone",
    )
    Channel.objects.create(name="oncall", kind="email", target="oncall@example.com")
    rule = AlertRule.objects.create(
        name="kv high", kind="kv_usage", threshold=0.95, for_seconds=300
    )
    rule.channels.set([hook])
    AlertState.objects.create(
        rule=rule,
        subject="gpu-flap",
        state="firing",
        since=now - timedelta(minutes=9),
        value=0.97,
        summary="KV usage 97% for 9 min",
        evaluated_at=now,
    )
    Evaluation.objects.create(at=now, duration_ms=18, rules=1, subjects=1)
    grant(django_user_model.objects.create_user("dana", password=PASSWORD))


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")


def test_the_editor_previews_a_rule_and_draws_its_timeline(
    page: Page, live_server: Any, alerting: None, tmp_path: Path
) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _log_in(page, live_server.url)

    page.goto(f"{live_server.url}/alerts/")
    expect(page.locator("#firing")).to_contain_text("gpu-flap")
    expect(page.locator("#channels")).to_contain_text("HTTP 410 Gone")
    page.screenshot(path=str(tmp_path / "alerts.png"), full_page=True)

    page.click("text=New rule")
    page.fill("#id_name", "kv saturated")
    page.select_option("#id_kind", "kv_usage")
    page.fill("#id_threshold", "0.95")
    page.fill("#id_for_duration", "5m")
    # The preview's range ends where the scenario does, so the test is deterministic.
    page.evaluate(f"document.querySelector('#id_end').value = '{END}'")
    page.click("button[value=preview]")

    expect(page.locator("#incidents tbody tr")).to_have_count(1)
    chart = page.locator("#preview .chart")
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    expect(chart.locator(".barlayer .point")).to_have_count(2)  # pending, then firing
    expect(page.locator("#preview .chart .error")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "rule-preview.png"), full_page=True)
    assert errors == []
    assert AlertRule.objects.count() == 1  # previewing saved nothing

    page.click("button[value=save]")
    expect(page).to_have_url(f"{live_server.url}/alerts/")
    expect(page.locator("#rules-table")).to_contain_text("kv saturated")
    assert errors == []
