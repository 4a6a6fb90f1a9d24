"""Delivery against a real loopback webhook receiver and SMTP server: every attempt is
stored, transient failures are retried with backoff up to MAX_ATTEMPTS, permanent ones
fail at once and flag the channel, and each notification is sent once however many
workers run."""

from __future__ import annotations

import email
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from analytics.alerts import delivery
from analytics.alerts.channels import Transport, transport_for
from analytics.alerts.delivery import (
    MAX_ATTEMPTS,
    DeliveryOutcome,
    claim,
    due_notifications,
    retry_delay,
    send_due_notifications,
)
from analytics.alerts.models import (
    AlertRule,
    AlertState,
    AlertStateName,
    Channel,
    ChannelKind,
    DeliveryAttempt,
    Notification,
    NotificationKind,
    NotificationStatus,
    RuleKind,
)
from tests.analytics.alerts.receiver import Receiver, webhook_receiver
from tests.smtp_loopback import smtp_server

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)
_subjects = itertools.count(1)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as server:
        yield server


@pytest.fixture
def channel(receiver: Receiver) -> Channel:
    return Channel.objects.create(
        name="ops", kind=ChannelKind.WEBHOOK, target=receiver.url, secret="s3cret"
    )


def notify(
    channel: Channel,
    *,
    status: NotificationStatus = NotificationStatus.PENDING,
    attempts: int = 0,
    next_attempt_at: datetime = NOW,
    claimed_at: datetime | None = None,
) -> Notification:
    rule, _ = AlertRule.objects.get_or_create(
        name="commit stall", defaults={"kind": RuleKind.COMMIT_STALL}
    )
    subject = f"run browser-{next(_subjects)}"
    since = NOW - timedelta(minutes=10)
    alert = AlertState.objects.create(
        rule=rule, subject=subject, state=AlertStateName.FIRING, since=since, evaluated_at=NOW
    )
    payload = {
        "rule": rule.name,
        "kind": rule.kind,
        "state": "firing",
        "subject": subject,
        "summary": "no commit for 42 min",
        "since": since.isoformat(),
        "value": 2520.0,
    }
    return Notification.objects.create(
        alert=alert,
        channel=channel,
        kind=NotificationKind.FIRING,
        payload=payload,
        status=status,
        attempts=attempts,
        next_attempt_at=next_attempt_at,
        claimed_at=claimed_at,
        created_at=NOW,
    )


def attempts_of(notification: Notification) -> list[tuple[bool, bool, str]]:
    rows = notification.deliveries.order_by("attempted_at", "id")
    return [(a.ok, a.permanent, a.error) for a in rows]


def test_it_sends_a_due_notification_and_stores_the_attempt(
    channel: Channel, receiver: Receiver
) -> None:
    notification = notify(channel)
    assert send_due_notifications(NOW) == DeliveryOutcome(sent=1)
    notification.refresh_from_db()
    assert (notification.status, notification.sent_at) == (NotificationStatus.SENT, NOW)
    assert (notification.attempts, attempts_of(notification)) == (1, [(True, False, "")])
    [attempt] = notification.deliveries.all()
    assert attempt.attempted_at == NOW and attempt.duration_ms > 0
    assert len(receiver.requests) == 1


def test_a_notification_not_yet_due_is_left_alone(channel: Channel, receiver: Receiver) -> None:
    notify(channel, next_attempt_at=NOW + timedelta(seconds=1))
    assert send_due_notifications(NOW) == DeliveryOutcome()
    assert receiver.requests == []


def test_a_transient_500_is_retried_after_a_backoff_then_sent_once(
    channel: Channel, receiver: Receiver
) -> None:
    receiver.answer(500)
    notification = notify(channel)
    assert send_due_notifications(NOW) == DeliveryOutcome(retried=1)
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.PENDING
    assert notification.next_attempt_at == NOW + timedelta(seconds=30)
    assert send_due_notifications(NOW + timedelta(seconds=29)) == DeliveryOutcome()
    assert send_due_notifications(NOW + timedelta(seconds=30)) == DeliveryOutcome(sent=1)
    notification.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.SENT, 2)
    assert attempts_of(notification) == [
        (False, False, "HTTP 500 Internal Server Error"),
        (True, False, ""),
    ]
    assert len(receiver.requests) == 2


def test_a_404_fails_at_once_and_flags_the_channel(channel: Channel, receiver: Receiver) -> None:
    receiver.answer(404)
    notification = notify(channel)
    assert send_due_notifications(NOW) == DeliveryOutcome(failed=1)
    notification.refresh_from_db()
    channel.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.FAILED, 1)
    assert attempts_of(notification) == [(False, True, "HTTP 404 Not Found")]
    assert (channel.failing_since, channel.last_error) == (NOW, "HTTP 404 Not Found")
    assert send_due_notifications(NOW + timedelta(hours=1)) == DeliveryOutcome()
    assert len(receiver.requests) == 1


def test_retries_stop_at_max_attempts(channel: Channel, receiver: Receiver) -> None:
    receiver.answer(*[503] * 20)
    notification = notify(channel)
    now, waits = NOW, []
    for _ in range(MAX_ATTEMPTS + 3):
        send_due_notifications(now)
        notification.refresh_from_db()
        if notification.status == NotificationStatus.PENDING:
            waits.append((notification.next_attempt_at - now).total_seconds())
        now = max(now, notification.next_attempt_at) + timedelta(seconds=1)
    channel.refresh_from_db()
    assert waits == [30, 60, 120, 240, 480]
    assert (notification.status, notification.attempts) == (NotificationStatus.FAILED, 6)
    assert DeliveryAttempt.objects.count() == len(receiver.requests) == MAX_ATTEMPTS == 6
    assert channel.failing_since is not None
    assert channel.last_error == "HTTP 503 Service Unavailable"


