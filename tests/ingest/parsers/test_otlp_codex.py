"""Codex's OpenTelemetry log records -> events: the run is the conversation, token counts
read as a rollout import reads them (cached inside input, reasoning inside output), a
retried record is the same event, and a loaded session's totals are the hand-counted
ones."""

from pathlib import Path
from typing import Any

import orjson
import pytest

import warehouse
from analytics.runs import queries
from ingest.parsers.otlp import OtlpBatch, Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.sources.otlp import Signal, decode
from tests.conftest import FIXTURE_ROOT
from tests.otlp import log_record, logs_request

SESSION = FIXTURE_ROOT / "otlp" / "codex" / "session.json"
RUN = "0199c3a2-5b1e-7d40-9a61-3f2c8e4d7b10"


def _session() -> Any:
    return decode(Signal.LOGS, SESSION.read_bytes(), "json")


def _map(request: Any) -> OtlpBatch:
    return map_request(Signal.LOGS, request, Sender("dana"))


def _row(event: dict[str, Any], *names: str) -> tuple[Any, ...]:
    return tuple(event.get(name) for name in names)


def test_a_session_becomes_one_run_of_one_agent_with_these_events() -> None:
    batch = _map(_session())
    # Codex's sse events other than response.completed (created, sandbox): left out.
    assert (batch.records, batch.ignored, batch.skipped, batch.rejected) == (13, 0, 2, [])
    assert {(e["run"], e["agent"]) for e in batch.events} == {(RUN, "main")}
    assert [(e["source_line"], e["event"], e["ts"][11:23]) for e in batch.events] == [
        (0, "spawn", "10:00:00.000"),
        (1, "prompt", "10:00:01.000"),
        (2, "api_request", "10:00:01.200"),
        (4, "llm_call", "10:00:05.000"),
        (5, "tool_decision", "10:00:05.100"),
        (6, "tool_call", "10:00:06.000"),
        (6, "commit", "10:00:06.000"),
        (8, "error", "10:00:06.500"),
        (9, "api_request", "10:00:07.500"),
        (10, "llm_call", "10:00:09.000"),
        (11, "tool_call", "10:00:10.000"),
        (12, "error", "10:00:11.000"),
    ]
    assert {e["person"] for e in batch.events} == {"dana@example.com"}
    assert {e["model"] for e in batch.events if e["event"] != "commit"} == {"gpt-5-codex"}


def test_token_counts_exclude_the_cached_part_and_keep_reasoning_in_output() -> None:
    calls = [e for e in _map(_session()).events if e["event"] == "llm_call"]
    names = (
        "input_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "output_tokens",
        "reasoning_output_tokens",
    )
    # 12000 input of which 8000 cached; 900 output of which 512 reasoning.
    # 15000 input of which 12000 cached; 400 output, no reasoning count logged.
    assert [_row(c, *names) for c in calls] == [(4000, 8000, 0, 900, 512), (3000, 12000, 0, 400, 0)]
    assert [c["id"][:16] for c in calls] == ["codex:sse_event:", "codex:sse_event:"]
    assert calls[0]["id"] != calls[1]["id"]


def test_tool_results_are_tool_calls_and_a_git_commit_in_one_is_a_commit() -> None:
    events = _map(_session()).events
    tools = [e for e in events if e["event"] == "tool_call"]
    assert [_row(t, "id", "tool", "ok", "duration_ms") for t in tools] == [
        ("call_A1", "shell", True, 850.0),
        ("call_B2", "apply_patch", False, 12.0),
    ]
    assert "output" not in orjson.loads(tools[0]["attrs"])
    [commit] = [e for e in events if e["event"] == "commit"]
    assert _row(
        commit,
        "id",
        "commit_sha",
        "commit_message",
        "commit_files",
        "commit_insertions",
        "commit_deletions",
    ) == ("commit:call_A1", "1a2b3c4", "fix parser", 2, 10, 3)


