"""Channels against real loopback servers: the signed JSON webhook, the Slack text, the
e-mail over SMTP, and which failures are permanent."""

from __future__ import annotations

import email
import hashlib
import hmac
import smtplib
from collections.abc import Iterator
from email.message import Message
from typing import Any

import orjson
import pytest

from analytics.alerts.channels import TRANSPORTS, TransportError, base, transport_for
from analytics.alerts.channels.email import is_permanent
from analytics.alerts.models import Channel, ChannelKind
from tests.analytics.alerts.receiver import Receiver, webhook_receiver
from tests.services import free_port
from tests.smtp_loopback import SmtpServer, smtp_server

PAYLOAD: dict[str, Any] = {
    "rule": "commit stall",
    "kind": "commit_stall",
    "state": "firing",
    "subject": "run browser-1",
    "summary": "no commit for 42 min (expected gap 6 min)",
    "since": "2026-01-14T10:00:00+00:00",
    "value": 2520.0,
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as server:
        yield server


@pytest.fixture
def smtp(settings: Any) -> Iterator[SmtpServer]:
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = False
        settings.DEFAULT_FROM_EMAIL = "fleetscope@example.com"
        yield server


def send(kind: ChannelKind, target: str, payload: dict[str, Any], secret: str = "") -> None:
    channel = Channel(name="ops", kind=kind, target=target, secret=secret)
    transport_for(channel).send(channel, payload)


def failure(kind: ChannelKind, target: str) -> TransportError:
    with pytest.raises(TransportError) as raised:
        send(kind, target, PAYLOAD)
    return raised.value


def bodies(message: Message) -> dict[str, str]:
    found = {}
    for part in message.walk():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            found[part.get_content_type()] = payload.decode()
    return found


def test_every_channel_kind_has_a_transport() -> None:
    assert set(TRANSPORTS) == set(ChannelKind)


def test_it_signs_the_webhook_body(receiver: Receiver) -> None:
    send(ChannelKind.WEBHOOK, receiver.url, PAYLOAD, secret="s3cret")
    [received] = receiver.requests
    expected = "sha256=" + hmac.new(b"s3cret", received.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, received.headers["X-Fleetscope-Signature"])
    assert received.body == orjson.dumps(PAYLOAD)
    assert received.headers["Content-Type"] == "application/json"


def test_it_posts_exactly_the_payload_unsigned_without_a_secret(receiver: Receiver) -> None:
    send(ChannelKind.WEBHOOK, receiver.url, {**PAYLOAD, "reminder": True})
    [received] = receiver.requests
    assert orjson.loads(received.body) == {**PAYLOAD, "reminder": True}
    assert "X-Fleetscope-Signature" not in received.headers


def test_the_slack_body_has_the_text(receiver: Receiver) -> None:
    send(ChannelKind.SLACK, receiver.url, PAYLOAD)
    [received] = receiver.requests
    assert orjson.loads(received.body) == {
        "text": "[FIRING] commit stall: run browser-1\n"
        "no commit for 42 min (expected gap 6 min)\n"
        "since 2026-01-14 10:00:00 UTC"
    }


def test_the_slack_text_marks_reminders_and_resolutions(receiver: Receiver) -> None:
    send(ChannelKind.SLACK, receiver.url, {**PAYLOAD, "reminder": True})
    send(ChannelKind.SLACK, receiver.url, {**PAYLOAD, "state": "resolved", "summary": ""})
    texts = [orjson.loads(r.body)["text"] for r in receiver.requests]
    assert texts[0].startswith("[REMINDER] commit stall: run browser-1\n")
    assert texts[1] == "[RESOLVED] commit stall: run browser-1\nsince 2026-01-14 10:00:00 UTC"


def test_the_slack_text_escapes_what_slack_reads_as_markup(receiver: Receiver) -> None:
    send(ChannelKind.SLACK, receiver.url, {**PAYLOAD, "subject": "run <!channel> & co"})
    text = orjson.loads(receiver.requests[0].body)["text"]
    assert text.splitlines()[0] == "[FIRING] commit stall: run &lt;!channel&gt; &amp; co"


def test_a_500_is_transient(receiver: Receiver) -> None:
    receiver.answer(500)
    error = failure(ChannelKind.WEBHOOK, receiver.url)
    assert (error.message, error.permanent) == ("HTTP 500 Internal Server Error", False)


def test_a_404_is_permanent(receiver: Receiver) -> None:
    receiver.answer(404)
    error = failure(ChannelKind.SLACK, receiver.url)
    assert (error.message, error.permanent) == ("HTTP 404 Not Found", True)


@pytest.mark.parametrize("status", [408, 425, 429, 503])
def test_waiting_answers_are_transient(receiver: Receiver, status: int) -> None:
    receiver.answer(status)
    assert failure(ChannelKind.WEBHOOK, receiver.url).permanent is False


def test_a_receiver_that_hangs_times_out_transiently(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "HTTP_TIMEOUT_S", 0.3)
    receiver.hang = True
    error = failure(ChannelKind.WEBHOOK, receiver.url)
    assert (error.message, error.permanent) == ("timed out after 0.3 s", False)


def test_a_refused_connection_is_transient() -> None:
    error = failure(ChannelKind.WEBHOOK, f"http://127.0.0.1:{free_port()}/hook")
    assert (error.message, error.permanent) == ("connection refused", False)


def test_a_url_that_is_not_http_is_permanent() -> None:
    error = failure(ChannelKind.WEBHOOK, "file:///etc/passwd")
    assert (error.message, error.permanent) == ("not an http(s) URL: 'file:///etc/passwd'", True)


def test_the_email_arrives_with_text_and_html_bodies(smtp: SmtpServer) -> None:
    send(ChannelKind.EMAIL, "ops@example.com", PAYLOAD)
    [received] = smtp.messages
    assert (received.sender, received.recipients) == ("fleetscope@example.com", ["ops@example.com"])
    message = email.message_from_bytes(received.data)
    assert message["Subject"] == "[FIRING] commit stall: run browser-1"
    found = bodies(message)
    assert found["text/plain"].splitlines()[:3] == [
        "[FIRING] commit stall: run browser-1",
        "",
        "no commit for 42 min (expected gap 6 min)",
    ]
    assert "Since:   2026-01-14 10:00:00 UTC" in found["text/plain"]
    assert "no commit for 42 min (expected gap 6 min)" in found["text/html"]


def test_the_email_escapes_a_script_in_the_subject(smtp: SmtpServer) -> None:
    subject = "run <script>alert(1)</script>"
    send(ChannelKind.EMAIL, "ops@example.com", {**PAYLOAD, "subject": subject, "reminder": True})
    message = email.message_from_bytes(smtp.messages[0].data)
    # The Subject header is plain text, never rendered as HTML: it keeps the text as is.
    assert message["Subject"] == "[REMINDER] commit stall: run <script>alert(1)</script>"
    found = bodies(message)
    html = found["text/html"]
    assert "<script" not in html
    assert "run &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "src=" not in html and "http://" not in html and "https://" not in html
    # The text part is not HTML, so it is not HTML-escaped.
    assert found["text/plain"].startswith("[REMINDER] commit stall: run <script>alert(1)</script>")


def test_an_smtp_server_that_is_not_there_is_transient(settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    error = failure(ChannelKind.EMAIL, "ops@example.com")
    assert error.message.startswith("ConnectionRefusedError:")
    assert error.permanent is False


def test_an_address_that_is_not_one_is_permanent(smtp: SmtpServer) -> None:
    error = failure(ChannelKind.EMAIL, "ops at example")
    assert (error.message, error.permanent) == ("not an e-mail address: 'ops at example'", True)
    assert smtp.messages == []


@pytest.mark.parametrize(
    ("exc", "permanent"),
    [
        (smtplib.SMTPRecipientsRefused({"ops@example.com": (550, b"no such user")}), True),
        (smtplib.SMTPRecipientsRefused({"ops@example.com": (450, b"greylisted")}), False),
        (smtplib.SMTPSenderRefused(553, b"not allowed", "fleetscope@example.com"), True),
        (smtplib.SMTPSenderRefused(451, b"try later", "fleetscope@example.com"), False),
        (smtplib.SMTPConnectError(554, b"no service"), False),
        (smtplib.SMTPServerDisconnected("gone"), False),
        (ConnectionRefusedError(111, "refused"), False),
        (TimeoutError("timed out"), False),
        (ValueError("Invalid address"), True),
    ],
)
def test_smtp_failures_are_sorted_by_reply_code(exc: Exception, permanent: bool) -> None:
    assert is_permanent(exc) is permanent
