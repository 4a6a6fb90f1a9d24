"""A run whose agent propagated `traceparent` to vLLM, for the serving-latency tests of
the query, the API and the run page: its events carry the agent's trace and call span
ids (as the GenAI and Claude Code mappers write them), and vLLM's llm_request spans
arrive through the OTLP spool like any export.

Run `agent-run` (trace 4bf9...4736): calls 00f067aa0ba902b7 and 53995c3f42cd8ad8, which
vLLM's chatcmpl-a1 and chatcmpl-b2 name as their parents (the SDK-rendered fixture), and
e5 whose parent is an HTTP client span in the same trace. Trace 77...77 holds events of
`agent-run` and `other-run`: f6, parented by a span that is no one's call, belongs to
neither; g7, parented by other-run's call, to other-run only. cmpl-c3 has a trace of its
own. Latencies (ms) of agent-run's records: TTFT 250, 500, 1000; queue 125, 250, 500;
e2e 1500, 2500, 4000.
"""

from pathlib import Path
from typing import Any

import warehouse
from ingest.parsers import otlp_vllm
from ingest.parsers.event_rows import EventRows
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.pipelines.adapter_loading import Dedup, insert_new
from ingest.sources.otlp import JSON, Signal, decode
from tests.otlp import span, traces_request

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "vllm" / "v1-traceparent.json"
AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SHARED_TRACE = "77" * 16
SENDER = Sender("ops")


def _call(run: str, trace: str, span_id: str, ts: str) -> dict[str, Any]:
    return {
        "run": run,
        "agent": "main",
        "ts": ts,
        "event": "llm_call",
        "id": span_id,
        "model": "Qwen/Qwen3-8B",
        "trace_id": trace,
        "span_id": span_id,
    }


def _vllm(
    request_id: str, trace: str, parent: str, start: str, ttft: float, queue: float, e2e: float
) -> Any:
    attrs = {
        "gen_ai.request.id": request_id,
        "gen_ai.latency.time_to_first_token": ttft,
        "gen_ai.latency.time_in_queue": queue,
        "gen_ai.latency.e2e": e2e,
    }
    return span(
        "llm_request",
        trace,
        request_id.encode().hex().ljust(16, "0")[:16],
        start,
        start,
        attrs,
        parent,
    )


def build() -> None:
    """Store the world (needs the `lake` fixture, a DATA_DIR and the database)."""
    otlp_vllm.TARGETS.clear()
    rows = EventRows()
    for values in (
        _call("agent-run", AGENT_TRACE, "00f067aa0ba902b7", "2026-03-02T08:59:59Z"),
        _call("agent-run", AGENT_TRACE, "53995c3f42cd8ad8", "2026-03-02T09:00:04Z"),
        _call("agent-run", SHARED_TRACE, "aaaaaaaaaaaaaaaa", "2026-03-02T09:02:00Z"),
        _call("other-run", SHARED_TRACE, "bbbbbbbbbbbbbbbb", "2026-03-02T09:02:00Z"),
        _call("quiet-run", "99" * 16, "cccccccccccccccc", "2026-03-02T09:03:00Z"),
    ):
        rows.add(**values, source="otlp/traces/ops")
    table = rows.table()
    warehouse.write(
        lambda cur: insert_new(cur, table, source_kind="otlp", source="otlp", dedup=Dedup.RUN)
    )
    body = FIXTURE.read_bytes()
    fixture = map_request(Signal.TRACES, decode(Signal.TRACES, body, JSON), SENDER)
    otlp_spool.append(fixture, SENDER, otlp_spool.body_digest(body))
    more = traces_request(
        {"service.name": "vllm-a"},
        [
            _vllm("e5", AGENT_TRACE, "1111111111111111", "2026-03-02T09:00:30", 1.0, 0.5, 4.0),
            _vllm("f6", SHARED_TRACE, "2222222222222222", "2026-03-02T09:02:01", 8.0, 8.0, 8.0),
            _vllm("g7", SHARED_TRACE, "bbbbbbbbbbbbbbbb", "2026-03-02T09:02:02", 2.0, 1.0, 3.0),
        ],
    )
    otlp_spool.append(
        map_request(Signal.TRACES, more, SENDER),
        SENDER,
        otlp_spool.body_digest(more.SerializeToString()),
    )
    otlp.drain(seconds=10)
