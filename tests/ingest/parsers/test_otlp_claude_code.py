"""Claude Code's OpenTelemetry mapped onto agent events: each documented event as the row
it becomes (the fixture session, OTLP/JSON as Claude Code exports it), spans as the agent
tree, and the records of this source that cannot be used rejected with their reason."""

from pathlib import Path
from typing import Any

import pytest

from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.sources.otlp import JSON, Signal, decode
from tests.otlp import log_record, logs_request, span, traces_request

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "claude_code"
SESSION = "8f0c2d1e-5b7a-4c3d-9e21-6a4b3c2d1e0f"
MODEL = "claude-sonnet-4-5-20250929"
PEOPLE = {
    "person": "alice@example.com",
    "organization": "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
    "team": "platform",
    "department": None,
    "cost_center": None,
}


def fixture_rows(name: str, signal: Signal) -> list[dict[str, Any]]:
    request = decode(signal, (FIXTURE / name).read_bytes(), JSON)
    batch = map_request(signal, request, Sender("alice"))
    assert batch.rejected == []
    return batch.events


def row(line: int, ts: str, **values: Any) -> dict[str, Any]:
    # The main agent's rows carry role main, as a transcript import names it.
    return {
        **PEOPLE,
        "run": SESSION,
        "agent": "main",
        "role": "main",
        "ts": ts,
        "source_line": line,
        **values,
    }


def test_every_event_of_the_session_becomes_its_row() -> None:
    rows = fixture_rows("logs.json", Signal.LOGS)
    assert rows == [
        row(0, "2026-03-04T10:00:00.120000Z", id="seq:1", event="prompt",
            attrs='{"prompt.id":"p-1","prompt_length":42,"terminal.type":"vscode"}'),
        row(1, "2026-03-04T10:00:05.480000Z", id="req:req_011CV1aaaAAAaaaAAAaaa1",
            event="llm_call", model=MODEL, input_tokens=1200, output_tokens=350,
            cached_input_tokens=18000, cache_write_tokens=2400, cost_usd=0.0231,
            duration_ms=4210.0, speed="normal", request_id="req_011CV1aaaAAAaaaAAAaaa1",
            attrs='{"prompt.id":"p-1","query_source":"repl_main_thread",'
            '"terminal.type":"vscode"}'),
        row(2, "2026-03-04T10:00:09.002000Z", id="seq:3", event="tool_call", tool="Read",
            ok=True, duration_ms=12.0,
            attrs='{"decision_source":"config","decision_type":"accept","prompt.id":"p-1",'
            '"terminal.type":"vscode","tool_result_size_bytes":5120,'
            '"tool_use_id":"toolu_01ReadAAAA"}'),
        # seq 4, a tool_decision, is Claude Code's and not kept.
        row(4, "2026-03-04T10:00:14.905000Z", id="seq:5", event="tool_call", tool="Bash",
            ok=True, duration_ms=870.0, attrs=_bash_attrs()),
        row(4, "2026-03-04T10:00:14.905000Z", id="commit:4e1f2a9", event="commit",
            commit_sha="4e1f2a9", ok=True),
        row(5, "2026-03-04T10:00:20.000000Z", id="req:req_011CV1bbbBBBbbbBBBbbb2",
            event="llm_call", model=MODEL, input_tokens=80, output_tokens=620,
            cached_input_tokens=21000, cache_write_tokens=0, cost_usd=0.0158,
            duration_ms=6100.0, speed="normal", request_id="req_011CV1bbbBBBbbbBBBbbb2",
            attrs='{"prompt.id":"p-1","query_source":"repl_main_thread",'
            '"terminal.type":"vscode"}'),
        row(6, "2026-03-04T10:00:30.250000Z", id="seq:7", event="error", model=MODEL,
            duration_ms=2100.0, request_id=None, error_kind="api", error_message="Overloaded",
            attrs='{"attempt":1,"prompt.id":"p-1","status_code":"529",'
            '"terminal.type":"vscode"}'),
        row(7, "2026-03-04T10:00:41.700000Z", id="req:req_011CV1cccCCCcccCCCccc3",
            event="llm_call", model="claude-haiku-4-5-20251001", input_tokens=900,
            output_tokens=210, cached_input_tokens=0, cache_write_tokens=3100,
            cost_usd=0.0151, duration_ms=3300.0, speed=None,
            request_id="req_011CV1cccCCCcccCCCccc3",
            attrs='{"prompt.id":"p-1","terminal.type":"vscode"}'),
        row(8, "2026-03-04T10:01:02.000000Z", id="seq:9", event="stop", agent="agent-a1b2c3d",
            parent="main", role="Explore", duration_ms=21000.0,
            attrs='{"agent_type":"Explore","prompt.id":"p-1","terminal.type":"vscode",'
            '"total_tool_uses":4}'),
        row(9, "2026-03-04T10:02:00.000000Z", id="seq:10", event="summary",
            attrs='{"post_tokens":12000,"pre_tokens":150000,"prompt.id":"p-1",'
            '"terminal.type":"vscode","trigger":"auto"}'),
        row(10, "2026-03-04T10:03:00.000000Z", id="seq:11", event="prompt",
            attrs='{"prompt":"run the tests now","prompt.id":"p-2","prompt_length":17,'
            '"terminal.type":"vscode"}'),
        row(11, "2026-03-04T10:03:30.500000Z", id="seq:12", event="tool_call", tool="Bash",
            ok=False, duration_ms=4000.0,
            attrs='{"decision_source":"config","decision_type":"accept","error":"Exit code 1",'
            '"prompt.id":"p-2","terminal.type":"vscode",'
            '"tool_parameters":"{\\"bash_command\\":\\"pytest\\",\\"full_command\\":'
            '\\"pytest -q\\",\\"description\\":\\"Run the tests\\"}",'
            '"tool_use_id":"toolu_01BashTests"}'),
    ]  # fmt: skip