def test_api_requests_keep_attempt_and_status_and_failures_are_errors() -> None:
    events = _map(_session()).events
    requests = [e for e in events if e["event"] == "api_request"]
    assert [(r["duration_ms"], orjson.loads(r["attrs"])) for r in requests] == [
        (412.0, {"attempt": 1, "http.response.status_code": 200}),
        (300.0, {"attempt": 2, "http.response.status_code": 200}),
    ]
    errors = [e for e in events if e["event"] == "error"]
    assert [_row(e, "error_kind", "error_message", "duration_ms") for e in errors] == [
        ("api", "rate limited", 95.0),
        ("model", "context window exceeded", None),
    ]


def test_prompts_and_decisions_are_kept_without_a_redacted_text() -> None:
    events = _map(_session()).events
    [prompt] = [e for e in events if e["event"] == "prompt"]
    assert orjson.loads(prompt["attrs"]) == {"prompt_length": "42"}
    [decision] = [e for e in events if e["event"] == "tool_decision"]
    assert decision["tool"] == "shell"
    assert orjson.loads(decision["attrs"]) == {
        "call_id": "call_A1",
        "decision": "approved",
        "source": "config",
    }
    captured = _one("user_prompt", prompt_length="5", prompt="hello")
    assert orjson.loads(captured.events[0]["attrs"]) == {"prompt": "hello", "prompt_length": "5"}


def _one(name: str, service: str = "codex_tui", **attrs: Any) -> OtlpBatch:
    record = log_record(
        "2026-03-02T10:00:00",
        {"event.name": f"codex.{name}", "conversation.id": "c-1", **attrs},
    )
    return _map(logs_request({"service.name": service}, [record]))


def test_a_retried_record_is_the_same_event_and_another_record_is_not() -> None:
    first = [e["id"] for e in _map(_session()).events]
    again = [e["id"] for e in _map(_session()).events]
    assert first == again and len(set(first)) == 12
    one = _one("api_request", attempt=1, duration_ms="10").events[0]["id"]
    two = _one("api_request", attempt=2, duration_ms="10").events[0]["id"]
    assert one != two


def test_codex_is_known_by_its_service_or_its_event_names() -> None:
    assert len(_one("user_prompt", service="some-wrapper", prompt_length="1").events) == 1
    other = log_record("2026-03-02T10:00:00", {"event.name": "http.request", "run": "x"})
    batch = _map(logs_request({"service.name": "web"}, [other]))
    assert (batch.ignored, batch.events) == (1, [])


@pytest.mark.parametrize(
    ("attrs", "reason"),
    [
        (
            {"event.kind": "response.completed", "output_token_count": "5"},
            "response.completed without input_token_count and output_token_count",
        ),
        (
            {
                "event.kind": "response.completed",
                "input_token_count": "-4",
                "output_token_count": "5",
            },
            "input_token_count '-4' is not a count",
        ),
    ],
)
def test_a_record_it_cannot_use_is_rejected_with_its_reason(attrs: Any, reason: str) -> None:
    batch = _one("sse_event", **attrs)
    assert [r.reason for r in batch.rejected] == [reason]
    record = log_record("2026-03-02T10:00:00", {"event.name": "codex.user_prompt"})
    missing = _map(logs_request({"service.name": "codex-cli"}, [record]))
    assert [r.reason for r in missing.rejected] == ["conversation.id missing"]


def test_a_loaded_session_has_the_hand_counted_totals(
    settings: Any, tmp_path: Path, lake: Path
) -> None:
    settings.DATA_DIR = tmp_path
    for _ in range(2):  # the exporter retried the whole batch
        batch = _map(_session())
        otlp_spool.append(batch, Sender("dana"), otlp_spool.body_digest(SESSION.read_bytes()))
    summary = otlp.drain(seconds=10)
    assert (summary.events, summary.duplicates) == (12, 12)
    [run] = [r for r in queries.list_runs() if r.run == RUN]
    # 4000 + 3000 input (uncached), 900 + 400 output; errors: the 429, the failed
    # response and the rejected patch; one commit.
    assert (run.agents, run.events, run.commits, run.errors) == (1, 12, 1, 3)
    assert (run.input_tokens, run.output_tokens, run.source_kind) == (7000, 1300, "otlp")
    [row] = warehouse.fetch_all(
        "SELECT sum(cached_input_tokens) AS cached, sum(reasoning_output_tokens) AS reasoning "
        "FROM events WHERE run = ?",
        [RUN],
    )
    assert (row["cached"], row["reasoning"]) == (20000, 512)
