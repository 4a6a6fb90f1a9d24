"""Alert evaluation: evaluate every enabled rule as of a time, move each (rule, subject)
through the state machine of analytics.alerts.state, record every change with the
evaluation that caused it, and queue notifications (one when an alert fires, one when it
resolves, reminders every `repeat_seconds` while it fires); analytics.alerts.delivery
sends them.

- A subject no longer reported (a run out of scope) stops holding: a pending alert goes
  back to `ok` quietly, a firing one resolves (and notifies).
- Two workers evaluating at once: each change is a conditional UPDATE on the state's
  `version` (or an INSERT guarded by the unique (rule, subject)); the loser skips, so a
  change, and its notifications, happen once. Reminders are claimed the same way on
  `notified_at`.
- Silences (wall-clock, matched by rule and subject pattern) store notifications as
  `silenced` instead of sending them; a resolve whose firing notice was silenced is
  silenced too.
- A rule of a team watches only what that team sees (`facts_for`: the warehouse data
  through analytics.access.visibility.seen_for_team), so its findings, states and
  notifications name only that team's runs, instances and spend; a rule of no team
  watches everything.

The same machine runs in memory, without writes, in analytics.alerts.preview; what the
pages list is read by analytics.alerts.queries.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from analytics.access.visibility import seen_for_team
from analytics.alerts.facts import Facts
from analytics.alerts.models import (
    AlertRule,
    AlertState,
    AlertStateName,
    Evaluation,
    Notification,
    NotificationKind,
    NotificationStatus,
    Silence,
    Transition,
)
from analytics.alerts.rules import Finding, Rule, RuleError, build_rule
from analytics.alerts.state import FIRING, OK, PENDING, RESOLVED, Step, next_states
from lib.durations import format_time

log = logging.getLogger(__name__)


@dataclass
class EvaluationOutcome:
    at: datetime
    rules: int = 0
    subjects: int = 0
    transitions: int = 0
    notifications: int = 0
    reminders: int = 0
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": format_time(self.at),
            "rules": self.rules,
            "subjects": self.subjects,
            "transitions": self.transitions,
            "notifications": self.notifications,
            "reminders": self.reminders,
            "errors": self.errors,
            "duration_ms": round(self.duration_ms, 1),
        }


def compile_rules(rules: Iterable[AlertRule]) -> tuple[list[tuple[AlertRule, Rule]], list[str]]:
    compiled, errors = [], []
    for rule in rules:
        try:
            built = build_rule(rule.kind, rule.threshold, rule.scope, rule.params, rule.for_seconds)
        except RuleError as exc:
            errors.append(f"{rule.name}: {exc}")
            continue
        compiled.append((rule, built))
    return compiled, errors


def facts_for(facts: Facts, rule: AlertRule, views: dict[int | None, Facts]) -> Facts:
    """What `rule` may look at: `facts` as its team sees them (one view per team)."""
    if rule.team_id not in views:
        views[rule.team_id] = facts.seen_by(seen_for_team(rule.team))
    return views[rule.team_id]


def horizon_of(rules: Iterable[Rule]) -> timedelta:
    return max((r.horizon() for r in rules), default=timedelta(hours=1))


def payload(rule: AlertRule, state: AlertState, kind: NotificationKind) -> dict[str, Any]:
    """What a webhook channel receives (docs/api.md)."""
    body: dict[str, Any] = {
        "rule": rule.name,
        "kind": rule.kind,
        "state": "resolved" if kind == NotificationKind.RESOLVED else "firing",
        "subject": state.subject,
        "summary": state.summary,
        "since": format_time(state.since),
        "value": state.value,
    }
    if kind == NotificationKind.REMINDER:
        body["reminder"] = True
    return body


def is_silenced(silences: list[Silence], rule_id: int, subject: str) -> bool:
    """Whether one of these (active) silences matches this rule and subject."""
    return any(
        (s.rule_id is None or s.rule_id == rule_id)
        and (not s.subject or fnmatch.fnmatchcase(subject, s.subject))
        for s in silences
    )


def _queue(
    rule: AlertRule,
    state: AlertState,
    transition: Transition | None,
    kind: NotificationKind,
    silences: list[Silence],
) -> int:
    silenced = is_silenced(silences, rule.pk, state.subject)
    made = 0
    for channel in rule.channels.all():
        status = NotificationStatus.SILENCED if silenced else NotificationStatus.PENDING
        if kind == NotificationKind.RESOLVED and not silenced:
            fired = (
                Notification.objects.filter(
                    alert=state, channel=channel, kind=NotificationKind.FIRING
                )
                .order_by("-id")
                .first()
            )
            if fired is not None and fired.status == NotificationStatus.SILENCED:
                status = NotificationStatus.SILENCED
        Notification.objects.create(
            alert=state,
            transition=transition,
            channel=channel,
            kind=kind.value,
            payload=payload(rule, state, kind),
            status=status,
        )
        made += status == NotificationStatus.PENDING
    return made


class _Evaluator:
    def __init__(self, at: datetime, evaluation: Evaluation, outcome: EvaluationOutcome) -> None:
        self.at = at
        self.evaluation = evaluation
        self.outcome = outcome
        now = timezone.now()
        self.silences = list(Silence.objects.filter(starts_at__lte=now, ends_at__gt=now))
        self.refreshed: list[AlertState] = []

    def apply(self, rule: AlertRule, state: AlertState | None, finding: Finding) -> None:
        if state is not None and state.evaluated_at > self.at:
            return  # evaluated as of a later time already: never move an alert back in time
        current = AlertStateName(state.state) if state else OK
        step = next_states(
            current,
            finding,
            state.active_since if state else None,
            rule.for_seconds,
            self.at,
        )
        if not step.states:
            if state is not None and finding.active:
                # Same state: keep the figures fresh (written in bulk by flush(); the
                # state itself is not touched, so no claim is needed).
                state.value, state.summary = finding.value, finding.summary
                state.evaluated_at, state.active_since = self.at, step.active_since
                self.refreshed.append(state)
            return
        try:
            with transaction.atomic():
                self._change(rule, state, current, finding, step)
        except IntegrityError:
            log.info("alert %s/%s changed by another worker", rule.name, finding.subject)

    def _change(
        self,
        rule: AlertRule,
        state: AlertState | None,
        current: AlertStateName,
        finding: Finding,
        step: Step,
    ) -> None:
        final = step.states[-1]
        fields = {
            "state": final,
            "since": self.at,
            "active_since": step.active_since,
            "value": finding.value,
            "summary": finding.summary,
            "evaluated_at": self.at,
        }
        if final in (PENDING, FIRING):
            fields["since"] = step.active_since or self.at
        if final == FIRING:
            fields["notified_at"] = self.at
        if state is None:
            state = AlertState.objects.create(rule=rule, subject=finding.subject, **fields)
        else:
            claimed = AlertState.objects.filter(pk=state.pk, version=state.version).update(
                version=state.version + 1, **fields
            )
            if not claimed:
                return  # another worker made this change
            state.refresh_from_db()
        previous = current
        for to_state in step.states:
            transition = Transition.objects.create(
                alert=state,
                evaluation=self.evaluation,
                from_state=previous,
                to_state=to_state,
                at=self.at,
                value=finding.value,
                summary=finding.summary,
            )
            self.outcome.transitions += 1
            if to_state == FIRING:
                self.outcome.notifications += _queue(
                    rule, state, transition, NotificationKind.FIRING, self.silences
                )
            elif to_state == RESOLVED:
                self.outcome.notifications += _queue(
                    rule, state, transition, NotificationKind.RESOLVED, self.silences
                )
            previous = to_state

    def flush(self) -> None:
        """One executemany for every refreshed state (Django's bulk_update builds a CASE
        per row and field: ~2 ms a row)."""
        if not self.refreshed:
            return
        ops = connection.ops
        table = connection.ops.quote_name(AlertState._meta.db_table)
        connection.cursor().executemany(
            f"UPDATE {table} SET value = %s, summary = %s, evaluated_at = %s,"
            " active_since = %s WHERE id = %s",
            [
                (
                    s.value,
                    s.summary,
                    ops.adapt_datetimefield_value(s.evaluated_at),
                    ops.adapt_datetimefield_value(s.active_since),
                    s.pk,
                )
                for s in self.refreshed
            ],
        )
        self.refreshed = []

    def remind(self, rule: AlertRule, state: AlertState) -> None:
        if not rule.repeat_seconds or state.state != FIRING or state.notified_at is None:
            return
        if (self.at - state.notified_at).total_seconds() < rule.repeat_seconds:
            return
        with transaction.atomic():
            claimed = AlertState.objects.filter(pk=state.pk, notified_at=state.notified_at).update(
                notified_at=self.at
            )
            if claimed:
                state.refresh_from_db()
                self.outcome.reminders += _queue(
                    rule, state, None, NotificationKind.REMINDER, self.silences
                )


def evaluate_rules(
    at: datetime | None = None, rules: Iterable[AlertRule] | None = None
) -> EvaluationOutcome:
    """Evaluate every enabled rule (or `rules`) once as of `at` (default now)."""
    started = time.perf_counter()
    at = (at or timezone.now()).astimezone(UTC)
    chosen = list(
        rules
        if rules is not None
        else AlertRule.objects.filter(enabled=True)
        .select_related("team")
        .prefetch_related("channels")
    )
    outcome = EvaluationOutcome(at=at)
    compiled, outcome.errors = compile_rules(chosen)
    evaluation = Evaluation.objects.create(at=at, rules=len(chosen))
    facts = Facts(at, at, horizon_of(r for _, r in compiled))
    states: dict[tuple[int, str], AlertState] = {
        (s.rule_id, s.subject): s
        for s in AlertState.objects.filter(rule__in=[m for m, _ in compiled])
    }
    # Read and judge first (warehouse only), then write every change in one transaction:
    # with SQLite each autocommitted statement would wait for its own fsync.
    judged: list[tuple[AlertRule, list[Finding]]] = []
    views: dict[int | None, Facts] = {}
    for model, rule in compiled:
        try:
            judged.append((model, rule.evaluate(facts_for(facts, model, views), at)))
        except Exception as exc:  # one broken rule must not stop the others
            log.exception("rule %s failed", model.name)
            outcome.errors.append(f"{model.name}: {exc.__class__.__name__}: {exc}")
    evaluator = _Evaluator(at, evaluation, outcome)
    with transaction.atomic():
        for model, findings in judged:
            outcome.rules += 1
            seen = set()
            for finding in findings:
                seen.add(finding.subject)
                outcome.subjects += 1
                evaluator.apply(model, states.get((model.pk, finding.subject)), finding)
            for (rule_id, subject), state in states.items():
                if rule_id == model.pk and subject not in seen and state.state in (PENDING, FIRING):
                    gone = Finding(subject, False, state.value, f"{subject} is no longer reported")
                    evaluator.apply(model, state, gone)
        evaluator.flush()
        by_id = {model.pk: model for model, _ in judged}
        for state in AlertState.objects.filter(
            rule__in=list(by_id), state=FIRING, rule__repeat_seconds__gt=0
        ):
            evaluator.remind(by_id[state.rule_id], state)
    outcome.duration_ms = (time.perf_counter() - started) * 1000
    Evaluation.objects.filter(pk=evaluation.pk).update(
        rules=outcome.rules,
        subjects=outcome.subjects,
        transitions=outcome.transitions,
        errors=outcome.errors,
        duration_ms=outcome.duration_ms,
    )
    return outcome


KEEP_QUIET_EVALUATIONS = timedelta(days=7)


def prune_evaluations(now: datetime | None = None) -> int:
    """Delete evaluations older than a week that changed nothing (one a minute adds up);
    those behind a recorded change stay with it."""
    cutoff = (now or timezone.now()) - KEEP_QUIET_EVALUATIONS
    deleted, _ = Evaluation.objects.filter(started_at__lt=cutoff, changes__isnull=True).delete()
    return deleted
