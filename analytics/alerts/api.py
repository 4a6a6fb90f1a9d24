"""Alerting endpoints of the JSON API (docs/api.md): alerts, channels, rules
(with a preview of what a rule would have fired on), silences. Handlers take their
parameters as Query schemas (the preview's window as lib.window's WindowQuery) and answer
with Out schemas; the rows come from analytics.alerts.queries and analytics.alerts.preview,
rules are analytics.alerts.rules, the state machine analytics.alerts.engine."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, URLValidator
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from analytics.alerts.models import AlertRule, AlertStateName, Channel, ChannelKind, Silence
from analytics.alerts.preview import Incident, Preview, preview
from analytics.alerts.queries import Alert, alert_states
from analytics.alerts.rules import RuleError, build_rule
from lib.durations import format_time, parse_duration
from lib.errors import NotFoundError, ParameterError
from lib.window import TimeRange, WindowQuery

alerts_router = Router()
channels_router = Router()
rules_router = Router()
silences_router = Router()

PREVIEW_MAX = timedelta(days=7)


class AlertsIn(Schema):
    state: str | None = None  # pending, firing or resolved; default: every non-ok alert


class AlertOut(Schema):
    id: int
    rule: str
    kind: str
    state: str
    since: str
    summary: str
    subject: str
    value: float | None
    evaluated_at: str


def alert_out(alert: Alert) -> AlertOut:
    return AlertOut(
        id=alert.id,
        rule=alert.rule,
        kind=alert.kind,
        state=alert.state.value,
        since=format_time(alert.since) or "",
        summary=alert.summary,
        subject=alert.subject,
        value=alert.value,
        evaluated_at=format_time(alert.evaluated_at) or "",
    )


@alerts_router.get("", response=list[AlertOut], url_name="alerts")
def alerts(request: HttpRequest, params: Query[AlertsIn]) -> list[AlertOut]:
    """Alerts that are pending, firing or resolved (not `ok`), newest first."""
    if params.state and params.state not in AlertStateName.values:
        raise ParameterError(f"state must be one of {', '.join(AlertStateName.values)}")
    return [alert_out(a) for a in alert_states(params.state)]


class ChannelIn(Schema):
    name: str = Field(min_length=1, max_length=100)
    kind: str
    target: str = Field(min_length=1, max_length=500)
    secret: str = Field("", max_length=200)


class IdOut(Schema):
    id: int


class ChannelOut(Schema):
    id: int
    name: str
    kind: str
    target: str
    signed: bool
    enabled: bool
    failing_since: str | None
    last_error: str


def check_channel(kind: str, target: str) -> None:
    """A channel's target must suit its kind: a URL for webhooks, an address for e-mail."""
    if kind not in ChannelKind.values:
        raise ParameterError(f"kind must be one of {', '.join(ChannelKind.values)}")
    try:
        if kind == ChannelKind.EMAIL:
            EmailValidator()(target)
        else:
            URLValidator(schemes=["http", "https"])(target)
    except ValidationError:
        wanted = "an e-mail address" if kind == ChannelKind.EMAIL else "an http(s) URL"
        raise ParameterError(f"target must be {wanted}, got {target!r}") from None


@channels_router.post("", response=IdOut, url_name="channels_create")
def create_channel(request: HttpRequest, body: ChannelIn) -> IdOut:
    """Add a channel: `slack` (incoming webhook URL), `webhook` (JSON POST, signed with
    `secret` when given) or `email` (an address)."""
    check_channel(body.kind, body.target)
    try:
        with transaction.atomic():
            channel = Channel.objects.create(
                name=body.name, kind=body.kind, target=body.target, secret=body.secret
            )
    except IntegrityError:
        raise ParameterError(f"a channel named {body.name!r} exists") from None
    return IdOut(id=channel.pk)


