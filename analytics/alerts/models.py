"""Django-side records of alerting: rules, channels, the state of each (rule, subject),
every evaluation and state change, every notification and every delivery attempt, and
silences.

A rule is evaluated over warehouse data as of a time (analytics.alerts.engine); each
subject it looks at (a run, an instance, a team, or "all") has at most one AlertState row,
created when it first leaves `ok`. Every state change is a Transition tied to the
Evaluation that caused it; a change to `firing` or `resolved` queues one Notification per
channel of the rule, and analytics.alerts.delivery sends them, storing each attempt.
Work is claimed with conditional UPDATEs (a `version` column on states, a `status` on
notifications) so two workers evaluating or sending at once never do it twice.

Rules and channels belong to a team (`team`; none: only all-teams users see them); states,
transitions, notifications and silences are their rule's (analytics.alerts.ownership).
A channel's target is checked here (`channel_target_problem`, also `Channel.clean`): an
e-mail address, or an http(s) URL to a public address unless
FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS allows private ones (lib.http checks again when sending).
"""

from __future__ import annotations

import secrets
from enum import StrEnum

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, MinValueValidator, URLValidator
from django.db import models
from django.utils import timezone

from lib import http


class RuleKind(models.TextChoices):
    PREEMPTION_RATE = "preemption_rate", "Preemption rate"
    KV_USAGE = "kv_usage", "KV-cache usage"
    COMMIT_STALL = "commit_stall", "Commit stall"
    COMMIT_DECAY = "commit_decay", "Commit-rate decay"
    ERROR_DRIFT = "error_drift", "Error-rate drift"
    TARGET_DOWN = "target_down", "Scrape target down"
    DAILY_SPEND = "daily_spend", "Daily spend"
    WAITING_CAPACITY = "waiting_capacity", "Requests waiting for KV capacity"
    SPEC_ACCEPTANCE = "spec_acceptance", "Speculative-decoding acceptance"
    SLO_ATTAINMENT = "slo_attainment", "SLO attainment"
    ENGINE_ASLEEP = "engine_asleep", "Engine asleep"
    CORRUPTED_REQUESTS = "corrupted_requests", "Corrupted requests"
    ADMISSION_REJECTIONS = "admission_rejections", "Admission rejections"


class AlertStateName(models.TextChoices):
    OK = "ok", "ok"
    PENDING = "pending", "pending"
    FIRING = "firing", "firing"
    RESOLVED = "resolved", "resolved"


class ChannelKind(models.TextChoices):
    SLACK = "slack", "Slack-compatible webhook"
    WEBHOOK = "webhook", "JSON webhook (signed)"
    EMAIL = "email", "e-mail"


class NotificationKind(StrEnum):
    FIRING = "firing"
    RESOLVED = "resolved"
    REMINDER = "reminder"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "waiting to be sent"
    SENDING = "sending", "being sent"
    SENT = "sent", "sent"
    FAILED = "failed", "failed for good"
    SILENCED = "silenced", "silenced"


def new_secret() -> str:
    return secrets.token_hex(32)


def channel_target_problem(kind: str, target: str) -> str | None:
    """Why `target` cannot be a `kind` channel's (one line), or None when it can."""
    if kind not in ChannelKind.values:
        return f"kind must be one of {', '.join(ChannelKind.values)}"
    if kind == ChannelKind.EMAIL:
        try:
            EmailValidator()(target)
        except ValidationError:
            return f"target must be an e-mail address, got {target!r}"
        return None
    try:
        http.check_public_url(target, allow_private=settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS)
        URLValidator(schemes=["http", "https"])(target)
    except http.InvalidURL as exc:
        return str(exc)
    except ValidationError:
        return f"target must be an http(s) URL, got {target!r}"
    return None


class Channel(models.Model):
    """Where notifications go: a Slack-compatible incoming webhook, a generic JSON webhook
    (signed with HMAC-SHA256 of the body when `secret` is set), or an e-mail address."""

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=ChannelKind.choices)
    target = models.CharField(max_length=500, help_text="a webhook URL or an e-mail address")
    secret = models.CharField(
        max_length=200,
        blank=True,
        help_text="webhook channels: the HMAC-SHA256 key receivers verify the body with",
    )
    enabled = models.BooleanField(default=True)
    team = models.ForeignKey(
        "analytics.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="channels",
        help_text="who sees and edits this channel (no team: only all-teams users)",
    )
    # Set when a notification was given up on (a permanent error or every retry failed);
    # cleared by the next successful delivery. Shown on the Alerts page.
    failing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def clean(self) -> None:
        problem = channel_target_problem(self.kind, self.target)
        if problem:
            raise ValidationError({"target": problem})


