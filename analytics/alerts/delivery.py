"""Sends queued notifications through their channels and stores every attempt.

`send_due_notifications()` picks the notifications that are due: `pending` ones whose
`next_attempt_at` has come, and `sending` ones claimed more than STUCK_AFTER ago (the
worker that claimed them stopped before recording an outcome; that lost try is stored as a
failed attempt, then the notification is sent again, so delivery is at least once).

Each is claimed with a conditional UPDATE on the status, attempt count and claim time it
was read with; when it changes no row, another worker got there first and this one skips
it, so two workers running at once send each notification once.

Then the channel's transport (analytics.alerts.channels) sends it, timed, and a
DeliveryAttempt row records the outcome, whatever it is:
- success: the notification is `sent`, and the channel's `failing_since` is cleared;
- a transient error (5xx, 408, 429, timeout, refused, SMTP 4xx): back to `pending`, next
  try after a backoff of FIRST_RETRY_S doubling per attempt, at most MAX_RETRY_S;
  after MAX_ATTEMPTS attempts it is `failed`;
- a permanent error (4xx, a refused address): `failed` at once;
- any other exception from a transport is a bug: logged with its traceback and treated
  as transient, so it shows on the page and does not stop the rest of the batch.
A notification given up on flags its channel (`failing_since`, if not already set, and
`last_error`), which the Alerts page shows. A disabled channel's notifications are
`failed` without sending, with the reason in their attempt (the channel is not flagged:
nothing is wrong with it).

This module owns notification status and channel health; it does not build payloads
(analytics.alerts.engine queues them) and does not know how a channel kind sends.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from analytics.alerts.channels import TransportError, transport_for
from analytics.alerts.models import (
    Channel,
    DeliveryAttempt,
    Notification,
    NotificationStatus,
)

MAX_ATTEMPTS = 6
FIRST_RETRY_S = 30
MAX_RETRY_S = 30 * 60
# Longer than any send can take (HTTP and SMTP timeouts are 10 s and 30 s), so a claim
# this old belongs to a worker that died.
STUCK_AFTER = timedelta(minutes=5)
BATCH_SIZE = 200  # per call; the beat task runs every minute
MAX_ERROR_CHARS = 1000

log = logging.getLogger(__name__)


@dataclass
class DeliveryOutcome:
    sent: int = 0
    retried: int = 0
    failed: int = 0


def retry_delay(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: 30 s, 60 s, 120 s, ... 30 min."""
    return timedelta(seconds=min(FIRST_RETRY_S * 2 ** (attempts - 1), MAX_RETRY_S))


def one_line(message: str) -> str:
    return " ".join(message.split())[:MAX_ERROR_CHARS]


def due_notifications(now: datetime) -> list[Notification]:
    """What is due as of `now`, oldest first (a snapshot: claim each before sending)."""
    due = Q(status=NotificationStatus.PENDING, next_attempt_at__lte=now) | Q(
        status=NotificationStatus.SENDING, claimed_at__lt=now - STUCK_AFTER
    )
    query = Notification.objects.filter(due).select_related("channel")
    return list(query.order_by("next_attempt_at", "id")[:BATCH_SIZE])


def claim(notification: Notification, now: datetime) -> bool:
    """Mark it `sending` if nobody changed it since it was read; False: someone did."""
    claimed = Notification.objects.filter(
        pk=notification.pk,
        status=notification.status,
        attempts=notification.attempts,
        claimed_at=notification.claimed_at,
    ).update(status=NotificationStatus.SENDING, claimed_at=now)
    return claimed == 1


def send_due_notifications(now: datetime | None = None) -> DeliveryOutcome:
    """Send everything due as of `now` (default: the current time); see the module doc."""
    now = now or timezone.now()
    outcome = DeliveryOutcome()
    for notification in due_notifications(now):
        stuck = notification.status == NotificationStatus.SENDING
        if not claim(notification, now):
            continue
        if stuck:
            error = _record_abandoned(notification)
            if notification.attempts >= MAX_ATTEMPTS:
                _finish(notification, now, status=NotificationStatus.FAILED)
                _flag_channel(notification.channel, now, error)
                outcome.failed += 1
                continue
        status = _send(notification, now)
        if status == NotificationStatus.SENT:
            outcome.sent += 1
        elif status == NotificationStatus.PENDING:
            outcome.retried += 1
        else:
            outcome.failed += 1
    return outcome