@channels_router.get("", response=list[ChannelOut], url_name="channels")
def list_channels(request: HttpRequest) -> list[ChannelOut]:
    return [
        ChannelOut(
            id=c.pk,
            name=c.name,
            kind=c.kind,
            target=c.target,
            signed=bool(c.secret),
            enabled=c.enabled,
            failing_since=format_time(c.failing_since),
            last_error=c.last_error,
        )
        for c in Channel.objects.all()
    ]


class RuleIn(Schema):
    name: str = Field(min_length=1, max_length=200)
    kind: str
    scope: dict[str, Any] = {}
    threshold: float | None = None
    for_: str | float | None = Field(None, alias="for")  # a duration or seconds; default 0
    channels: list[int] = []
    params: dict[str, Any] = {}
    repeat: str | float | None = None  # reminders: a duration or seconds; 0 or "never": none
    enabled: bool = True


class RuleOut(Schema):
    id: int
    name: str
    kind: str
    scope: dict[str, Any]
    threshold: float | None
    for_seconds: int
    params: dict[str, Any]
    channels: list[int]
    repeat_seconds: int
    enabled: bool


_NEVER = re.compile(r"^\s*(0|never|none)\s*$", re.IGNORECASE)


def read_seconds(text: str | float | None, name: str, default: int) -> int:
    """A duration as the API takes it: `5m`, `1h`, or a number of seconds (0 or `never`
    for none)."""
    if text is None or text == "":
        return default
    if isinstance(text, int | float):
        if not 0 <= text < 10**9:
            raise ParameterError(f"{name} must be a duration like 5m or seconds, got {text!r}")
        return int(text)
    if _NEVER.match(text):
        return 0
    return int(parse_duration(text, name=name).total_seconds())


def validated_rule(body: RuleIn) -> tuple[int, int]:
    """(for_seconds, repeat_seconds) once the rule is known to make sense (422 if not)."""
    for_seconds = read_seconds(body.for_, "for", 0)
    repeat_seconds = read_seconds(body.repeat, "repeat", 4 * 3600)
    try:
        build_rule(body.kind, body.threshold, body.scope, body.params, for_seconds)
    except RuleError as exc:
        raise ParameterError(str(exc)) from None
    return for_seconds, repeat_seconds


@rules_router.post("", response=IdOut, url_name="alert_rules_create")
def create_rule(request: HttpRequest, body: RuleIn) -> IdOut:
    """Add a rule. Kinds: preemption_rate, kv_usage, commit_stall, commit_decay,
    error_drift, target_down, daily_spend; analytics/alerts/rules/__init__.py says what
    each kind's threshold and params mean."""
    for_seconds, repeat_seconds = validated_rule(body)
    channels = list(Channel.objects.filter(pk__in=body.channels))
    missing = sorted(set(body.channels) - {c.pk for c in channels})
    if missing:
        raise NotFoundError(f"unknown channel ids {missing}")
    try:
        with transaction.atomic():
            rule = AlertRule.objects.create(
                name=body.name,
                kind=body.kind,
                scope=body.scope,
                threshold=body.threshold,
                for_seconds=for_seconds,
                params=body.params,
                repeat_seconds=repeat_seconds,
                enabled=body.enabled,
                created_by=request.user if request.user.is_authenticated else None,
            )
            rule.channels.set(channels)
    except IntegrityError:
        raise ParameterError(f"a rule named {body.name!r} exists") from None
    return IdOut(id=rule.pk)


def rule_out(rule: AlertRule) -> RuleOut:
    return RuleOut(
        id=rule.pk,
        name=rule.name,
        kind=rule.kind,
        scope=rule.scope,
        threshold=rule.threshold,
        for_seconds=rule.for_seconds,
        params=rule.params,
        channels=[c.pk for c in rule.channels.all()],
        repeat_seconds=rule.repeat_seconds,
        enabled=rule.enabled,
    )


@rules_router.get("", response=list[RuleOut], url_name="alert_rules")
def list_rules(request: HttpRequest) -> list[RuleOut]:
    return [rule_out(r) for r in AlertRule.objects.prefetch_related("channels")]


