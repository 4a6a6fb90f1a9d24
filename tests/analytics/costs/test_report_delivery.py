"""Sending the daily report: a real SMTP server on loopback receives the HTML e-mail with
the CSV attached, a webhook on loopback receives the summary, every attempt is recorded,
and a recipient already served is not sent the same day twice."""

from __future__ import annotations

import email
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
from django.core.management import call_command

from analytics.access.visibility import seen_for_team
from analytics.costs.models import ModelPrice, RecipientKind, ReportDelivery, ReportRecipient
from analytics.costs.report_delivery import MAX_ATTEMPTS, deliver_report
from analytics.costs.report_schedule import due_report_day
from analytics.tasks import send_daily_cost_report
from dashboard.celery import _beat_schedule
from ingest.pipelines.agent_events import ingest_body
from tests.services import free_port
from tests.smtp_loopback import smtp_server

pytestmark = pytest.mark.usefixtures("lake")

DAY = date(2026, 1, 14)


@pytest.fixture
def spend(db: None) -> None:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        cached_input_per_mtok=Decimal("0.125"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    lines = [
        {
            "ts": "2026-01-14T10:00:00Z",
            "run": "browser-1",
            "agent": "w",
            "event": "llm_call",
            "model": "gpt-5-2025-08-07",
            "usage": {
                "input_tokens": 1_000_000,
                "cached_input_tokens": 0,
                "output_tokens": 100_000,
            },
        },
        {
            "ts": "2026-01-14T11:00:00Z",
            "run": "browser-1",
            "agent": "w",
            "event": "llm_call",
            "model": "mystery-1",
            "usage": {"input_tokens": 10, "output_tokens": 10},
        },
    ]
    ingest_body(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def parts(message: Message) -> dict[str, str]:
    """Each leaf part's decoded text, by file name or content type."""
    found = {}
    for part in message.walk():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            found[part.get_filename() or part.get_content_type()] = payload.decode()
    return found


def test_the_email_arrives_over_smtp_with_the_csv_attached(spend: None, settings) -> None:
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = False
        ReportRecipient.objects.create(kind=RecipientKind.EMAIL, target="ops@example.com")
        outcome = deliver_report(DAY, seen_for_team=seen_for_team)
    assert (outcome.sent, outcome.failed) == (1, 0)
    [received] = server.messages
    assert received.recipients == ["ops@example.com"]
    message = email.message_from_bytes(received.data)
    assert message["Subject"] == "Fleetscope cost report 2026-01-14: $2.25"
    found = parts(message)
    html = found["text/html"]
    assert "gpt-5-2025-08-07" in html and "mystery-1" in html and "Unpriced models" in html
    csv_text = found["fleetscope-costs-2026-01-14.csv"]
    assert "model,gpt-5-2025-08-07,1,1000000,0,0,100000,2.250000," in csv_text
    assert "unpriced,mystery-1,,,,,,,no price in the table" in csv_text
    [delivery] = ReportDelivery.objects.all()
    assert (delivery.ok, delivery.target, delivery.report_date) == (True, "ops@example.com", DAY)


def test_a_failed_send_is_recorded_and_retried_at_most_max_attempts(spend: None, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nothing listens
    ReportRecipient.objects.create(kind=RecipientKind.EMAIL, target="ops@example.com")
    for _ in range(MAX_ATTEMPTS + 1):
        deliver_report(DAY, seen_for_team=seen_for_team)
    attempts = ReportDelivery.objects.all()
    assert attempts.count() == MAX_ATTEMPTS
    assert all(not a.ok and "ConnectionRefusedError" in a.error for a in attempts)


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[bytes]]]:
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", bodies
    finally:
        server.shutdown()
        server.server_close()


def test_a_webhook_gets_the_summary_once_per_day(spend: None) -> None:
    with webhook_receiver() as (url, bodies):
        ReportRecipient.objects.create(kind=RecipientKind.WEBHOOK, target=url)
        first = deliver_report(DAY, seen_for_team=seen_for_team)
        second = deliver_report(DAY, seen_for_team=seen_for_team)
    assert (first.sent, second.sent, second.skipped) == (1, 0, 1)
    [body] = bodies
    text = orjson.loads(body)["text"]
    assert text.startswith("Fleetscope costs for 2026-01-14 (UTC): $2.25")
    assert "Unpriced models (not in any total): mystery-1" in text


def test_the_report_is_due_after_the_local_report_time(settings) -> None:
    settings.FLEETSCOPE_COST_REPORT_TZ = "America/New_York"
    settings.FLEETSCOPE_COST_REPORT_TIME = "07:00"
    assert due_report_day(datetime(2026, 1, 15, 11, 59, tzinfo=UTC)) is None  # 06:59 there
    assert due_report_day(datetime(2026, 1, 15, 12, 0, tzinfo=UTC)) == DAY
    # Summer time: 07:00 in New York is 11:00 UTC.
    assert due_report_day(datetime(2026, 7, 15, 11, 0, tzinfo=UTC)) == date(2026, 7, 14)


def test_the_beat_task_without_recipients_sends_nothing(db: None, settings) -> None:
    settings.FLEETSCOPE_COST_REPORT_TIME = "00:00"
    answer = send_daily_cost_report()
    assert answer["due"] is True
    assert (answer["sent"], answer["failed"], answer["skipped"]) == (0, 0, 0)


def test_the_command_sends_and_writes_every_format(spend: None, tmp_path, capsys) -> None:
    with webhook_receiver() as (url, bodies):
        ReportRecipient.objects.create(kind=RecipientKind.WEBHOOK, target=url)
        call_command(
            "cost_report",
            "--date",
            "2026-01-14",
            "--format",
            "html,csv,json",
            "--output-dir",
            str(tmp_path),
            "--send",
        )
    assert len(bodies) == 1
    report = orjson.loads((tmp_path / "fleetscope-costs-2026-01-14.json").read_bytes())
    assert report["total_usd"] == 2.25 and report["unpriced"] == ["mystery-1"]
    assert "mystery-1" in (tmp_path / "fleetscope-costs-2026-01-14.html").read_text()
    assert (tmp_path / "fleetscope-costs-2026-01-14.csv").read_text().startswith("section,name")
    assert '"sent":1' in capsys.readouterr().err


def test_the_beat_asks_every_quarter_hour_and_drops_late_ticks() -> None:
    entry = _beat_schedule(30)["send-daily-cost-report"]
    assert entry["task"] == send_daily_cost_report.name == "analytics.send_daily_cost_report"
    assert entry["schedule"].total_seconds() == 900
    assert entry["options"] == {"expires": 600}
