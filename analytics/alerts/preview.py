"""What a rule would have done over a past range, for the rule editor and the preview
API: the state machine of analytics.alerts.state run in memory, once a minute by
default, and the incidents it went through (pending, fired, resolved, peak value), as a
Preview. It writes nothing: no states, transitions, evaluations or notifications. It
looks at what `seen` may see (the rule's team's, as analytics.alerts.engine's rules do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from analytics.alerts.facts import MINUTE, Facts, epoch, floor_minute
from analytics.alerts.models import AlertStateName
from analytics.alerts.rules import Finding, Rule
from analytics.alerts.state import FIRING, OK, PENDING, RESOLVED, next_states
from lib.access import Seen


@dataclass
class Incident:
    """One stretch a subject fired (and was pending before, when `for` asked it to wait)."""

    subject: str
    pending_at: datetime | None  # None: it fired at once
    fired_at: datetime | None  # set on every incident a Preview lists
    resolved_at: datetime | None  # None: still firing at the end of the range
    peak: float | None
    summary: str  # as it read when the alert fired


@dataclass(frozen=True)
class Preview:
    """What a preview found: its first and last evaluation times (the range asked for
    when it had none to run), how many it ran, and the incidents in the order they fired."""

    start: datetime
    end: datetime
    evaluations: int
    incidents: list[Incident] = field(default_factory=list)


def preview(
    rule: Rule, start: datetime, end: datetime, *, seen: Seen, step_s: int = MINUTE
) -> Preview:
    """What `rule` would have done over [start, end] on what `seen` may see, evaluated
    every `step_s` (at the last second of each minute, so each minute's data is complete),
    without writing anything."""
    first = floor_minute(epoch(start)) + MINUTE - 1
    times = [datetime.fromtimestamp(t, tz=UTC) for t in range(first, int(epoch(end)) + 1, step_s)]
    if not times:
        return Preview(start, end, 0)
    facts = Facts(times[0], times[-1], rule.horizon(), seen)
    current: dict[str, AlertStateName] = {}
    active_since: dict[str, datetime | None] = {}
    open_incidents: dict[str, Incident] = {}
    incidents: list[Incident] = []
    for at in times:
        findings = {f.subject: f for f in rule.evaluate(facts, at)}
        for subject in set(current) - set(findings):
            findings[subject] = Finding(subject, False, None, "no longer reported")
        for subject, finding in findings.items():
            state = current.get(subject, OK)
            step = next_states(state, finding, active_since.get(subject), rule.for_seconds, at)
            active_since[subject] = step.active_since
            incident = open_incidents.get(subject)
            if incident is not None and finding.value is not None:
                peak = incident.peak
                incident.peak = finding.value if peak is None else max(peak, finding.value)
            for to_state in step.states:
                if to_state == PENDING:
                    open_incidents[subject] = Incident(
                        subject, at, None, None, finding.value, finding.summary
                    )
                elif to_state == FIRING:
                    incident = open_incidents.setdefault(
                        subject, Incident(subject, None, None, None, finding.value, finding.summary)
                    )
                    incident.fired_at = at
                    incident.summary = finding.summary
                    incidents.append(incident)
                elif to_state == RESOLVED:
                    open_incidents.pop(subject).resolved_at = at
                elif to_state == OK:
                    open_incidents.pop(subject, None)
            if step.states:
                current[subject] = step.states[-1]
    return Preview(times[0], times[-1], len(times), incidents)
