"""The alert state machine as a pure function: where one (rule, subject) goes, ok ->
pending -> firing -> resolved, given a rule's finding at a time and its `for`. No I/O:
analytics.alerts.engine records each step and queues its notifications, and
analytics.alerts.preview replays the same steps in memory.

- A condition that holds goes to `pending`, and to `firing` once it has held for the
  rule's `for` (measured from when the data says it began, so a backfill with `--at`
  agrees with live evaluation); with `for` = 0 it fires at once.
- A pending condition that stops holding goes back to `ok` quietly; a firing one goes to
  `resolved`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from analytics.alerts.models import AlertStateName
from analytics.alerts.rules import Finding

OK, PENDING, FIRING, RESOLVED = (
    AlertStateName.OK,
    AlertStateName.PENDING,
    AlertStateName.FIRING,
    AlertStateName.RESOLVED,
)


@dataclass
class Step:
    """What one finding does to one state: the states passed through, in order."""

    states: list[AlertStateName]
    active_since: datetime | None


def next_states(
    current: AlertStateName,
    finding: Finding,
    active_since: datetime | None,
    for_s: int,
    at: datetime,
) -> Step:
    """The pure state machine (no I/O): where `current` goes given `finding` at `at`."""
    if not finding.active:
        if current == FIRING:
            return Step([RESOLVED], None)
        if current == PENDING:
            return Step([OK], None)
        return Step([], None)
    since = finding.since or (active_since if current in (PENDING, FIRING) else None) or at
    since = min(since, at)
    if current == FIRING:
        return Step([], since)
    due = (at - since).total_seconds() >= for_s
    if current == PENDING:
        return Step([FIRING] if due else [], since)
    if for_s == 0:
        return Step([FIRING], since)
    return Step([PENDING, FIRING] if due else [PENDING], since)
