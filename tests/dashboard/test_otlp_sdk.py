"""The receiver as a real OpenTelemetry SDK exporter sees it: the SDK's own OTLP/HTTP
exporters (protobuf, gzip) against a live server with an ingest-scoped token, metric
points stored as the SDK recorded them in delta and cumulative temporality, Claude
Code-shaped log records acknowledged and spooled as the very request the SDK sent, and
an ingest token refused on every read endpoint of the API."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from django.test import Client
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import Counter, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

import warehouse
from dashboard.api import api
from dashboard.models import ApiToken
from ingest.pipelines import otlp, otlp_spool
from lib.access import Scope

SESSION = "9f6c2a1e-5b7d-4c3e-8a10-2f4e6d8b0c11"
RESOURCE = {
    "service.name": "claude-code",
    "service.version": "2.1.3",
    "team.id": "platform",
    "department": "engineering",
    "cost_center": "cc-42",
}
# Both records' standard attributes (docs/otlp.md, Claude Code's monitoring page).
STANDARD: dict[str, str] = {
    "session.id": SESSION,
    "user.email": "ana@example.com",
    "user.id": "u-7f3a",
    "organization.id": "org-1",
    "terminal.type": "vscode",
}
API_REQUEST: dict[str, str | int | float] = {
    **STANDARD,
    "event.name": "api_request",
    "event.timestamp": "2026-03-01T10:00:00.000Z",
    "event.sequence": 1,
    "model": "claude-sonnet-4-5-20250929",
    "input_tokens": 1200,
    "output_tokens": 340,
    "cache_read_tokens": 24000,
    "cache_creation_tokens": 512,
    "cost_usd": 0.0412,
    "duration_ms": 5321,
    "speed": "normal",
    "query_source": "repl_main_thread",
    "request_id": "req_011CXyz0001",
}
TOOL_RESULT: dict[str, str | int | float] = {
    **STANDARD,
    "event.name": "tool_result",
    "event.timestamp": "2026-03-01T10:00:06.000Z",
    "event.sequence": 2,
    "tool_name": "Bash",
    "success": "true",
    "duration_ms": 812,
    "tool_use_id": "toolu_01ABC",
}
API_AT = int(datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC).timestamp()) * 1_000_000_000
TOOL_AT = API_AT + 6_000_000_000


@pytest.fixture
def spool(settings: Any, tmp_path: Path, lake: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return otlp_spool.spool_dir()


@pytest.fixture
def token(transactional_db: None, user: Any) -> str:
    return ApiToken.issue(user, "laptop", scope=Scope.INGEST)[1]


class Wire:
    """A requests session that keeps every answer's status and every request's body, as
    the exporter sent them."""

    def __init__(self) -> None:
        self.session = requests.Session()
        self.statuses: list[int] = []
        self.bodies: list[bytes] = []
        self.session.hooks["response"].append(self._seen)

    def _seen(self, response: requests.Response, *_args: Any, **_kwargs: Any) -> None:
        self.statuses.append(response.status_code)
        body = response.request.body
        self.bodies.append(body if isinstance(body, bytes) else b"")


@pytest.fixture
def wire() -> Iterator[Wire]:
    seen = Wire()
    yield seen
    seen.session.close()


def _meter(live_server: Any, token: str, wire: Wire, temporality: AggregationTemporality) -> Any:
    exporter = OTLPMetricExporter(
        endpoint=f"{live_server.url}/v1/metrics",
        headers={"Authorization": f"Bearer {token}"},
        compression=Compression.Gzip,
        session=wire.session,
        preferred_temporality={Counter: temporality},
    )
    # An interval far past the test: only force_flush exports.
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    return MeterProvider(metric_readers=[reader], resource=Resource.create(RESOURCE))


def _points() -> list[tuple[Any, ...]]:
    return [
        tuple(r.values())
        for r in warehouse.fetch_all(
            "SELECT json_extract_string(attrs, '$.type') AS type, value, temporality, kind, unit,"
            " person, team, department, cost_center, session FROM otlp_points"
            " ORDER BY ts, type"
        )
    ]


@pytest.mark.parametrize(
    ("temporality", "exports", "stored"),
    [
        # added 5 then 3, removed 2 once, two flushes: delta exports what changed since
        # the last export (removed has no point in the second; the shutdown's collection
        # finds nothing new and sends nothing), cumulative the running totals, and its
        # shutdown exports them once more, at a later time.
        (
            AggregationTemporality.DELTA,
            2,
            [("added", 5.0), ("removed", 2.0), ("added", 3.0)],
        ),
        (
            AggregationTemporality.CUMULATIVE,
            3,
            [("added", 5.0), ("removed", 2.0)] + [("added", 8.0), ("removed", 2.0)] * 2,
        ),
    ],
    ids=["delta", "cumulative"],
)
def test_sdk_metric_points_are_stored_as_recorded(
    live_server: Any,
    token: str,
    spool: Path,
    wire: Wire,
    temporality: AggregationTemporality,
    exports: int,
    stored: list[tuple[str, float]],
) -> None:
    provider = _meter(live_server, token, wire, temporality)
    lines = provider.get_meter("com.anthropic.claude_code").create_counter(
        "claude_code.lines_of_code.count", unit="count"
    )
    people = {"session.id": SESSION, "user.email": "ana@example.com"}
    lines.add(5, {**people, "type": "added"})
    lines.add(2, {**people, "type": "removed"})
    assert provider.force_flush()
    lines.add(3, {**people, "type": "added"})
    assert provider.force_flush()
    provider.shutdown()
    assert wire.statuses == [200] * exports
    assert len(otlp_spool.pending_files()) == exports
    summary = otlp.drain(seconds=30)
    assert (summary.files, summary.points) == (exports, len(stored))
    name = "delta" if temporality is AggregationTemporality.DELTA else "cumulative"
    tagged = ("sum", "count", "ana@example.com", "platform", "engineering", "cc-42", SESSION)
    assert _points() == [(kind, value, name, *tagged) for kind, value in stored]
    assert otlp_spool.pending_files() == []


def _send_claude_code_logs(live_server: Any, token: str, wire: Wire) -> None:
    exporter = OTLPLogExporter(
        endpoint=f"{live_server.url}/v1/logs",
        headers={"Authorization": f"Bearer {token}"},
        compression=Compression.Gzip,
        session=wire.session,
    )
    provider = LoggerProvider(resource=Resource.create(RESOURCE))
    provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    logger = provider.get_logger("com.anthropic.claude_code.events")
    logger.emit(timestamp=API_AT, body="claude_code.api_request", attributes=API_REQUEST)
    logger.emit(timestamp=TOOL_AT, body="claude_code.tool_result", attributes=TOOL_RESULT)
    assert provider.force_flush()
    provider.shutdown()


def test_sdk_claude_code_logs_are_acknowledged_and_spooled(
    live_server: Any, token: str, spool: Path, wire: Wire
) -> None:
    _send_claude_code_logs(live_server, token, wire)
    assert wire.statuses == [200]
    [path] = otlp_spool.pending_files()
    spooled = otlp_spool.read(path)
    assert (spooled.signal, spooled.source) == ("logs", "otlp/logs/alice")
    # The file is the request the SDK sent: the digest of its body, inflated.
    assert spooled.digest == otlp_spool.body_digest(gzip.decompress(wire.bodies[0]))
    assert spooled.rejected == []  # valid Claude Code records are never rejected


def test_sdk_claude_code_logs_become_events(
    live_server: Any, token: str, spool: Path, wire: Wire
) -> None:
    """What the Claude Code mapper makes of the SDK's records (docs/otlp.md's table), and
    the run on /api/runs."""
    _send_claude_code_logs(live_server, token, wire)
    assert wire.statuses == [200]
    assert otlp.drain(seconds=30).events == 2
    rows = warehouse.fetch_all(
        "SELECT run, agent, event, model, input_tokens, output_tokens, cached_input_tokens,"
        " cache_write_tokens, cost_usd, tool, ok, duration_ms, request_id, person, team"
        " FROM events ORDER BY ts"
    )
    common = {"run": SESSION, "agent": "main", "person": "ana@example.com", "team": "platform"}
    assert rows == [
        {
            **common,
            "event": "llm_call",
            "model": "claude-sonnet-4-5-20250929",
            "input_tokens": 1200,
            "output_tokens": 340,
            "cached_input_tokens": 24000,
            "cache_write_tokens": 512,
            "cost_usd": 0.0412,
            "tool": None,
            "ok": None,
            "duration_ms": 5321.0,
            "request_id": "req_011CXyz0001",
        },
        {
            **common,
            "event": "tool_call",
            "model": None,
            "input_tokens": None,
            "output_tokens": None,
            "cached_input_tokens": None,
            "cache_write_tokens": None,
            "cost_usd": None,
            "tool": "Bash",
            "ok": True,
            "duration_ms": 812.0,
            "request_id": None,
        },
    ]
    admin = Client()
    admin.force_login(ApiToken.objects.get().user)
    [run] = [r for r in admin.get("/api/runs").json() if r["run"] == SESSION]
    assert (run["events"], run["input_tokens"], run["output_tokens"]) == (2, 1200, 340)


def _get_operations() -> list[str]:
    """Every GET path of the API's OpenAPI schema, its path parameters filled in."""
    paths = []
    for path, operations in api.get_openapi_schema()["paths"].items():
        if "get" in operations:
            paths.append(re.sub(r"\{[^}]+\}", "1", path))
    return paths


def test_an_ingest_token_is_refused_on_every_read_endpoint(live_server: Any, token: str) -> None:
    walked = 0
    for path in _get_operations():
        if path == "/api/health":  # says only that the server is up, to anyone
            continue
        answer = requests.get(
            live_server.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        assert answer.status_code == 403, path
        assert "ingest token" in answer.json()["detail"], path
        walked += 1
    assert walked > 30
