"""Django-side records of the dashboard: API tokens (stored as SHA-256 hashes only) and
each user's display preferences (the time zone pages show times in)."""

import hashlib
import secrets
from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from lib.access import Scope

TOKEN_PREFIX = "fs_"  # noqa: S105 - a visible prefix, not a secret


def hash_token(raw: str) -> str:
    # Tokens carry 256 bits of randomness, so a fast hash is as safe as a slow one here.
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="the first characters, to recognise it")
    token_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(
        max_length=10,
        choices=[(s.value, s.value) for s in Scope],
        default=Scope.READ.value,
        help_text="ingest: send data only; read: read only; admin: all the user's role allows",
    )
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="empty: never")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"
        verbose_name_plural = "API tokens"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @classmethod
    def issue(
        cls,
        user: object,
        name: str = "",
        scope: Scope = Scope.READ,
        expires_at: datetime | None = None,
    ) -> tuple["ApiToken", str]:
        """Create a token; the raw value is returned once and never stored."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            prefix=raw[:10],
            token_hash=hash_token(raw),
            scope=scope.value,
            expires_at=expires_at,
        )
        return token, raw

    @property
    def is_live(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @classmethod
    def authenticate(cls, raw: str) -> "ApiToken | None":
        """The live token with this value (not revoked, not expired, its user active)."""
        now = timezone.now()
        token = (
            cls.objects.select_related("user")
            .filter(token_hash=hash_token(raw), user__is_active=True, revoked_at__isnull=True)
            .exclude(expires_at__lte=now)
            .first()
        )
        if token is not None:
            # Write at most once a minute per token, not on every request.
            if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
                cls.objects.filter(pk=token.pk).update(last_used_at=now)
        return token


class DisplayZone(models.TextChoices):
    """The time zone pages show times in: UTC as stored, or the browser's own."""

    UTC = "utc", "UTC"
    BROWSER = "browser", "Browser"


class Preference(models.Model):
    """One user's display choices, kept across sessions and browsers."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    time_zone = models.CharField(
        max_length=10, choices=DisplayZone.choices, default=DisplayZone.UTC
    )

    def __str__(self) -> str:
        return f"{self.user}: times in {self.get_time_zone_display()}"
