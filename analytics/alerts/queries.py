"""What the alerts page and API list: the alerts that are not `ok`, and the recent state
changes, as typed rows (Alert, Change), of the rules a Seen sees (their team's:
analytics.alerts.ownership). Reads of the alert tables only (Django ORM); nothing here
reads the warehouse or writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from analytics.alerts.models import AlertRule, AlertState, AlertStateName, Transition
from analytics.alerts.ownership import owned
from analytics.alerts.state import FIRING, OK, PENDING, RESOLVED
from lib.access import Seen


@dataclass(frozen=True)
class Alert:
    """One (rule, subject) that is pending, firing or resolved."""

    id: int
    rule_id: int
    rule: str  # the rule's name
    kind: str  # a RuleKind value
    kind_label: str  # the kind as the page names it: "KV-cache usage"
    state: AlertStateName
    subject: str
    since: datetime  # when the current state began (data time)
    value: float | None
    summary: str
    evaluated_at: datetime  # data time of the last evaluation


@dataclass(frozen=True)
class Change:
    """One state change of one alert."""

    at: datetime  # data time of the change
    rule_id: int
    rule: str  # the rule's name
    subject: str
    from_state: AlertStateName
    to_state: AlertStateName
    summary: str
    evaluation_started_at: datetime | None  # wall clock; None: no evaluation recorded


def _alert(row: AlertState) -> Alert:
    return Alert(
        id=row.pk,
        rule_id=row.rule.pk,
        rule=row.rule.name,
        kind=row.rule.kind,
        kind_label=row.rule.get_kind_display(),
        state=AlertStateName(row.state),
        subject=row.subject,
        since=row.since,
        value=row.value,
        summary=row.summary,
        evaluated_at=row.evaluated_at,
    )


def _change(row: Transition) -> Change:
    return Change(
        at=row.at,
        rule_id=row.alert.rule.pk,
        rule=row.alert.rule.name,
        subject=row.alert.subject,
        from_state=AlertStateName(row.from_state),
        to_state=AlertStateName(row.to_state),
        summary=row.summary,
        evaluation_started_at=row.evaluation.started_at if row.evaluation else None,
    )


def alert_states(state: str | None = None, *, seen: Seen) -> list[Alert]:
    """Alerts of enabled rules `seen` sees that are pending, firing or resolved (every
    state but `ok`), newest first; `state` picks one. A disabled rule's alerts stay as they
    were, hidden, and carry on from there if it is enabled again."""
    rows = (
        AlertState.objects.select_related("rule")
        .filter(owned(seen, "rule__team"), rule__enabled=True)
        .exclude(state=OK)
    )
    if state:
        rows = rows.filter(state=state)
    return [_alert(row) for row in rows.order_by("-since")]


def recent_transitions(
    limit: int = 100, rule: AlertRule | None = None, *, seen: Seen
) -> list[Change]:
    """The last `limit` changes to pending, firing or resolved (of `rule`, or of every
    rule `seen` sees), newest first."""
    rows = Transition.objects.select_related("alert__rule", "evaluation").filter(
        Q(to_state=FIRING) | Q(to_state=RESOLVED) | Q(to_state=PENDING),
        owned(seen, "alert__rule__team"),
    )
    if rule is not None:
        rows = rows.filter(alert__rule=rule)
    return [_change(row) for row in rows.order_by("-at", "-id")[:limit]]
