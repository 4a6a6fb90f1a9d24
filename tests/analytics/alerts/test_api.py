"""The alerting endpoints of api.md: channels, rules, alerts, preview, silences."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.alerts import engine
from analytics.alerts.models import AlertRule, Channel, Silence
from lib.durations import format_time
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.scenarios import T0


def _post(path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    response = Client().post(path, body, content_type="application/json", headers=headers)
    return response.status_code, response.json()


def test_alerting_endpoints_need_credentials(db: None) -> None:
    client = Client()
    assert client.get("/api/alerts").status_code == 401
    assert client.post("/api/channels", {}, content_type="application/json").status_code == 401
    assert client.post("/api/alert-rules", {}, content_type="application/json").status_code == 401


def test_a_rule_is_created_with_its_channels_and_its_alert_listed_once_firing(
    lake: Path, auth_headers: dict[str, str]
) -> None:
    scenarios.load_flapping_kv()
    status, channel = _post(
        "/api/channels",
        {"name": "ops", "kind": "webhook", "target": "http://127.0.0.1:9/hook", "secret": "s3"},
        auth_headers,
    )
    assert status == 200
    status, rule = _post(
        "/api/alert-rules",
        {
            "name": "KV saturated",
            "kind": "kv_usage",
            "scope": {"instance": "gpu-flap"},
            "threshold": 0.95,
            "for": "5m",
            "channels": [channel["id"]],
            "params": {},
        },
        auth_headers,
    )
    assert status == 200
    saved = AlertRule.objects.get(pk=rule["id"])
    assert (saved.for_seconds, saved.scope, saved.repeat_seconds) == (
        300,
        {"instance": "gpu-flap"},
        14400,
    )
    assert [c.name for c in saved.channels.all()] == ["ops"]

    engine.evaluate_rules(T0 + timedelta(minutes=35))
    body = Client().get("/api/alerts?state=firing", headers=auth_headers).json()
    assert body == [
        {
            "id": body[0]["id"],
            "rule": "KV saturated",
            "kind": "kv_usage",
            "state": "firing",
            "since": format_time(T0 + timedelta(minutes=28)),
            "summary": "KV-cache usage 97.0%, the minute's mean (threshold 95%)",
            "subject": "gpu-flap",
            "value": pytest.approx(0.97),
            "evaluated_at": format_time(T0 + timedelta(minutes=35)),
        }
    ]
    assert Client().get("/api/alerts?state=pending", headers=auth_headers).json() == []


@pytest.mark.parametrize(
    ("path", "body", "detail"),
    [
        ("/api/channels", {"name": "x", "kind": "pager", "target": "http://h/"}, "kind must be"),
        ("/api/channels", {"name": "x", "kind": "email", "target": "not-an-address"}, "e-mail"),
        ("/api/channels", {"name": "x", "kind": "slack", "target": "ftp://h/"}, "http(s) URL"),
        ("/api/alert-rules", {"name": "r", "kind": "kv_usage", "threshold": 2}, "between 0 and 1"),
        ("/api/alert-rules", {"name": "r", "kind": "commit_stall"}, "params.min_gap"),
        (
            "/api/alert-rules",
            {"name": "r", "kind": "kv_usage", "threshold": 0.9, "for": "soon"},
            "for must look like",
        ),
    ],
)
def test_bad_channels_and_rules_are_refused_with_a_reason(
    db: None, auth_headers: dict[str, str], path: str, body: dict[str, Any], detail: str
) -> None:
    status, answer = _post(path, body, auth_headers)
    assert status == 422
    assert detail in answer["detail"]
    assert not AlertRule.objects.exists() and not Channel.objects.exists()


def test_a_rule_with_an_unknown_channel_is_not_found(
    db: None, auth_headers: dict[str, str]
) -> None:
    status, answer = _post(
        "/api/alert-rules",
        {"name": "r", "kind": "target_down", "channels": [42]},
        auth_headers,
    )
    assert status == 404 and "42" in answer["detail"]


def test_the_preview_shows_what_a_rule_would_have_fired_on(
    lake: Path, auth_headers: dict[str, str]
) -> None:
    scenarios.load_flapping_kv()
    end = format_time(T0 + timedelta(minutes=80))
    status, body = _post(
        f"/api/alert-rules/preview?hours=2&end={end}",
        {"name": "draft", "kind": "kv_usage", "threshold": 0.95, "for": "5m"},
        auth_headers,
    )
    assert status == 200
    assert [(i["subject"], i["fired_at"], i["resolved_at"]) for i in body["incidents"]] == [
        ("gpu-flap", "2026-01-14T08:33:59Z", "2026-01-14T08:42:59Z")
    ]
    assert not AlertRule.objects.exists()


def test_the_preview_takes_its_window_as_start_and_end_and_refuses_a_bad_one(
    lake: Path, auth_headers: dict[str, str]
) -> None:
    scenarios.load_flapping_kv()
    rule = AlertRule.objects.create(name="kv", kind="kv_usage", threshold=0.95, for_seconds=300)
    start, end = format_time(T0 + timedelta(minutes=30)), format_time(T0 + timedelta(minutes=36))
    answer = Client().get(
        f"/api/alert-rules/{rule.pk}/preview?start={start}&end={end}", headers=auth_headers
    )
    assert answer.status_code == 200
    body = answer.json()
    assert (body["start"], body["end"], body["evaluations"]) == (
        "2026-01-14T08:30:59Z",
        "2026-01-14T08:35:59Z",
        6,
    )
    # Pending from the range's first minute, firing from 08:33:59, still firing at its end.
    assert body["incidents"] == [
        {
            "subject": "gpu-flap",
            "pending_at": "2026-01-14T08:30:59Z",
            "fired_at": "2026-01-14T08:33:59Z",
            "resolved_at": None,
            "peak": pytest.approx(0.97),
            "summary": "KV-cache usage 97.0%, the minute's mean (threshold 95%)",
        }
    ]
    for query, detail in [
        (f"start={end}&end={start}", "start must be before end"),
        ("start=soon", "start must be an RFC 3339 time, got 'soon'"),
        (f"start=2026-01-01T00:00:00Z&end={end}", "a preview covers at most 7 days"),
    ]:
        answer = Client().get(f"/api/alert-rules/{rule.pk}/preview?{query}", headers=auth_headers)
        assert (answer.status_code, answer.json()) == (422, {"detail": detail})


def test_a_silence_is_created_for_a_rule(db: None, auth_headers: dict[str, str]) -> None:
    rule = AlertRule.objects.create(name="r", kind="target_down")
    status, body = _post(
        "/api/silences", {"rule": rule.pk, "subject": "gpu-*", "duration": "2h"}, auth_headers
    )
    assert status == 200
    silence = Silence.objects.get(pk=body["id"])
    assert (silence.rule, silence.subject) == (rule, "gpu-*")
    assert timedelta(minutes=119) < silence.ends_at - silence.starts_at < timedelta(minutes=121)


def test_durations_may_be_numbers_of_seconds(db: None, auth_headers: dict[str, str]) -> None:
    status, body = _post(
        "/api/alert-rules",
        {
            "name": "stall",
            "kind": "commit_stall",
            "for": 120,
            "repeat": 0,
            "params": {"factor": 4, "floor": 300},
        },
        auth_headers,
    )
    assert status == 200
    rule = AlertRule.objects.get(pk=body["id"])
    assert (rule.for_seconds, rule.repeat_seconds) == (120, 0)
    status, body = _post(
        "/api/alert-rules",
        {"name": "x", "kind": "commit_stall", "params": {"min_gap": -5}},
        auth_headers,
    )
    assert status == 422 and "params.min_gap must be a positive duration" in body["detail"]