def test_the_backoff_doubles_up_to_thirty_minutes() -> None:
    waits = [retry_delay(n).total_seconds() for n in range(1, 9)]
    assert waits == [30, 60, 120, 240, 480, 960, 1800, 1800]


def test_a_delivery_clears_the_channels_failing_flag(channel: Channel) -> None:
    Channel.objects.filter(pk=channel.pk).update(
        failing_since=NOW - timedelta(hours=1), last_error="HTTP 404 Not Found"
    )
    notify(channel)
    assert send_due_notifications(NOW) == DeliveryOutcome(sent=1)
    channel.refresh_from_db()
    assert channel.failing_since is None


def test_a_disabled_channel_fails_its_notification_without_sending(
    channel: Channel, receiver: Receiver
) -> None:
    Channel.objects.filter(pk=channel.pk).update(enabled=False)
    notification = notify(channel)
    assert send_due_notifications(NOW) == DeliveryOutcome(failed=1)
    notification.refresh_from_db()
    channel.refresh_from_db()
    assert notification.status == NotificationStatus.FAILED
    assert attempts_of(notification) == [(False, True, "channel 'ops' is disabled: not sent")]
    assert receiver.requests == [] and channel.failing_since is None


def test_a_bug_in_a_transport_is_stored_and_the_rest_still_go_out(
    channel: Channel, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken, fine = notify(channel), notify(channel)

    class BrokenForOne(Transport):
        def send(self, channel: Channel, payload: dict[str, Any]) -> None:
            if payload["subject"] == broken.payload["subject"]:
                raise KeyError("rule")
            transport_for(channel).send(channel, payload)

    monkeypatch.setattr(delivery, "transport_for", lambda _channel: BrokenForOne())
    assert send_due_notifications(NOW) == DeliveryOutcome(sent=1, retried=1)
    broken.refresh_from_db()
    fine.refresh_from_db()
    assert (broken.status, broken.next_attempt_at) == (
        NotificationStatus.PENDING,
        NOW + timedelta(seconds=30),
    )
    assert attempts_of(broken) == [(False, False, "KeyError: 'rule'")]
    assert fine.status == NotificationStatus.SENT and len(receiver.requests) == 1


def test_two_workers_at_once_send_each_notification_once(
    channel: Channel, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    notifications = [notify(channel) for _ in range(3)]
    inner: list[DeliveryOutcome] = []

    class SecondWorkerArrives(Transport):
        """While the first worker sends its first notification, a second one runs."""

        def send(self, channel: Channel, payload: dict[str, Any]) -> None:
            if not inner:
                inner.append(DeliveryOutcome())  # so the second worker's sends go straight out
                inner[0] = send_due_notifications(NOW)
            transport_for(channel).send(channel, payload)

    monkeypatch.setattr(delivery, "transport_for", lambda _channel: SecondWorkerArrives())
    outer = send_due_notifications(NOW)
    assert (outer.sent, inner[0].sent) == (1, 2)
    assert len(receiver.requests) == 3
    assert sorted(r.body for r in receiver.requests) == sorted(
        orjson.dumps(n.payload) for n in notifications
    )
    for notification in notifications:
        notification.refresh_from_db()
        assert notification.status == NotificationStatus.SENT
        assert attempts_of(notification) == [(True, False, "")]


def test_a_worker_with_a_stale_list_claims_nothing(channel: Channel, receiver: Receiver) -> None:
    notify(channel)
    notify(channel)
    stale = due_notifications(NOW)
    assert send_due_notifications(NOW) == DeliveryOutcome(sent=2)
    assert [claim(n, NOW) for n in stale] == [False, False]
    assert len(receiver.requests) == 2


def test_a_notification_stuck_in_sending_is_reclaimed(channel: Channel, receiver: Receiver) -> None:
    crashed_at = NOW - timedelta(minutes=6)
    stuck = notify(channel, status=NotificationStatus.SENDING, claimed_at=crashed_at)
    busy = notify(channel, status=NotificationStatus.SENDING, claimed_at=NOW - timedelta(minutes=1))
    assert send_due_notifications(NOW) == DeliveryOutcome(sent=1)
    stuck.refresh_from_db()
    busy.refresh_from_db()
    assert (stuck.status, stuck.attempts) == (NotificationStatus.SENT, 2)
    assert attempts_of(stuck) == [
        (
            False,
            False,
            "the worker that claimed it at 2026-01-14T11:54:00+00:00 stopped before"
            " recording an outcome",
        ),
        (True, False, ""),
    ]
    assert (busy.status, busy.attempts) == (NotificationStatus.SENDING, 0)
    assert len(receiver.requests) == 1


def test_a_stuck_notification_is_reclaimed_by_one_worker_only(channel: Channel) -> None:
    notify(channel, status=NotificationStatus.SENDING, claimed_at=NOW - timedelta(minutes=6))
    [first] = due_notifications(NOW)
    [second] = due_notifications(NOW)
    assert (claim(first, NOW), claim(second, NOW)) == (True, False)


def test_an_email_channel_delivers_over_smtp(settings: Any) -> None:
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = False
        mail = Channel.objects.create(name="mail", kind=ChannelKind.EMAIL, target="ops@example.com")
        notification = notify(mail)
        assert send_due_notifications(NOW) == DeliveryOutcome(sent=1)
    [received] = server.messages
    subject = email.message_from_bytes(received.data)["Subject"]
    assert subject == f"[FIRING] commit stall: {notification.payload['subject']}"
