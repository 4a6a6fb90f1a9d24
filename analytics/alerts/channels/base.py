"""What every channel shares: the Transport base class (one method, `send`), the
TransportError it raises, the HTTP POST through lib.http (the one outbound HTTP
module) with the rule for which HTTP failures are worth retrying, and the headline the
human-readable channels (Slack, e-mail) open with. A webhook reaches only public
addresses (resolved and pinned by lib.http) unless FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS.

A transport sends one payload to one channel, or raises TransportError; it stores nothing
and never retries: analytics.alerts.delivery does both.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from analytics.alerts.models import Channel
from lib import http

HTTP_TIMEOUT_S = 10.0  # a webhook that has not answered in 10 s is retried later

# 4xx means the request itself is wrong (a revoked URL, a bad token) and will stay wrong,
# except these, which say "not now": request timeout, too early, too many requests.
RETRYABLE_4XX = frozenset({408, 425, 429})


class TransportError(Exception):
    """Sending failed. `permanent`: retrying the same payload cannot succeed."""

    def __init__(self, message: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent


class Transport:
    """One channel kind. Subclasses implement `send` and nothing else."""

    def send(self, channel: Channel, payload: dict[str, Any]) -> None:
        raise NotImplementedError


def is_permanent_status(status: int) -> bool:
    return 400 <= status < 500 and status not in RETRYABLE_4XX


def post_json(url: str, body: bytes, headers: dict[str, str] | None = None) -> None:
    """POST through lib.http; FetchError becomes TransportError. No answer
    (timeout, refused, unreachable) and 5xx are transient; see RETRYABLE_4XX."""
    try:
        http.post_json(
            url,
            body,
            timeout_s=HTTP_TIMEOUT_S,
            headers=headers,
            allow_private=settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS,
        )
    except http.InvalidURL as exc:
        raise TransportError(str(exc), permanent=True) from None
    except http.FetchError as exc:
        permanent = exc.status is not None and is_permanent_status(exc.status)
        raise TransportError(str(exc), permanent=permanent) from None


def marker(payload: dict[str, Any]) -> str:
    """[FIRING], [RESOLVED] or [REMINDER] (a reminder's state is still firing)."""
    if payload.get("reminder"):
        return "[REMINDER]"
    return f"[{str(payload.get('state', '')).upper()}]"


def headline(payload: dict[str, Any]) -> str:
    """One line: `[FIRING] rule: subject`, with no line breaks (it becomes a subject)."""
    text = f"{marker(payload)} {payload.get('rule', '')}: {payload.get('subject', '')}"
    return " ".join(text.split())


def format_since(value: object) -> str:
    """An ISO timestamp as `2026-01-14 10:00:00 UTC`; anything else as it is."""
    if not isinstance(value, str):
        return "" if value is None else str(value)
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return value
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return f"{when:%Y-%m-%d %H:%M:%S} UTC"
