"""The whole alert path as production runs it: the evaluate task sent through a real Redis
broker to a real Celery worker, rules evaluated over ingested scenarios minute by minute,
notifications delivered to a webhook receiver and an SMTP server on loopback, and counted
there: exactly one firing and one resolved message per incident and channel, none for
the non-incidents (the same gap in a slow fleet, the restart, a KV level flapping scrape
by scrape, the flapping stretches around the one sustained KV incident)."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from pathlib import Path
from typing import Any

import orjson
import pytest
from celery.contrib.testing.worker import start_worker

from analytics.alerts.models import AlertRule, Channel, ChannelKind, DeliveryAttempt
from analytics.tasks import evaluate_alerts
from dashboard.celery import app
from lib.durations import format_time
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.receiver import Receiver, webhook_receiver
from tests.analytics.alerts.scenarios import T0, minutes
from tests.services import redis_server
from tests.smtp_loopback import SmtpServer, smtp_server

SECRET = "end-to-end-secret"


@pytest.fixture
def redis_worker(tmp_path: Path) -> Iterator[None]:
    """A Celery worker thread consuming from a real Redis (results there too, so the test
    can wait for each evaluation in turn)."""
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    with redis_server(tmp_path) as url:
        app.conf.update(broker_url=url, result_backend=url, task_always_eager=False)
        try:
            with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING"):
                yield
        finally:
            app.conf.update(saved)


@pytest.fixture
def receivers(settings: Any) -> Iterator[tuple[Receiver, SmtpServer]]:
    with webhook_receiver() as hook, smtp_server() as mail:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = mail.host, mail.port
        settings.EMAIL_USE_TLS = False
        yield hook, mail


def _rules(hook: Receiver) -> None:
    channels = [
        Channel.objects.create(
            name="hook", kind=ChannelKind.WEBHOOK, target=hook.url, secret=SECRET
        ),
        Channel.objects.create(name="slack", kind=ChannelKind.SLACK, target=hook.url + "/slack"),
        Channel.objects.create(name="mail", kind=ChannelKind.EMAIL, target="oncall@example.com"),
    ]
    for name, kind, threshold, for_s, params in (
        ("stall", "commit_stall", None, 0, {"factor": 5, "floor": "5m"}),
        ("preempting", "preemption_rate", 1.0, 0, {"window": "1m"}),
        ("kv", "kv_usage", 0.95, 300, {}),
        ("down", "target_down", None, 120, {}),
    ):
        rule = AlertRule.objects.create(
            name=name,
            kind=kind,
            threshold=threshold,
            for_seconds=for_s,
            params=params,
            repeat_seconds=0,
        )
        rule.channels.set(channels)


# Celery's Redis result backend still calls redis-py's deprecated setex.
@pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning")
@pytest.mark.django_db(transaction=True)
def test_incidents_reach_the_webhook_and_the_mailbox_once_each_way(
    lake: Path, redis_worker: None, receivers: tuple[Receiver, SmtpServer]
) -> None:
    hook, mail = receivers
    for run, every in (("fast", 10), ("slow", 480)):
        scenarios.load_fleet(
            run, commit_every_s=every, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=12)
        )
    scenarios.load_preemption_burst_after_restart()
    scenarios.load_flapping_kv()
    scenarios.load_fast_flapping_kv()
    _rules(hook)

    # The scenarios overlap in time: fleets over 1:50-2:30, serving over 0:01-1:19.
    for at in [
        *minutes(T0 + timedelta(minutes=1), T0 + timedelta(minutes=79)),
        *minutes(T0 + timedelta(minutes=110), T0 + timedelta(minutes=140)),
    ]:
        result = evaluate_alerts.apply_async(kwargs={"at": format_time(at)}, ignore_result=False)
        outcome = result.get(timeout=60)
        assert outcome["errors"] == []

    webhooks = [r for r in hook.requests if r.path == "/hook"]
    for request in webhooks:
        expected = hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
        assert request.headers["X-Fleetscope-Signature"] == f"sha256={expected}"
    bodies = [orjson.loads(r.body) for r in webhooks]
    assert Counter((b["rule"], b["subject"], b["state"]) for b in bodies) == {
        ("stall", "fast", "firing"): 1,
        ("stall", "fast", "resolved"): 1,
        ("preempting", "gpu-burst", "firing"): 1,
        ("preempting", "gpu-burst", "resolved"): 1,
        ("kv", "gpu-flap", "firing"): 1,
        ("kv", "gpu-flap", "resolved"): 1,
    }
    assert len([r for r in hook.requests if r.path == "/hook/slack"]) == 6
    subjects = Counter(message_from_bytes(m.data)["Subject"] for m in mail.messages)
    assert sum(subjects.values()) == 6
    assert all(m.recipients == ["oncall@example.com"] for m in mail.messages)
    assert DeliveryAttempt.objects.filter(ok=True).count() == 18
    assert not DeliveryAttempt.objects.filter(ok=False).exists()