class AlertRule(models.Model):
    """One rule: a kind (analytics.alerts.rules has one class per kind), a scope, a
    threshold, how long the condition must hold (`for_seconds`) and kind-specific params."""

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=30, choices=RuleKind.choices)
    scope = models.JSONField(
        default=dict,
        blank=True,
        help_text='{} for all, or {"run": ...}, {"instance": ...}, {"team": ...}',
    )
    threshold = models.FloatField(
        null=True,
        blank=True,
        help_text="per second, a fraction, a factor, a slope or USD, by kind (see the kind)",
    )
    for_seconds = models.PositiveIntegerField(
        default=0, help_text="how long the condition must hold before the alert fires"
    )
    params = models.JSONField(default=dict, blank=True)
    channels = models.ManyToManyField(Channel, blank=True, related_name="rules")
    repeat_seconds = models.PositiveIntegerField(
        default=4 * 3600, help_text="remind while still firing this often (0: never)"
    )
    enabled = models.BooleanField(default=True)
    team = models.ForeignKey(
        "analytics.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="alert_rules",
        help_text="whose rule: it watches only that team's runs and instances (no team: all)",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Evaluation(models.Model):
    """One pass over every enabled rule, as of `at` (data time), with what it found."""

    at = models.DateTimeField(help_text="the time the rules were evaluated as of")
    started_at = models.DateTimeField(default=timezone.now)
    duration_ms = models.FloatField(default=0)
    rules = models.PositiveIntegerField(default=0)
    subjects = models.PositiveIntegerField(default=0)
    transitions = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True, help_text="rules that failed, and why")

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"evaluation as of {self.at:%Y-%m-%d %H:%M:%S}"


class AlertState(models.Model):
    """Where one rule stands for one subject. Absent means `ok`."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states")
    subject = models.CharField(max_length=300)
    state = models.CharField(
        max_length=20, choices=AlertStateName.choices, default=AlertStateName.OK
    )
    since = models.DateTimeField(help_text="when the current state began (data time)")
    active_since = models.DateTimeField(
        null=True, blank=True, help_text="when the condition began to hold, while it holds"
    )
    value = models.FloatField(null=True, blank=True)
    summary = models.TextField(blank=True)
    evaluated_at = models.DateTimeField(help_text="data time of the last evaluation")
    notified_at = models.DateTimeField(
        null=True, blank=True, help_text="data time of the last firing notice or reminder"
    )
    version = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["rule", "subject"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "subject"], name="one_state_per_rule_subject")
        ]
        indexes = [models.Index(fields=["state"])]

    def __str__(self) -> str:
        return f"{self.rule} / {self.subject}: {self.state}"


class Transition(models.Model):
    """One state change of one (rule, subject), and the evaluation that caused it."""

    alert = models.ForeignKey(AlertState, on_delete=models.CASCADE, related_name="transitions")
    evaluation = models.ForeignKey(
        Evaluation, null=True, on_delete=models.SET_NULL, related_name="changes"
    )
    from_state = models.CharField(max_length=20, choices=AlertStateName.choices)
    to_state = models.CharField(max_length=20, choices=AlertStateName.choices)
    at = models.DateTimeField(help_text="data time of the change")
    value = models.FloatField(null=True, blank=True)
    summary = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["-at"])]

    def __str__(self) -> str:
        return f"{self.alert}: {self.from_state} -> {self.to_state} at {self.at}"


class Notification(models.Model):
    """One message about one transition (or one reminder) to one channel."""

    alert = models.ForeignKey(AlertState, on_delete=models.CASCADE, related_name="notifications")
    transition = models.ForeignKey(
        Transition, null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=[(k.value, k.value) for k in NotificationKind])
    payload = models.JSONField(help_text="the webhook body; other channels format it")
    status = models.CharField(
        max_length=20, choices=NotificationStatus.choices, default=NotificationStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One message per transition and channel, however many workers evaluate.
            models.UniqueConstraint(
                fields=["transition", "channel"],
                condition=models.Q(transition__isnull=False),
                name="one_notification_per_transition_channel",
            )
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.alert} -> {self.channel.name}: {self.status}"


class DeliveryAttempt(models.Model):
    """One try at sending one notification, with its outcome."""

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="deliveries"
    )
    attempted_at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    permanent = models.BooleanField(default=False, help_text="the error will not go away")
    error = models.TextField(blank=True)
    duration_ms = models.FloatField(default=0, validators=[MinValueValidator(0)])

    class Meta:
        ordering = ["-attempted_at", "-id"]

    def __str__(self) -> str:
        return f"{self.notification}: {'ok' if self.ok else self.error}"


class Silence(models.Model):
    """No notifications for matching alerts until `ends_at` (states still change and are
    recorded). Empty rule: every rule; empty subject: every subject (shell patterns)."""

    rule = models.ForeignKey(
        AlertRule, null=True, blank=True, on_delete=models.CASCADE, related_name="silences"
    )
    subject = models.CharField(
        max_length=300, blank=True, help_text="a subject or a pattern, e.g. browser-*"
    )
    starts_at = models.DateTimeField(default=timezone.now)
    ends_at = models.DateTimeField()
    comment = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        ordering = ["-ends_at"]

    def __str__(self) -> str:
        return f"silence {self.rule or 'all rules'} / {self.subject or '*'} until {self.ends_at}"
