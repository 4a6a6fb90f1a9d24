"""target_down over the real scrape path (beat ticks scraping a loopback server, spooling,
and loading the spool a minute at a time): a healthy target never leaves ok, and a target
that fails and recovers shows both changes in the alert history."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.alerts import engine
from analytics.alerts.facts import Facts
from analytics.alerts.models import AlertRule, Transition
from analytics.alerts.rules import build_rule
from analytics.serving.models import ScrapeTarget
from ingest.scrape_targets import scrape_due_targets
from tests.analytics.alerts.scenarios import T0
from tests.loopback import Loopback, loopback
from tests.vllm_text import EngineState, v1_text

pytestmark = pytest.mark.django_db
TICK = timedelta(seconds=15)  # FLEETSCOPE_SCRAPE_SECONDS, the test settings' default


@pytest.fixture(autouse=True)
def own_spool(tmp_path: Path, settings: Any) -> None:
    """A spool of this test's own (under the data dir): scrapes the last ticks spooled
    and never loaded must not reach another test's."""
    settings.DATA_DIR = tmp_path / "data"


def _target(server: Loopback) -> None:
    server.serve_text("/metrics", v1_text({"0": EngineState(0.5)}))
    target = ScrapeTarget.objects.create(name="gpu-ok", url=server.url("/metrics"))
    ScrapeTarget.objects.filter(pk=target.pk).update(created_at=T0 - timedelta(minutes=1))


def _ticks(count: int, before: Callable[[int, datetime], None]) -> None:
    """`count` beat ticks from T0, 15 s apart, each after `before(k, its time)`."""
    for k in range(count):
        now = T0 + k * TICK
        before(k, now)
        scrape_due_targets(now)


def test_a_healthy_target_never_leaves_ok_though_its_scrapes_land_a_minute_late(
    lake: Path,
) -> None:
    rule = build_rule("target_down", None, {}, {})
    ages: list[float] = []
    findings = []

    def look(k: int, now: datetime) -> None:
        # Just before the tick: the stored scrapes are as old as they get.
        at = now - timedelta(seconds=1)
        facts = Facts(at, at, rule.horizon())
        [finding] = rule.evaluate(facts, at)
        findings.append(finding)
        scrapes = facts.scrapes.get("gpu-ok")
        if scrapes is not None:
            ages.append(at.timestamp() - float(scrapes.times[-1]))

    with loopback() as server:
        _target(server)
        _ticks(80, look)  # 20 minutes
    assert not [f for f in findings if f.active]
    # The spool is loaded once its oldest scrape is 60 s old, seen on a tick: every 75 s
    # (T0+60, T0+135, ...). Just before a load the newest stored scrape is 74 s old, past
    # the 60 s the rule used to allow and within its 60 s + 75 s commit lag.
    assert max(ages) == 74.0


def test_a_target_that_fails_and_recovers_shows_both_changes_in_the_history(
    lake: Path, client: Client, user: object
) -> None:
    AlertRule.objects.create(name="down", kind="target_down", repeat_seconds=0)

    def serve_and_evaluate(k: int, now: datetime) -> None:
        if k:
            outcome = engine.evaluate_rules(now - TICK)  # after the previous tick
            assert outcome.errors == []
        # Refused for ticks 20-27 (5:00-6:45): a 500 is a failed scrape.
        status = 500 if 20 <= k <= 27 else 200
        server.serve_text("/metrics", v1_text({"0": EngineState(0.5)}), status=status)

    with loopback() as server:
        _target(server)
        _ticks(61, serve_and_evaluate)  # evaluated after ticks 0-59
    # Loads at ticks 4, 9, ..., 5k + 4: the one at 24 (6:00) stores the failures of 20-24,
    # the one at 29 (7:15) the last failures and the recovery at 28 and 29.
    changes = [(t.from_state, t.to_state, t.at - T0) for t in Transition.objects.order_by("at")]
    assert changes == [
        ("ok", "firing", timedelta(minutes=6)),
        ("firing", "resolved", timedelta(minutes=7, seconds=15)),
    ]
    client.login(username="alice", password="correct-horse-battery")
    history = client.get("/alerts/").content.decode().split('id="history"', 1)[1]
    rows = history.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert rows.count("<tr>") == 2
    assert '"badge good">resolved</span>' in rows and '"badge bad">firing</span>' in rows
