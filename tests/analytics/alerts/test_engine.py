"""The state machine over real scenarios: exactly one firing and one resolved notification
per incident, none for non-incidents, every change recorded with its evaluation."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from analytics.alerts import engine, queries
from analytics.alerts.models import (
    AlertRule,
    AlertState,
    Channel,
    ChannelKind,
    Evaluation,
    Notification,
    NotificationStatus,
    Silence,
    Transition,
)
from analytics.alerts.rules import Finding
from lib.access import Seen
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.scenarios import T0, minutes

pytestmark = pytest.mark.django_db


def _rule(name: str, kind: str, **fields: Any) -> AlertRule:
    channel, _ = Channel.objects.get_or_create(
        name="hook", defaults={"kind": ChannelKind.WEBHOOK, "target": "http://127.0.0.1:9/"}
    )
    rule = AlertRule.objects.create(name=name, kind=kind, repeat_seconds=0, **fields)
    rule.channels.add(channel)
    return rule


def _run(start: datetime, end: datetime) -> None:
    for at in minutes(start, end):
        outcome = engine.evaluate_rules(at)
        assert outcome.errors == []


def _sent(subject: str | None = None) -> Counter[str]:
    rows = Notification.objects.all()
    if subject:
        rows = rows.filter(alert__subject=subject)
    return Counter(rows.values_list("kind", flat=True))


def test_a_stall_fires_in_a_fast_fleet_and_the_same_gap_is_normal_in_a_slow_one(
    lake: Path,
) -> None:
    # Fast: a commit every 10 s; slow: every 8 min. Both go 12 minutes without a commit
    # from 2:00 while their agents keep working.
    scenarios.load_fleet(
        "fast", commit_every_s=10, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=12)
    )
    scenarios.load_fleet(
        "slow", commit_every_s=480, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=12)
    )
    _rule("stall", "commit_stall", params={"factor": 5, "floor": "5m"})
    # The slow run's first minutes (one commit, then 8 quiet minutes) are no stall: with
    # fewer than 3 commits there is no pace to judge against.
    _run(T0, T0 + timedelta(minutes=20))
    assert _sent() == {}
    _run(T0 + timedelta(minutes=110), T0 + timedelta(minutes=150))

    assert _sent("fast") == {"firing": 1, "resolved": 1}
    assert _sent("slow") == {}
    fired = Transition.objects.get(alert__subject="fast", to_state="firing")
    # The last commit before the gap was at 1:59:50; the floor (5 min) beats 5 x 10 s.
    assert fired.at == T0 + timedelta(minutes=125)
    assert fired.evaluation is not None and fired.evaluation.at == fired.at
    resolved = Transition.objects.get(alert__subject="fast", to_state="resolved")
    assert resolved.at == T0 + timedelta(minutes=132)


def test_a_fixed_stall_threshold_fires_in_both_fleets(lake: Path) -> None:
    for run, every in (("fast", 10), ("slow", 480)):
        scenarios.load_fleet(
            run, commit_every_s=every, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=20)
        )
    _rule("fixed", "commit_stall", params={"min_gap": "10m"})
    _run(T0 + timedelta(minutes=115), T0 + timedelta(minutes=145))
    assert _sent("fast") == {"firing": 1, "resolved": 1}
    assert _sent("slow") == {"firing": 1, "resolved": 1}


def test_a_preemption_burst_after_a_restart_fires_once_and_the_reset_does_not(
    lake: Path,
) -> None:
    scenarios.load_preemption_burst_after_restart()
    _rule("preempting", "preemption_rate", threshold=1.0, params={"window": "1m"})
    _rule("down", "target_down", for_seconds=120)
    _run(T0 + timedelta(minutes=5), T0 + timedelta(minutes=59))

    assert _sent("gpu-burst") == {"firing": 1, "resolved": 1}
    firing = Notification.objects.get(kind="firing")
    assert firing.alert.rule.name == "preempting"
    assert firing.payload["value"] == pytest.approx(160 / 60)
    # The 30-second restart never stayed down for the rule's 2 minutes.
    assert Transition.objects.filter(alert__rule__name="down", to_state="pending").count() == 1
    assert not Transition.objects.filter(alert__rule__name="down", to_state="firing").exists()


def test_a_flapping_kv_level_fires_once_for_its_one_sustained_stretch(lake: Path) -> None:
    scenarios.load_flapping_kv()
    _rule("kv", "kv_usage", threshold=0.95, for_seconds=300)
    _run(T0 + timedelta(minutes=1), T0 + timedelta(minutes=79))

    assert _sent("gpu-flap") == {"firing": 1, "resolved": 1}
    fired = Transition.objects.get(to_state="firing")
    # Above from minute 28 (the flapping's last high stretch ran into the sustained one).
    assert fired.at == T0 + timedelta(minutes=33)
    resolved = Transition.objects.get(to_state="resolved")
    assert resolved.at == T0 + timedelta(minutes=42)
    # Later high stretches (2 min each) went pending and back to ok, quietly.
    assert Transition.objects.filter(from_state="pending", to_state="ok").count() > 3


def test_a_level_flapping_faster_than_a_minute_fires_on_its_minutes_mean(lake: Path) -> None:
    # 0.97 / 0.86 scrape by scrape: every minute's mean is (2 x 0.97 + 2 x 0.86) / 4 = 0.915.
    scenarios.load_fast_flapping_kv()
    _rule("kv", "kv_usage", threshold=0.9, for_seconds=300)
    # At the last second of each minute, as the preview does: each minute is whole.
    _run(T0 + timedelta(seconds=59), T0 + timedelta(minutes=43, seconds=59))
    assert _sent() == {"firing": 1, "resolved": 1}
    # Above from minute 0: pending at 0:59, firing at 5:59 (359 s >= 300 s). The last
    # scrape is at 39:45; minute 39 stands in while within the commit lag (75 s) and a
    # minute of now, so the alert resolves at 42:59 (41:44 is past minute 40's start).
    assert [(t.to_state, t.at - T0) for t in Transition.objects.order_by("at", "id")] == [
        ("pending", timedelta(seconds=59)),
        ("firing", timedelta(minutes=5, seconds=59)),
        ("resolved", timedelta(minutes=42, seconds=59)),
    ]


def test_two_workers_evaluating_the_same_minute_notify_once(lake: Path) -> None:
    scenarios.load_flapping_kv()
    _rule("kv", "kv_usage", threshold=0.95)
    at = T0 + timedelta(minutes=31)
    # Both read the state before either writes: the second change is refused.
    stale = list(AlertState.objects.all())
    engine.evaluate_rules(at)
    engine.evaluate_rules(at)
    assert stale == []
    assert _sent() == {"firing": 1}
    assert Evaluation.objects.count() == 2


def test_a_change_claimed_by_another_worker_is_skipped(lake: Path) -> None:
    rule = _rule("kv", "kv_usage", threshold=0.95)
    state = AlertState.objects.create(
        rule=rule, subject="gpu", state="pending", since=T0, evaluated_at=T0, active_since=T0
    )
    AlertState.objects.filter(pk=state.pk).update(version=7)  # someone else moved it on
    evaluation = Evaluation.objects.create(at=T0)
    evaluator = engine._Evaluator(
        T0 + timedelta(minutes=5), evaluation, engine.EvaluationOutcome(T0)
    )
    evaluator.apply(rule, state, Finding("gpu", True, 0.99, "high", since=T0))
    assert Transition.objects.count() == 0
    assert _sent() == {}


def test_reminders_repeat_while_firing_and_stop_when_resolved(lake: Path) -> None:
    scenarios.load_flapping_kv()
    rule = _rule("kv", "kv_usage", threshold=0.95)
    rule.repeat_seconds = 240
    rule.save()
    _run(T0 + timedelta(minutes=30), T0 + timedelta(minutes=43))
    # Fires at 30 (the streak began at 28 and `for` is 0), reminds at 34 and 38, resolves at 42.
    assert _sent() == {"firing": 1, "reminder": 2, "resolved": 1}
    reminder = Notification.objects.filter(kind="reminder").first()
    assert reminder is not None and reminder.payload["reminder"] is True


def test_a_silence_stores_notifications_without_sending_them(lake: Path) -> None:
    scenarios.load_flapping_kv()
    rule = _rule("kv", "kv_usage", threshold=0.95, for_seconds=300)
    Silence.objects.create(
        rule=rule, subject="gpu-*", ends_at=datetime.now(UTC) + timedelta(hours=1)
    )
    _run(T0 + timedelta(minutes=30), T0 + timedelta(minutes=45))
    statuses = Counter(Notification.objects.values_list("status", flat=True))
    assert statuses == {NotificationStatus.SILENCED: 2}


def test_evaluating_as_of_a_past_time_sees_only_data_before_it(lake: Path) -> None:
    scenarios.load_fleet(
        "fast", commit_every_s=10, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=12)
    )
    _rule("stall", "commit_stall", params={"factor": 5, "floor": "5m"})
    # At 2:06 the gap is 6 min 10 s long: a stall, though commits resume (later) at 2:12.
    outcome = engine.evaluate_rules(T0 + timedelta(minutes=126))
    assert outcome.transitions == 1
    assert AlertState.objects.get().state == "firing"


def test_quiet_evaluations_older_than_a_week_are_pruned_and_changes_keep_theirs(
    lake: Path,
) -> None:
    scenarios.load_flapping_kv()
    _rule("kv", "kv_usage", threshold=0.95)
    engine.evaluate_rules(T0 + timedelta(minutes=20))  # nothing changes
    engine.evaluate_rules(T0 + timedelta(minutes=31))  # fires
    Evaluation.objects.update(started_at=datetime.now(UTC) - timedelta(days=8))
    engine.evaluate_rules(T0 + timedelta(minutes=32))  # recent
    assert engine.prune_evaluations() == 1
    assert Evaluation.objects.count() == 2
    assert Transition.objects.get(to_state="firing").evaluation is not None


def test_a_disabled_rules_alerts_are_hidden_until_it_is_enabled_again(lake: Path) -> None:
    scenarios.load_flapping_kv()
    rule = _rule("kv", "kv_usage", threshold=0.95)
    engine.evaluate_rules(T0 + timedelta(minutes=31))
    assert [s.subject for s in queries.alert_states("firing", seen=Seen.all())] == ["gpu-flap"]
    AlertRule.objects.filter(pk=rule.pk).update(enabled=False)
    assert list(queries.alert_states(seen=Seen.all())) == []
    engine.evaluate_rules(T0 + timedelta(minutes=50))  # not evaluated: nothing resolves
    AlertRule.objects.filter(pk=rule.pk).update(enabled=True)
    assert [s.state for s in queries.alert_states(seen=Seen.all())] == ["firing"]


def test_an_evaluation_as_of_an_earlier_time_leaves_newer_alerts_alone(lake: Path) -> None:
    scenarios.load_flapping_kv()
    _rule("kv", "kv_usage", threshold=0.95)
    engine.evaluate_rules(T0 + timedelta(minutes=35))  # firing
    engine.evaluate_rules(T0 + timedelta(minutes=20))  # a backfill of an earlier minute
    state = AlertState.objects.get()
    assert (state.state, state.evaluated_at) == ("firing", T0 + timedelta(minutes=35))
    assert _sent() == {"firing": 1}
