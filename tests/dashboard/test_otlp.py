"""The OTLP/HTTP receiver at /v1/logs, /v1/metrics, /v1/traces: who may send, what each
kind of bad request is answered, and that a 200 means the request is in the spool (the
loader's tests take it from there: tests/ingest/pipelines/test_otlp.py)."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)

import dashboard.otlp
import ingest.sources.otlp
from dashboard.models import ApiToken
from ingest.pipelines import otlp_spool
from lib.access import Scope
from tests.otlp import CUMULATIVE, metrics_request, post, sum_metric

RESOURCE = {"service.name": "claude-code", "user.email": "ana@example.com"}


@pytest.fixture
def spool(settings: Any, tmp_path: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return otlp_spool.spool_dir()


def _metrics(temporality: int = CUMULATIVE) -> Any:
    points = [
        ("2026-03-01T10:00:00", 5, {"type": "added"}),
        ("2026-03-01T10:01:00", 9, {"type": "added"}),
    ]
    metric = sum_metric("claude_code.lines_of_code.count", points, temporality, unit="count")
    return metrics_request(RESOURCE, [metric])


def _token(user: Any, scope: Scope) -> str:
    return ApiToken.issue(user, f"{scope} token", scope=scope)[1]


def test_an_accepted_request_is_in_the_spool_before_the_answer(
    client: Client, user: Any, spool: Path
) -> None:
    response = post(client, _metrics(), _token(user, Scope.INGEST))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-protobuf"
    assert response.content == b""  # an empty ExportMetricsServiceResponse
    [path] = otlp_spool.pending_files()
    spooled = otlp_spool.read(path)
    assert spooled.sender == "alice" and spooled.source == "otlp/metrics/alice"
    assert [(p["ts"], p["value"], p["person"]) for p in spooled.points] == [
        ("2026-03-01T10:00:00.000000Z", 5.0, "ana@example.com"),
        ("2026-03-01T10:01:00.000000Z", 9.0, "ana@example.com"),
    ]


def test_json_and_gzip_are_answered_in_json(client: Client, user: Any, spool: Path) -> None:
    response = post(client, _metrics(), _token(user, Scope.INGEST), encoding="json", gzipped=True)
    assert (response.status_code, response["Content-Type"]) == (200, "application/json")
    assert orjson.loads(response.content) == {}
    assert len(otlp_spool.pending_files()) == 1


def test_invalid_records_are_counted_in_partial_success_and_spooled_for_quarantine(
    client: Client, user: Any, spool: Path
) -> None:
    request = _metrics(temporality=0)  # a sum must say delta or cumulative
    response = post(client, request, _token(user, Scope.INGEST))
    assert response.status_code == 200
    partial = ExportMetricsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_data_points == 2  # both points of the rejected metric
    assert partial.error_message == (
        "resourceMetrics[0].scopeMetrics[0].metrics[0]: "
        "claude_code.lines_of_code.count: a sum without a temporality"
    )
    [path] = otlp_spool.pending_files()
    [rejected] = otlp_spool.read(path).rejected
    assert (rejected.position, rejected.weight) == (0, 2)
    assert orjson.loads(rejected.raw)["name"] == "claude_code.lines_of_code.count"


def test_who_may_send(client: Client, user: Any, spool: Path) -> None:
    no_token = post(client, _metrics(), None)
    assert no_token.status_code == 401
    bad = post(client, _metrics(), "fls_not-a-token", encoding="json")
    assert bad.status_code == 401
    assert orjson.loads(bad.content) == {
        "code": 401,
        "message": "the token is not valid (unknown, revoked or expired)",
    }
    read = post(client, _metrics(), _token(user, Scope.READ), encoding="json")
    assert read.status_code == 403
    assert "a read token may only read" in orjson.loads(read.content)["message"]
    assert post(client, _metrics(), _token(user, Scope.ADMIN)).status_code == 200
    assert len(otlp_spool.pending_files()) == 1  # only the admin token's request


def test_bad_bodies_and_methods(client: Client, user: Any, spool: Path, monkeypatch: Any) -> None:
    token = _token(user, Scope.INGEST)
    auth = f"Bearer {token}"
    garbage = client.post(
        "/v1/logs", b"\xff\xfe", content_type="application/x-protobuf", HTTP_AUTHORIZATION=auth
    )
    assert garbage.status_code == 400
    plain = client.post("/v1/logs", b"x", content_type="text/plain", HTTP_AUTHORIZATION=auth)
    assert plain.status_code == 415
    assert orjson.loads(plain.content)["message"].startswith("Content-Type text/plain is not OTLP")
    assert client.get("/v1/traces", HTTP_AUTHORIZATION=auth).status_code == 405
    monkeypatch.setattr(dashboard.otlp, "MAX_OTLP_BODY_BYTES", 10)
    monkeypatch.setattr(ingest.sources.otlp, "MAX_OTLP_BODY_BYTES", 10)
    big = post(client, _metrics(), token)
    assert big.status_code == 413
    assert otlp_spool.pending_files() == []


def test_a_full_spool_pushes_back_with_retry_after_and_keeps_what_it_holds(
    client: Client, user: Any, spool: Path, monkeypatch: Any
) -> None:
    token = _token(user, Scope.INGEST)
    monkeypatch.setattr(otlp_spool, "FULL_CHECK_S", 3600.0)  # one look, trusted meanwhile
    monkeypatch.setattr(otlp_spool, "_last_look", None)
    assert post(client, _metrics(), token).status_code == 200
    monkeypatch.setattr(otlp_spool, "max_bytes", lambda: 1)
    # Within FULL_CHECK_S the last look (not full) holds...
    assert post(client, _metrics(), token).status_code == 200
    # ...the next look finds the spool over its bound.
    monkeypatch.setattr(otlp_spool, "_last_look", None)
    refused = post(client, _metrics(), token, encoding="json")
    assert (refused.status_code, refused["Retry-After"]) == (503, "5")
    assert len(otlp_spool.pending_files()) == 2


def test_a_disk_that_refuses_the_write_is_a_503_not_an_acknowledgement(
    client: Client, user: Any, spool: Path, monkeypatch: Any
) -> None:
    def no_space(*_: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(otlp_spool, "append", no_space)
    refused = post(client, _metrics(), _token(user, Scope.INGEST), encoding="json")
    assert (refused.status_code, refused["Retry-After"]) == (503, "30")
    assert "No space left on device" in orjson.loads(refused.content)["message"]


def test_the_web_database_out_of_reach_is_a_503_to_retry_nothing_spooled(
    client: Client, user: Any, spool: Path, monkeypatch: Any
) -> None:
    from django.db import OperationalError

    token = _token(user, Scope.INGEST)
    monkeypatch.setattr(dashboard.otlp, "_admitted", {})  # no admission cached

    def unreachable(raw: str) -> None:
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed')

    monkeypatch.setattr(ApiToken, "authenticate", unreachable)
    refused = post(client, _metrics(), token, encoding="json")
    assert (refused.status_code, refused["Retry-After"]) == (503, "5")
    assert orjson.loads(refused.content)["message"] == (
        "the web database is unreachable; retry later"
    )
    assert otlp_spool.pending_files() == []


def test_a_team_members_data_is_tagged_with_their_team_and_may_name_no_other(
    client: Client, db: None, spool: Path
) -> None:
    from django.contrib.auth.models import User

    from analytics.costs.models import Team
    from tests.people import grant

    infra, web = Team.objects.create(name="infra"), Team.objects.create(name="web")
    Team.objects.create(name="billing")
    bea = grant(User.objects.create_user("bea", "bea@example.com", "x"), "editor", (infra, web))
    token = _token(bea, Scope.INGEST)
    request = _metrics()
    assert post(client, request, token).status_code == 200
    # No team.id on the resource: the sender's first team, by name.
    assert {p["team"] for p in otlp_spool.read(otlp_spool.pending_files()[0]).points} == {"infra"}

    request.resource_metrics[0].resource.attributes.add(
        key="team.id"
    ).value.string_value = "billing"
    refused = post(client, request, token)
    partial = ExportMetricsServiceResponse.FromString(refused.content).partial_success
    assert partial.rejected_data_points == 2
    assert "team.id billing is not one of your teams" in partial.error_message


def test_a_revoked_token_is_refused_once_its_admission_has_run_out(
    client: Client, user: Any, spool: Path, monkeypatch: Any
) -> None:
    from django.utils import timezone

    token = _token(user, Scope.INGEST)
    assert post(client, _metrics(), token).status_code == 200
    ApiToken.objects.filter(user=user).update(revoked_at=timezone.now())
    # Within TOKEN_CACHE_S the process still admits it (docs/otlp.md says so)...
    assert post(client, _metrics(), token).status_code == 200
    # ...and after it, reads the token again and refuses it.
    later = dashboard.otlp.time.monotonic() + dashboard.otlp.TOKEN_CACHE_S + 1
    monkeypatch.setattr(dashboard.otlp.time, "monotonic", lambda: later)
    assert post(client, _metrics(), token).status_code == 401
