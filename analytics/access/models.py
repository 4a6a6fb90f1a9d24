"""Who a user is to Fleetscope: a role, teams and the all-teams flag; the audit log; and
the failed logins that slow a password-guessing loop down."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from lib.access import Role


class Access(models.Model):
    """One user's role and teams. A user without a row is a viewer in no team: they see
    no team's data. Django superusers and admins see every team whatever this says."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access"
    )
    role = models.CharField(
        max_length=10,
        choices=[(r.value, r.value) for r in Role],
        default=Role.VIEWER.value,
    )
    all_teams = models.BooleanField(
        default=False, help_text="sees every team's data (admins always do)"
    )
    teams = models.ManyToManyField("analytics.Team", blank=True, related_name="members")

    class Meta:
        verbose_name = "access"
        verbose_name_plural = "access"

    def __str__(self) -> str:
        return f"{self.user}: {self.role}"


class AuditEntry(models.Model):
    """One change to a rule, channel, token, price, user, team or other setting."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    username = models.CharField(max_length=150, blank=True, help_text="kept if the user goes")
    action = models.CharField(max_length=20)  # created, changed, deleted, revoked, ...
    kind = models.CharField(max_length=40)  # alert rule, channel, api token, price, ...
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=300, blank=True)
    changes = models.JSONField(default=dict, blank=True)
    team = models.ForeignKey(
        "analytics.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.username or 'system'} {self.action} {self.kind}"


class LoginFailure(models.Model):
    """One failed login, by account name and client address (kept for the lockout window)."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    username = models.CharField(max_length=150, db_index=True)
    address = models.CharField(max_length=64, db_index=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.username} from {self.address}"
