"""`manage.py evaluate_alerts [--at T]`: evaluates, delivers, prints one JSON line, and
fails in one line on a bad time."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.core.management import CommandError, call_command

from analytics.alerts.models import AlertRule, Channel, ChannelKind
from lib.durations import format_time
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.receiver import webhook_receiver
from tests.analytics.alerts.scenarios import T0, minutes

pytestmark = pytest.mark.django_db


def _evaluate(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("evaluate_alerts", *args, stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1
    return orjson.loads(lines[0])


def test_it_evaluates_as_of_each_time_and_the_receiver_gets_one_of_each(lake: Path) -> None:
    scenarios.load_preemption_burst_after_restart()
    with webhook_receiver() as hook:
        channel = Channel.objects.create(name="hook", kind=ChannelKind.WEBHOOK, target=hook.url)
        rule = AlertRule.objects.create(
            name="preempting", kind="preemption_rate", threshold=1.0, params={"window": "1m"}
        )
        rule.channels.add(channel)
        results = [
            _evaluate("--at", format_time(at) or "")
            for at in minutes(T0 + timedelta(minutes=15), T0 + timedelta(minutes=35))
        ]
        states = [orjson.loads(r.body)["state"] for r in hook.requests]
    assert states == ["firing", "resolved"]
    assert sum(r["transitions"] for r in results) == 2
    assert sum(r["delivery"]["sent"] for r in results) == 2
    assert all(r["errors"] == [] and r["rules"] == 1 for r in results)


def test_a_bad_time_is_refused_in_one_line(db: None) -> None:
    with pytest.raises(CommandError, match="--at must be an RFC 3339 time"):
        call_command("evaluate_alerts", "--at", "yesterday")
