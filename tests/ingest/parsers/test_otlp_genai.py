"""GenAI spans -> events: invoke_agent spans are agents, execute_tool spans tool calls
(failed when the span's status is ERROR), chat spans model calls with the conventions'
usage (cache parts out of the input count, the deprecated names read too); the run is the
conversation, else the trace; a span whose agent is not known yet holds the placeholder."""

from typing import Any

import orjson
import pytest

from ingest.parsers.otlp import OtlpBatch, Sender
from ingest.parsers.otlp_sources import map_request
from ingest.sources.otlp import Signal, decode
from tests.conftest import FIXTURE_ROOT
from tests.otlp import span, traces_request

AGENTS = FIXTURE_ROOT / "otlp" / "genai" / "agents.json"
OPENLLMETRY = FIXTURE_ROOT / "otlp" / "genai" / "openllmetry.json"
TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"
LANGGRAPH = "0af7651916cd43dd8448eb211c80319c"
USAGE = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


def _map(request: Any) -> OtlpBatch:
    return map_request(Signal.TRACES, request, Sender("ops"))


def _fixture(path: Any) -> OtlpBatch:
    return _map(decode(Signal.TRACES, path.read_bytes(), "json"))


def _row(event: dict[str, Any], *names: str) -> tuple[Any, ...]:
    return tuple(event.get(name) for name in names)


def test_an_agents_trace_becomes_spawns_tool_calls_and_model_calls() -> None:
    batch = _fixture(AGENTS)
    assert (batch.records, batch.ignored, batch.rejected) == (7, 1, [])  # the HTTP span
    assert [
        _row(e, "source_line", "event", "agent", "parent", "id", "parent_span_id", "duration_ms")
        for e in batch.events
    ] == [
        (0, "llm_call", "main", None, f"span:{TRACE}:0000000000000002", "0000000000000001", 2000.0),
        (
            1,
            "tool_call",
            "main",
            None,
            f"span:{TRACE}:0000000000000004",
            "0000000000000003",
            1000.0,
        ),
        (3, "llm_call", "main", None, f"span:{TRACE}:0000000000000005", "0000000000000003", 3000.0),
        (
            4,
            "tool_call",
            "main",
            None,
            f"span:{TRACE}:0000000000000006",
            "0000000000000003",
            1000.0,
        ),
        (
            5,
            "spawn",
            "asst_billing",
            None,
            f"span:{TRACE}:0000000000000003",
            "0000000000000001",
            21000.0,
        ),
        (6, "spawn", "asst_triage", None, f"span:{TRACE}:0000000000000001", None, 30000.0),
    ]
    assert {(e["run"], e["trace_id"], e["team"]) for e in batch.events} == {
        ("conv_7f3a", TRACE, "support")
    }
    assert [e["span_id"] for e in batch.events][:2] == ["0000000000000002", "0000000000000004"]
    assert [e["ts"] for e in batch.events][-1] == "2026-03-02T11:00:00.000000Z"


def test_model_calls_carry_the_usage_without_the_cache_parts_in_the_input() -> None:
    calls = [e for e in _fixture(AGENTS).events if e["event"] == "llm_call"]
    # 1200 input of which 1000 read from the cache; 3000 of which 2048 read and 512 written.
    assert [_row(c, "model", *USAGE, "reasoning_output_tokens", "ok") for c in calls] == [
        ("gpt-4.1", 200, 1000, 0, 150, None, True),
        ("gpt-4.1", 440, 2048, 512, 400, 128, True),
    ]
    attrs = orjson.loads(calls[0]["attrs"])
    assert attrs == {
        "gen_ai.provider.name": "openai",
        "gen_ai.response.id": "resp_01",
        "gen_ai.response.model": "gpt-4.1-2025-04-14",
    }  # the input messages are not kept


def test_tool_calls_fail_with_an_error_status() -> None:
    tools = [e for e in _fixture(AGENTS).events if e["event"] == "tool_call"]
    assert [_row(t, "tool", "ok", "error_message") for t in tools] == [
        ("lookup_invoice", True, None),
        ("refund", False, "CardDeclined"),
    ]
    assert orjson.loads(tools[0]["attrs"]) == {
        "gen_ai.provider.name": "openai",
        "gen_ai.tool.call.id": "call_9",
        "gen_ai.tool.type": "function",
    }


def test_openllmetry_spans_without_a_conversation_are_the_run_of_their_trace() -> None:
    batch = _fixture(OPENLLMETRY)
    assert [_row(e, "run", "agent", "event", "model", *USAGE) for e in batch.events] == [
        (LANGGRAPH, "main", "llm_call", "gpt-4o-mini", 500, 0, 0, 80),
        (LANGGRAPH, "main", "span", None, None, None, None, None),
        (LANGGRAPH, "main", "span", None, None, None, None, None),
    ]
    assert orjson.loads(batch.events[0]["attrs"]) == {
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.system": "openai",
        "llm.usage.total_tokens": 580,
    }  # the prompt is not kept
    assert orjson.loads(batch.events[1]["attrs"]) == {
        "op": "task",
        "traceloop.workflow.name": "LangGraph",
    }


def _one(attrs: dict[str, Any], name: str = "chat m", **kwargs: Any) -> OtlpBatch:
    one = span(
        name,
        kwargs.pop("trace_id", "11" * 16),
        kwargs.pop("span_id", "22" * 8),
        "2026-03-02T10:00:00",
        "2026-03-02T10:00:01",
        attrs,
        **kwargs,
    )
    return _map(traces_request({"service.name": "harness"}, [one]))


def test_cache_parts_larger_than_the_input_were_counted_apart() -> None:
    [call] = _one(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 100,
            "gen_ai.usage.output_tokens": 7,
            "gen_ai.usage.cache_read.input_tokens": 900,
        }
    ).events
    assert _row(call, *USAGE) == (100, 900, 0, 7)  # Anthropic's way: input without the cache


def test_names_fall_back_to_the_span_name_and_generate_content_is_a_model_call() -> None:
    [tool] = _one({"gen_ai.operation.name": "execute_tool"}, name="execute_tool search").events
    [agent] = _one({"gen_ai.operation.name": "invoke_agent"}, name="invoke_agent Planner").events
    [bare] = _one({"gen_ai.operation.name": "invoke_agent"}, name="invoke_agent").events
    [gen] = _one(
        {"gen_ai.operation.name": "generate_content", "gen_ai.response.model": "gemini-2.5"}
    ).events
    assert (tool["tool"], agent["agent"], bare["agent"]) == (
        "search",
        "Planner",
        "agent-" + "22" * 8,
    )
    assert (gen["event"], gen["model"]) == ("llm_call", "gemini-2.5")


def test_spans_of_no_genai_operation_are_not_kept() -> None:
    batch = _one({"http.request.method": "GET"}, name="GET /")
    assert (batch.ignored, batch.events, batch.rejected) == (1, [], [])


@pytest.mark.parametrize(
    ("attrs", "kwargs", "reason"),
    [
        (
            {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": -1},
            {},
            "gen_ai.usage.input_tokens -1 is not a count",
        ),
        (
            {"gen_ai.operation.name": "chat"},
            {"trace_id": ""},
            "trace id '' or span id '2222222222222222' is not a valid id",
        ),
    ],
)
def test_a_span_it_cannot_use_is_rejected(attrs: Any, kwargs: Any, reason: str) -> None:
    assert [r.reason for r in _one(attrs, **kwargs).rejected] == [reason]