class PreviewIn(Schema):
    """`?hours=`: how far back from `end` a preview reaches when no `start` is given."""

    hours: float = Field(24, gt=0, le=PREVIEW_MAX.total_seconds() / 3600)


class IncidentOut(Schema):
    subject: str
    pending_at: str | None
    fired_at: str | None
    resolved_at: str | None
    peak: float | None
    summary: str


class PreviewOut(Schema):
    start: str
    end: str
    evaluations: int
    incidents: list[IncidentOut]


def incident_out(incident: Incident) -> IncidentOut:
    return IncidentOut(
        subject=incident.subject,
        pending_at=format_time(incident.pending_at),
        fired_at=format_time(incident.fired_at),
        resolved_at=format_time(incident.resolved_at),
        peak=incident.peak,
        summary=incident.summary,
    )


def preview_out(found: Preview) -> PreviewOut:
    return PreviewOut(
        start=format_time(found.start) or "",
        end=format_time(found.end) or "",
        evaluations=found.evaluations,
        incidents=[incident_out(i) for i in found.incidents],
    )


def preview_range(window: WindowQuery, hours: float) -> tuple[datetime, datetime]:
    """[start, end] of a preview: `end` (default now), `start` (default `hours` before
    `end`), at most PREVIEW_MAX apart. `bucket` is not used: a preview evaluates once a
    minute, as the scheduler does."""
    asked = window.time_range()
    end = asked.end or datetime.now(UTC)
    start = asked.start or end - timedelta(hours=hours)
    TimeRange(start, end)  # refuses a start at or after the end
    if end - start > PREVIEW_MAX:
        raise ParameterError(f"a preview covers at most {PREVIEW_MAX.days} days")
    return start, end


@rules_router.post("/preview", response=PreviewOut, url_name="alert_rules_preview")
def preview_rule(
    request: HttpRequest, body: RuleIn, window: Query[WindowQuery], params: Query[PreviewIn]
) -> PreviewOut:
    """What this rule (not saved) would have fired on over the last `hours` (default 24)
    before `end` (default now), or from `start` to `end`, evaluated every minute as the
    scheduler would (so `bucket` is not used)."""
    for_seconds, _ = validated_rule(body)
    rule = build_rule(body.kind, body.threshold, body.scope, body.params, for_seconds)
    return preview_out(preview(rule, *preview_range(window, params.hours)))


@rules_router.get("/{rule_id}/preview", response=PreviewOut, url_name="alert_rule_preview")
def preview_saved_rule(
    request: HttpRequest, rule_id: int, window: Query[WindowQuery], params: Query[PreviewIn]
) -> PreviewOut:
    """What a saved rule would have fired on; the range as POST /api/alert-rules/preview
    takes it."""
    rule = AlertRule.objects.filter(pk=rule_id).first()
    if rule is None:
        raise NotFoundError(f"unknown rule {rule_id}")
    try:
        compiled = build_rule(rule.kind, rule.threshold, rule.scope, rule.params, rule.for_seconds)
    except RuleError as exc:
        raise ParameterError(str(exc)) from None
    return preview_out(preview(compiled, *preview_range(window, params.hours)))


class SilenceIn(Schema):
    rule: int | None = None  # a rule id; default every rule
    subject: str = Field("", max_length=300)  # a subject or shell pattern; default every one
    duration: str = "1h"
    comment: str = Field("", max_length=500)


@silences_router.post("", response=IdOut, url_name="silences_create")
def create_silence(request: HttpRequest, body: SilenceIn) -> IdOut:
    """Hold back notifications of matching alerts for `duration` (states still change)."""
    rule = None
    if body.rule is not None:
        rule = AlertRule.objects.filter(pk=body.rule).first()
        if rule is None:
            raise NotFoundError(f"unknown rule {body.rule}")
    length = parse_duration(body.duration, name="duration")
    silence = Silence.objects.create(
        rule=rule,
        subject=body.subject,
        ends_at=datetime.now(UTC) + length,
        comment=body.comment,
        created_by=request.user if request.user.is_authenticated else None,
    )
    return IdOut(id=silence.pk)
