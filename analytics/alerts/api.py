"""Alerting endpoints of the JSON API (docs/api.md): alerts, channels, rules
(with a preview of what a rule would have fired on), silences. Handlers take their
parameters as Query schemas (the preview's window as lib.window's WindowQuery) and answer
with Out schemas; the rows come from analytics.alerts.queries and analytics.alerts.preview,
rules are analytics.alerts.rules, the state machine analytics.alerts.engine.

Each handler lists, shows and changes only what the user's teams own
(analytics.alerts.ownership; another team's rule or channel is a 404, as an unknown one),
previews watch only the rule's team's data, and channel answers never carry a secret
(`signed` says whether there is one)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Query, Router, Schema

from analytics.access.visibility import seen_for_team
from analytics.alerts import ownership
from analytics.alerts.models import (
    AlertRule,
    AlertStateName,
    Channel,
    Silence,
    channel_target_problem,
)
from analytics.alerts.preview import Incident, Preview, preview
from analytics.alerts.queries import Alert, alert_states
from analytics.alerts.rules import RuleError, build_rule
from lib.access import seen_of
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
    return [alert_out(a) for a in alert_states(params.state, seen=seen_of(request))]


class ChannelIn(Schema):
    name: str = Field(min_length=1, max_length=100)
    kind: str
    target: str = Field(min_length=1, max_length=500)
    secret: str = Field("", max_length=200)
    team: str | None = None  # a team name; default: your only team (all-teams users: none)


class IdOut(Schema):
    id: int


class ChannelOut(Schema):
    id: int
    name: str
    kind: str
    target: str
    signed: bool
    enabled: bool
    team: str | None
    failing_since: str | None
    last_error: str


def check_channel(kind: str, target: str) -> None:
    """A channel's target must suit its kind: an http(s) URL to a public address (unless
    FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS) for webhooks, an address for e-mail."""
    problem = channel_target_problem(kind, target)
    if problem:
        raise ParameterError(problem)


@channels_router.post("", response=IdOut, url_name="channels_create")
def create_channel(request: HttpRequest, body: ChannelIn) -> IdOut:
    """Add a channel: `slack` (incoming webhook URL), `webhook` (JSON POST, signed with
    `secret` when given) or `email` (an address)."""
    check_channel(body.kind, body.target)
    team = ownership.team_for_new(seen_of(request), body.team)
    try:
        with transaction.atomic():
            channel = Channel.objects.create(
                name=body.name, kind=body.kind, target=body.target, secret=body.secret, team=team
            )
    except IntegrityError:
        raise ParameterError(f"a channel named {body.name!r} exists") from None
    return IdOut(id=channel.pk)


def channel_out(c: Channel) -> ChannelOut:
    return ChannelOut(
        id=c.pk,
        name=c.name,
        kind=c.kind,
        target=c.target,
        signed=bool(c.secret),
        enabled=c.enabled,
        team=c.team.name if c.team else None,
        failing_since=format_time(c.failing_since),
        last_error=c.last_error,
    )


@channels_router.get("", response=list[ChannelOut], url_name="channels")
def list_channels(request: HttpRequest) -> list[ChannelOut]:
    """The channels of your teams (all-teams users: every channel)."""
    channels = ownership.visible_channels(seen_of(request)).select_related("team")
    return [channel_out(c) for c in channels]


@channels_router.get("/{int:channel_id}", response=ChannelOut, url_name="channel")
def get_channel(request: HttpRequest, channel_id: int) -> ChannelOut:
    return channel_out(ownership.channel_of(seen_of(request), channel_id))


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
    team: str | None = None  # a team name; default: your only team (all-teams users: none)


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
    team: str | None


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
    seen = seen_of(request)
    team = ownership.team_for_new(seen, body.team)
    channels = list(ownership.visible_channels(seen).filter(pk__in=body.channels))
    missing = sorted(set(body.channels) - {c.pk for c in channels})
    if missing:
        raise NotFoundError(f"unknown channel ids {missing}")
    problem = ownership.channel_problem(seen, team, channels)
    if problem:
        raise ParameterError(problem)
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
                team=team,
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
        team=rule.team.name if rule.team else None,
    )


@rules_router.get("", response=list[RuleOut], url_name="alert_rules")
def list_rules(request: HttpRequest) -> list[RuleOut]:
    """The rules of your teams (all-teams users: every rule)."""
    rules = ownership.visible_rules(seen_of(request)).select_related("team")
    return [rule_out(r) for r in rules.prefetch_related("channels")]


@rules_router.get("/{int:rule_id}", response=RuleOut, url_name="alert_rule")
def get_rule(request: HttpRequest, rule_id: int) -> RuleOut:
    return rule_out(ownership.rule_of(seen_of(request), rule_id))


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
    scheduler would (so `bucket` is not used), on its `team`'s data."""
    for_seconds, _ = validated_rule(body)
    team = ownership.team_for_new(seen_of(request), body.team)
    rule = build_rule(body.kind, body.threshold, body.scope, body.params, for_seconds)
    found = preview(rule, *preview_range(window, params.hours), seen=seen_for_team(team))
    return preview_out(found)


@rules_router.get("/{rule_id}/preview", response=PreviewOut, url_name="alert_rule_preview")
def preview_saved_rule(
    request: HttpRequest, rule_id: int, window: Query[WindowQuery], params: Query[PreviewIn]
) -> PreviewOut:
    """What a saved rule would have fired on; the range as POST /api/alert-rules/preview
    takes it."""
    rule = ownership.rule_of(seen_of(request), rule_id)
    try:
        compiled = build_rule(rule.kind, rule.threshold, rule.scope, rule.params, rule.for_seconds)
    except RuleError as exc:
        raise ParameterError(str(exc)) from None
    range_ = preview_range(window, params.hours)
    return preview_out(preview(compiled, *range_, seen=seen_for_team(rule.team)))


class SilenceIn(Schema):
    rule: int | None = None  # a rule id; default every rule
    subject: str = Field("", max_length=300)  # a subject or shell pattern; default every one
    duration: str = "1h"
    comment: str = Field("", max_length=500)


@silences_router.post("", response=IdOut, url_name="silences_create")
def create_silence(request: HttpRequest, body: SilenceIn) -> IdOut:
    """Hold back notifications of matching alerts for `duration` (states still change).
    A silence of every rule (no `rule`) needs the all-teams flag."""
    seen = seen_of(request)
    rule = ownership.rule_of(seen, body.rule) if body.rule is not None else None
    ownership.silence_rule_check(seen, rule)
    length = parse_duration(body.duration, name="duration")
    silence = Silence.objects.create(
        rule=rule,
        subject=body.subject,
        ends_at=datetime.now(UTC) + length,
        comment=body.comment,
        created_by=request.user if request.user.is_authenticated else None,
    )
    return IdOut(id=silence.pk)


class SilenceOut(Schema):
    id: int
    rule: int | None
    subject: str
    starts_at: str
    ends_at: str
    comment: str


@silences_router.get("", response=list[SilenceOut], url_name="silences")
def list_silences(request: HttpRequest) -> list[SilenceOut]:
    """Active silences of your teams' rules (all-teams users: also those of every rule)."""
    now = timezone.now()
    active = ownership.visible_silences(seen_of(request)).filter(
        starts_at__lte=now, ends_at__gt=now
    )
    return [
        SilenceOut(
            id=s.pk,
            rule=s.rule_id,
            subject=s.subject,
            starts_at=format_time(s.starts_at) or "",
            ends_at=format_time(s.ends_at) or "",
            comment=s.comment,
        )
        for s in active
    ]
