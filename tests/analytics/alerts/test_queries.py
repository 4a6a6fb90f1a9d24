"""What the alerts page and API list, as typed rows: the alerts that are not `ok`
(Alert) and the recent state changes (Change)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analytics.alerts.models import AlertRule, AlertState, AlertStateName, Evaluation, Transition
from analytics.alerts.queries import Alert, Change, alert_states, recent_transitions
from lib.access import Seen

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 14, 8, 0, tzinfo=UTC)


def _state(rule: AlertRule, subject: str, state: str, since: datetime) -> AlertState:
    return AlertState.objects.create(
        rule=rule,
        subject=subject,
        state=state,
        since=since,
        value=0.97,
        summary=f"{subject} is {state}",
        evaluated_at=T0 + timedelta(minutes=30),
    )


def test_alerts_are_listed_newest_first_as_rows_without_the_ok_ones() -> None:
    rule = AlertRule.objects.create(name="kv high", kind="kv_usage", threshold=0.95)
    _state(rule, "gpu-1", "firing", T0)
    _state(rule, "gpu-2", "pending", T0 + timedelta(minutes=5))
    _state(rule, "gpu-3", "ok", T0 + timedelta(minutes=9))

    alerts = alert_states(seen=Seen.all())

    assert [a.subject for a in alerts] == ["gpu-2", "gpu-1"]
    assert alerts[1] == Alert(
        id=alerts[1].id,
        rule_id=rule.pk,
        rule="kv high",
        kind="kv_usage",
        kind_label="KV-cache usage",
        state=AlertStateName.FIRING,
        subject="gpu-1",
        since=T0,
        value=0.97,
        summary="gpu-1 is firing",
        evaluated_at=T0 + timedelta(minutes=30),
    )
    assert [a.subject for a in alert_states("firing", seen=Seen.all())] == ["gpu-1"]


def test_changes_are_listed_newest_first_with_the_evaluation_that_made_them() -> None:
    rule = AlertRule.objects.create(name="kv high", kind="kv_usage", threshold=0.95)
    alert = _state(rule, "gpu-1", "firing", T0)
    evaluation = Evaluation.objects.create(at=T0, started_at=T0 + timedelta(hours=1))
    Transition.objects.create(
        alert=alert, evaluation=evaluation, from_state="ok", to_state="pending", at=T0
    )
    Transition.objects.create(
        alert=alert, from_state="pending", to_state="firing", at=T0 + timedelta(minutes=5)
    )
    Transition.objects.create(
        alert=alert, from_state="pending", to_state="ok", at=T0 + timedelta(minutes=9)
    )

    changes = recent_transitions(seen=Seen.all())

    assert changes == [
        Change(
            at=T0 + timedelta(minutes=5),
            rule_id=rule.pk,
            rule="kv high",
            subject="gpu-1",
            from_state=AlertStateName.PENDING,
            to_state=AlertStateName.FIRING,
            summary="",
            evaluation_started_at=None,
        ),
        Change(
            at=T0,
            rule_id=rule.pk,
            rule="kv high",
            subject="gpu-1",
            from_state=AlertStateName.OK,
            to_state=AlertStateName.PENDING,
            summary="",
            evaluation_started_at=T0 + timedelta(hours=1),
        ),
    ]
    assert [c.at for c in recent_transitions(limit=1, seen=Seen.all())] == [
        T0 + timedelta(minutes=5)
    ]
    other = AlertRule.objects.create(name="other", kind="target_down")
    assert recent_transitions(rule=other, seen=Seen.all()) == []
