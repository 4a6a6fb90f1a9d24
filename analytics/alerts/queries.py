"""What the alerts page and API list: the alerts that are not `ok`, and the recent state
changes. Reads of the alert tables only (Django ORM); nothing here reads the warehouse
or writes.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from analytics.alerts.models import AlertRule, AlertState, Transition
from analytics.alerts.state import FIRING, OK, PENDING, RESOLVED


def alert_states(state: str | None = None) -> Any:
    """Alerts of enabled rules that are pending, firing or resolved (every state but `ok`),
    newest first; `state` picks one. A disabled rule's alerts stay as they were, hidden,
    and carry on from there if it is enabled again."""
    rows = AlertState.objects.select_related("rule").filter(rule__enabled=True).exclude(state=OK)
    if state:
        rows = rows.filter(state=state)
    return rows.order_by("-since")


def recent_transitions(limit: int = 100, rule: AlertRule | None = None) -> Any:
    rows = Transition.objects.select_related("alert__rule", "evaluation").filter(
        Q(to_state=FIRING) | Q(to_state=RESOLVED) | Q(to_state=PENDING)
    )
    if rule is not None:
        rows = rows.filter(alert__rule=rule)
    return rows.order_by("-at", "-id")[:limit]