def _bash_attrs() -> str:
    params = (
        '{\\"bash_command\\":\\"git\\",\\"full_command\\":\\"git commit -m '
        '\\\\\\"parser: accept empty lines\\\\\\"\\",\\"description\\":\\"Commit the fix\\",'
        '\\"git_commit_id\\":\\"4e1f2a9\\"}'
    )
    return (
        '{"decision_source":"user_temporary","decision_type":"accept","prompt.id":"p-1",'
        f'"terminal.type":"vscode","tool_parameters":"{params}",'
        '"tool_use_id":"toolu_01BashCommit"}'
    )


def test_subagents_spans_make_the_agent_tree_and_nothing_else() -> None:
    trace = "5b8efff798038103d269b633813fc60c"
    rows = fixture_rows("traces.json", Signal.TRACES)
    # The interaction, the main agent's call and the tool span add no row; a subagent's
    # call names its agent (the loader moves that api_request's llm_call there).
    assert rows == [
        row(2, "2026-03-04T10:00:38.400000Z", id="spawn:agent-a1b2c3d", event="spawn",
            agent="agent-a1b2c3d", parent="main", role="Explore",
            request_id="req_011CV1cccCCCcccCCCccc3", trace_id=trace,
            span_id="eee19b7ec3c1b176", parent_span_id="eee19b7ec3c1b174",
            person=None, organization=None),
        row(3, "2026-03-04T10:00:50.000000Z", id="spawn:agent-e5f6a7b", event="spawn",
            agent="agent-e5f6a7b", parent="agent-a1b2c3d", role=None,
            request_id="req_011CV1dddDDDdddDDDddd4", trace_id=trace,
            span_id="eee19b7ec3c1b177", parent_span_id="eee19b7ec3c1b176",
            person=None, organization=None),
    ]  # fmt: skip


RESOURCE = {"service.name": "claude-code"}
WHEN = "2026-03-04T10:00:00"


