"""A Claude Code session sent over OpenTelemetry, from the receiver (or map_request and the
spool) through the loader to GET /api/runs: its totals as counted by hand from the
fixture, an exporter's retries stored once, and an API call that a transcript import of
the same session also brings counted once, whichever arrives first."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

import warehouse
from dashboard.models import ApiToken
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.pipelines.claude_code import run_claude_code
from ingest.sources.otlp import JSON, Signal, decode
from lib.access import Scope
from tests.otlp import post

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "claude_code"
SESSION = "8f0c2d1e-5b7a-4c3d-9e21-6a4b3c2d1e0f"

# The fixture by hand: 12 log records, of which the tool_decision is not kept, and the
# Bash result with a git_commit_id is a commit too: 12 events; the two subagents' spans
# add a spawn each: 14. Agents: main, agent-a1b2c3d, agent-e5f6a7b. Errors: the
# api_error and the failed pytest run. Tokens of the three api_requests:
# input 1200 + 80 + 900, output 350 + 620 + 210.
OTLP_ONLY = {
    "run": SESSION,
    "first_ts": "2026-03-04T10:00:00.120Z",
    "last_ts": "2026-03-04T10:03:30.500Z",
    "agents": 3,
    "events": 14,
    "commits": 1,
    "errors": 2,
    "input_tokens": 2180,
    "output_tokens": 1180,
    "source_kind": "otlp",
    "status": "idle",  # its last event is long past
    "tokens": 3360,  # 2180 + 1180
    # No transcript: no project, branch or first prompt to name the session by.
    "label": None,
    "project": None,
    "cwd": None,
    "branch": None,
    "first_prompt": None,
}


@pytest.fixture
def spool(settings: Any, tmp_path: Path, lake: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return otlp_spool.spool_dir()


def fixture_request(name: str, signal: Signal) -> Message:
    return decode(signal, (FIXTURE / name).read_bytes(), JSON)


def spool_request(signal: Signal, request: Message) -> Path:
    batch = map_request(signal, request, Sender("alice"))
    digest = otlp_spool.body_digest(request.SerializeToString())
    return otlp_spool.append(batch, Sender("alice"), digest)


def send_session() -> None:
    spool_request(Signal.LOGS, fixture_request("logs.json", Signal.LOGS))
    spool_request(Signal.TRACES, fixture_request("traces.json", Signal.TRACES))


def listed_runs(client: Client, auth_headers: dict[str, str]) -> list[dict[str, Any]]:
    response = client.get("/api/runs", headers=auth_headers)
    assert response.status_code == 200, response.content
    return list(response.json())


def test_the_session_sent_through_the_receiver_is_a_run_with_its_totals(
    client: Client, user: Any, spool: Path, auth_headers: dict[str, str]
) -> None:
    token = ApiToken.issue(user, "shipper", scope=Scope.INGEST)[1]
    logs = fixture_request("logs.json", Signal.LOGS)
    assert post(client, logs, token).status_code == 200
    assert post(client, fixture_request("traces.json", Signal.TRACES), token, encoding="json",
                gzipped=True).status_code == 200  # fmt: skip
    summary = otlp.drain(seconds=10)
    assert (summary.files, summary.events, summary.duplicates, summary.quarantined) == (
        2, 14, 0, 0
    )  # fmt: skip
    assert listed_runs(client, auth_headers) == [OTLP_ONLY]


def test_an_exporters_retries_are_stored_once(
    client: Client, spool: Path, auth_headers: dict[str, str]
) -> None:
    send_session()
    send_session()  # the exporter timed out and sent both again
    first = otlp.drain(seconds=10)
    assert (first.files, first.events, first.duplicates) == (4, 14, 14)
    send_session()  # and once more, after they were loaded
    again = otlp.drain(seconds=10)
    assert (again.files, again.events, again.duplicates) == (2, 0, 14)
    assert listed_runs(client, auth_headers) == [OTLP_ONLY]
    [people] = warehouse.fetch_all(
        "SELECT count(DISTINCT person) AS people, min(person) AS person, min(team) AS team,"
        " count(*) FILTER (WHERE request_id IS NOT NULL) AS calls FROM events"
    )
    assert people == {"people": 1, "person": "alice@example.com", "team": "platform", "calls": 3}


def calls_by_agent() -> list[tuple[Any, ...]]:
    rows = warehouse.fetch_all(
        "SELECT request_id, agent, parent FROM events WHERE event = 'llm_call' ORDER BY ts"
    )
    return [tuple(r.values()) for r in rows]


# The third call was made inside subagent a1b2c3d, as its llm_request span says.
CALL_AGENTS = [
    ("req_011CV1aaaAAAaaaAAAaaa1", "main", None),
    ("req_011CV1bbbBBBbbbBBBbbb2", "main", None),
    ("req_011CV1cccCCCcccCCCccc3", "agent-a1b2c3d", "main"),
]


@pytest.mark.parametrize("first", [Signal.LOGS, Signal.TRACES])
def test_a_subagents_call_is_its_agents_whichever_of_event_and_span_comes_first(
    client: Client, spool: Path, auth_headers: dict[str, str], first: Signal
) -> None:
    names = {Signal.LOGS: "logs.json", Signal.TRACES: "traces.json"}
    second = Signal.TRACES if first is Signal.LOGS else Signal.LOGS
    spool_request(first, fixture_request(names[first], first))
    otlp.drain(seconds=10)
    spool_request(second, fixture_request(names[second], second))
    otlp.drain(seconds=10)
    assert calls_by_agent() == CALL_AGENTS
    assert listed_runs(client, auth_headers) == [OTLP_ONLY]
    spool_request(Signal.TRACES, fixture_request("traces.json", Signal.TRACES))  # a retry
    assert otlp.drain(seconds=10).events == 0
    assert calls_by_agent() == CALL_AGENTS
    [spawns] = warehouse.fetch_all(
        "SELECT count(*) AS spawns, count(request_id) AS with_call FROM events"
        " WHERE event = 'spawn'"
    )
    assert spawns == {"spawns": 2, "with_call": 0}


def transcript(folder: Path) -> Path:
    """The same session's transcript: the first API call of the OTLP export (its
    requestId) and one call the export did not carry."""

    def assistant(ts: str, message: str, request: str, usage: dict[str, int]) -> bytes:
        line = {
            "type": "assistant",
            "sessionId": SESSION,
            "timestamp": ts,
            "uuid": f"u-{message}",
            "requestId": request,
            "message": {
                "id": message,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": "ok"}],
                "usage": usage,
            },
        }
        return orjson.dumps(line) + b"\n"

    shared = {"input_tokens": 1200, "output_tokens": 350, "cache_read_input_tokens": 18000,
              "cache_creation_input_tokens": 2400}  # fmt: skip
    own = {"input_tokens": 5, "output_tokens": 7}
    path = folder / f"{SESSION}.jsonl"
    path.write_bytes(
        assistant("2026-03-04T10:00:05.480Z", "msg_A", "req_011CV1aaaAAAaaaAAAaaa1", shared)
        + assistant("2026-03-04T10:00:50.000Z", "msg_B", "req_transcript_only", own)
    )
    return path


# Both ways: the OTLP totals and the transcript's own call (input 5, output 7, one more
# event); the call both brought counts once. The run's source_kind is the first by name.
BOTH = {
    **OTLP_ONLY,
    "events": 15,
    "input_tokens": 2185,
    "output_tokens": 1187,
    "source_kind": "claude-code",
    "tokens": 3372,  # 2185 + 1187
}


def test_a_call_seen_by_otlp_first_is_not_stored_again_by_the_transcript(
    client: Client, spool: Path, tmp_path: Path, auth_headers: dict[str, str]
) -> None:
    send_session()
    otlp.drain(seconds=10)
    imported = run_claude_code([str(transcript(tmp_path))])
    assert (imported.accepted, imported.duplicates) == (1, 1)
    assert listed_runs(client, auth_headers) == [BOTH]


def test_a_call_seen_by_the_transcript_first_is_not_stored_again_by_otlp(
    client: Client, spool: Path, tmp_path: Path, auth_headers: dict[str, str]
) -> None:
    assert run_claude_code([str(transcript(tmp_path))]).accepted == 2
    send_session()
    loaded = otlp.drain(seconds=10)
    assert loaded.events == 13  # the 14 less the call the transcript stored
    assert listed_runs(client, auth_headers) == [BOTH]
    calls = warehouse.fetch_all(
        "SELECT source_kind, request_id FROM events WHERE event = 'llm_call' ORDER BY request_id"
    )
    assert [(c["source_kind"], c["request_id"]) for c in calls] == [
        ("claude-code", "req_011CV1aaaAAAaaaAAAaaa1"),
        ("otlp", "req_011CV1bbbBBBbbbBBBbbb2"),
        ("otlp", "req_011CV1cccCCCcccCCCccc3"),
        ("claude-code", "req_transcript_only"),
    ]


def test_a_record_it_cannot_use_is_quarantined_and_the_rest_of_the_request_stored(
    client: Client, spool: Path, auth_headers: dict[str, str]
) -> None:
    logs = fixture_request("logs.json", Signal.LOGS)
    assert isinstance(logs, ExportLogsServiceRequest)
    records = logs.resource_logs[0].scope_logs[0].log_records
    bad = records.add()
    bad.CopyFrom(records[1])  # the first api_request, sent again without its session.id
    del bad.attributes[0]
    spool_request(Signal.LOGS, logs)
    spool_request(Signal.TRACES, fixture_request("traces.json", Signal.TRACES))
    loaded = otlp.drain(seconds=10)
    assert (loaded.events, loaded.quarantined) == (14, 1)
    [row] = warehouse.fetch_all("SELECT line_no, reason FROM quarantine")
    assert row == {
        "line_no": 12,
        "reason": "resourceLogs[0].scopeLogs[0].logRecords[12]: session.id missing",
    }
    assert listed_runs(client, auth_headers) == [OTLP_ONLY]