def _send(notification: Notification, now: datetime) -> NotificationStatus:
    """One attempt, stored; the notification's new status."""
    channel = notification.channel
    if not channel.enabled:
        error = f"channel {channel.name!r} is disabled: not sent"
        _record(notification, now, ok=False, permanent=True, error=error)
        return _finish(notification, now, status=NotificationStatus.FAILED)
    started = time.monotonic()
    try:
        transport_for(channel).send(channel, notification.payload)
    except TransportError as exc:
        error, permanent = one_line(exc.message) or "TransportError", exc.permanent
    except Exception as exc:
        # A bug in one transport must not stop the others' notifications: it is stored
        # like any failure (and logged with its traceback), retried, then given up on.
        log.exception("sending notification %s failed unexpectedly", notification.pk)
        error, permanent = one_line(f"{exc.__class__.__name__}: {exc}"), False
    else:
        error, permanent = "", False
    duration_ms = (time.monotonic() - started) * 1000
    if error:
        _record(
            notification,
            now,
            ok=False,
            permanent=permanent,
            error=error,
            duration_ms=duration_ms,
        )
        if permanent or notification.attempts >= MAX_ATTEMPTS:
            _flag_channel(channel, now, error)
            return _finish(notification, now, status=NotificationStatus.FAILED)
        return _finish(
            notification,
            now,
            status=NotificationStatus.PENDING,
            next_attempt_at=now + retry_delay(notification.attempts),
        )
    _record(notification, now, ok=True, duration_ms=duration_ms)
    # A channel that delivers is healthy again.
    Channel.objects.filter(pk=channel.pk, failing_since__isnull=False).update(failing_since=None)
    return _finish(notification, now, status=NotificationStatus.SENT, sent_at=now)


def _record(
    notification: Notification,
    at: datetime,
    *,
    ok: bool,
    permanent: bool = False,
    error: str = "",
    duration_ms: float = 0.0,
) -> None:
    """Store one attempt and count it on the (in-memory) notification; _finish saves it."""
    DeliveryAttempt.objects.create(
        notification=notification,
        attempted_at=at,
        ok=ok,
        permanent=permanent,
        error=error,
        duration_ms=duration_ms,
    )
    notification.attempts += 1


def _record_abandoned(notification: Notification) -> str:
    """Store the try a dead worker started (at its claim time, read before claim()
    replaced it in the database) as failed, and count it at once: a notification that
    kills its worker every time still runs out of attempts."""
    assert notification.claimed_at is not None
    claimed = notification.claimed_at.isoformat()
    error = f"the worker that claimed it at {claimed} stopped before recording an outcome"
    _record(notification, notification.claimed_at, ok=False, error=error)
    Notification.objects.filter(pk=notification.pk).update(attempts=notification.attempts)
    return error


def _finish(
    notification: Notification,
    now: datetime,
    *,
    status: NotificationStatus,
    next_attempt_at: datetime | None = None,
    sent_at: datetime | None = None,
) -> NotificationStatus:
    """Release this worker's claim with the outcome. Only while the claim is still ours:
    a worker that took longer than STUCK_AFTER has lost it, and its outcome is the
    attempt row alone."""
    fields: dict[str, object] = {"status": status, "attempts": notification.attempts}
    if next_attempt_at is not None:
        fields["next_attempt_at"] = next_attempt_at
    if sent_at is not None:
        fields["sent_at"] = sent_at
    Notification.objects.filter(
        pk=notification.pk, status=NotificationStatus.SENDING, claimed_at=now
    ).update(**fields)
    return status


def _flag_channel(channel: Channel, now: datetime, error: str) -> None:
    Channel.objects.filter(pk=channel.pk).update(last_error=error)
    Channel.objects.filter(pk=channel.pk, failing_since__isnull=True).update(failing_since=now)