def one_record(attrs: dict[str, Any], body: str = "") -> Any:
    return map_request(
        Signal.LOGS, logs_request(RESOURCE, [log_record(WHEN, attrs, body)]), Sender("alice")
    )


def test_the_event_name_is_read_from_the_body_too() -> None:
    batch = one_record(
        {"session.id": "s-1", "event.sequence": 7, "prompt_length": 3}, "claude_code.user_prompt"
    )
    assert [(e["event"], e["id"]) for e in batch.events] == [("prompt", "seq:7")]
    prefixed = one_record({"session.id": "s-1", "event.name": "claude_code.compaction"})
    assert [(e["event"], e["id"]) for e in prefixed.events] == [
        ("summary", "t:2026-03-04T10:00:00.000000Z:compaction")
    ]


@pytest.mark.parametrize(
    ("attrs", "body", "reason"),
    [
        ({"event.name": "api_request", "model": "m"}, "", "session.id missing"),
        ({"session.id": "s-1"}, "", "no event name (event.name or a claude_code.* body)"),
        (
            {"session.id": "s-1", "event.name": "api_request", "model": "m", "input_tokens": -4},
            "",
            "input_tokens -4 is not a count",
        ),
        (
            {"session.id": "s-1", "event.name": "api_request", "output_tokens": 1},
            "",
            "model missing",
        ),
        ({"session.id": "s-1", "event.name": "tool_result"}, "", "tool_name missing"),
        (
            {"session.id": "s-1", "event.name": "tool_result", "tool_name": "Bash",
             "success": "maybe"},
            "",
            "success 'maybe' is not true or false",
        ),
    ],
)  # fmt: skip
def test_a_record_it_cannot_use_is_rejected_with_its_reason(
    attrs: dict[str, Any], body: str, reason: str
) -> None:
    batch = one_record(attrs, body)
    assert batch.events == []
    assert [r.reason for r in batch.rejected] == [reason]


def test_a_record_without_a_time_is_rejected() -> None:
    record = log_record(WHEN, {"session.id": "s-1", "event.name": "user_prompt"})
    record.time_unix_nano = 0
    record.observed_time_unix_nano = 0
    batch = map_request(Signal.LOGS, logs_request(RESOURCE, [record]), Sender("alice"))
    assert [r.reason for r in batch.rejected] == ["time 0 ns is outside 1970-2199 (or not set)"]


def test_event_timestamp_stands_in_for_a_record_time_that_is_not_set() -> None:
    record = log_record(
        WHEN,
        {
            "session.id": "s-1",
            "event.name": "user_prompt",
            "event.timestamp": "2026-03-04T11:00:01.5Z",
        },
    )
    record.time_unix_nano = 0
    batch = map_request(Signal.LOGS, logs_request(RESOURCE, [record]), Sender("alice"))
    assert [e["ts"] for e in batch.events] == ["2026-03-04T11:00:01.500000Z"]


def test_other_services_and_other_claude_code_events_are_not_kept() -> None:
    other = map_request(
        Signal.LOGS,
        logs_request({"service.name": "nginx"}, [log_record(WHEN, {"session.id": "s"})]),
        Sender("alice"),
    )
    decision = one_record({"session.id": "s-1", "event.name": "tool_decision"})
    # nginx's record is no known source's; the decision is Claude Code's, left out on purpose.
    assert (other.events, other.rejected, other.ignored, other.skipped) == ([], [], 1, 0)
    assert (decision.events, decision.rejected, decision.ignored, decision.skipped) == (
        [],
        [],
        0,
        1,
    )
    assert decision.warning() == ""


def test_a_subagent_span_without_a_session_is_rejected() -> None:
    request = traces_request(
        RESOURCE,
        [span("claude_code.llm_request", "ab" * 16, "cd" * 8, WHEN, WHEN, {"agent_id": "x1"})],
    )
    batch = map_request(Signal.TRACES, request, Sender("alice"))
    assert [r.reason for r in batch.rejected] == ["session.id missing"]
