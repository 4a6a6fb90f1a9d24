"""The agents of GenAI spans assigned at load time: children exported before their parents
hold the placeholder `main` until the invoke_agent above them is stored, then move to it,
with the run's totals following; every arrival order ends with the same agent tree and
totals, retries included."""

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import warehouse
from analytics.runs import queries
from ingest.parsers.event_rows import EventRows
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spans, otlp_spool
from ingest.sources.otlp import Signal, decode
from tests.conftest import FIXTURE_ROOT
from tests.otlp import post, span, traces_request

AGENTS = FIXTURE_ROOT / "otlp" / "genai" / "agents.json"
RUN = "conv_7f3a"
# The fixture's spans, by their position in it (the order they ended in).
CHAT_1, LOOKUP, HTTP, CHAT_2, REFUND, BILLING, TRIAGE = range(7)
# (agent, parent, events, attempts, errors, input, cached input, cache write, output), by
# hand: Triage's spawn and first chat (1200 input, 1000 of it cached); Billing's spawn,
# two tools (refund failed) and a chat (3000 input: 2048 cached, 512 written).
TREE = [
    ("asst_billing", "asst_triage", 4, 3, 1, 440, 2048, 512, 400),
    ("asst_triage", None, 2, 1, 0, 200, 1000, 0, 150),
]
# agents, events, commits, errors, input (200 + 440), output (150 + 400)
TOTALS = (2, 6, 0, 1, 640, 550)


@pytest.fixture
def spool(settings: Any, tmp_path: Path, lake: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return otlp_spool.spool_dir()


def _fixture() -> ExportTraceServiceRequest:
    request = decode(Signal.TRACES, AGENTS.read_bytes(), "json")
    assert isinstance(request, ExportTraceServiceRequest)
    return request


def _send(positions: list[int]) -> None:
    """The fixture's spans at these positions, as one request of the same resource."""
    _spool(_request(positions))


def _request(positions: list[int]) -> ExportTraceServiceRequest:
    whole = _fixture()
    request = ExportTraceServiceRequest()
    group = request.resource_spans.add()
    group.resource.CopyFrom(whole.resource_spans[0].resource)
    spans = whole.resource_spans[0].scope_spans[0].spans
    group.scope_spans.add().spans.extend(spans[p] for p in positions)
    return request


def _spool(request: ExportTraceServiceRequest) -> None:
    batch = map_request(Signal.TRACES, request, Sender("ops"))
    otlp_spool.append(batch, Sender("ops"), otlp_spool.body_digest(request.SerializeToString()))


def _load(*requests: list[int]) -> None:
    """Each request in a load of its own (they arrived apart)."""
    for positions in requests:
        _send(positions)
        otlp.drain(seconds=10)


def _tree(run: str = RUN) -> list[tuple[Any, ...]]:
    return [
        (
            a.agent,
            a.parent,
            a.events,
            a.attempts,
            a.errors,
            a.input_tokens,
            a.cached_input_tokens,
            a.cache_write_tokens,
            a.output_tokens,
        )
        for a in queries.agents(run)
    ]


def _totals(run: str = RUN) -> tuple[int, ...]:
    [totals] = [r for r in queries.list_runs() if r.run == run]
    return (
        totals.agents,
        totals.events,
        totals.commits,
        totals.errors,
        totals.input_tokens,
        totals.output_tokens,
    )


def _agents_of_spans() -> dict[str, str]:
    rows = warehouse.fetch_all("SELECT span_id, agent FROM events WHERE run = ?", [RUN])
    return {r["span_id"][-1]: r["agent"] for r in rows}


def test_children_first_hold_the_placeholder_until_their_agent_arrives(spool: Path) -> None:
    _load([CHAT_1, LOOKUP])
    assert _agents_of_spans() == {"2": "main", "4": "main"}
    assert _totals()[:2] == (1, 2)
    _load([HTTP, CHAT_2, REFUND], [BILLING])
    # Billing's spans found it; the first chat's agent (Triage) has not arrived.
    assert _agents_of_spans() == {
        "2": "main",
        "4": "asst_billing",
        "5": "asst_billing",
        "6": "asst_billing",
        "3": "asst_billing",
    }
    assert _totals()[:2] == (2, 5)  # main and asst_billing
    _load([TRIAGE])
    assert _tree() == TREE
    assert _totals() == TOTALS


def test_parents_first_give_the_same_tree_and_totals(spool: Path) -> None:
    _load([TRIAGE], [BILLING], [CHAT_1, LOOKUP, HTTP, CHAT_2, REFUND])
    assert _tree() == TREE
    assert _totals() == TOTALS


def test_the_whole_trace_in_one_load_and_its_retries_give_the_same(spool: Path) -> None:
    _send(list(range(7)))
    _send([CHAT_1, LOOKUP])  # retried batches, in the same load and in a later one
    summary = otlp.drain(seconds=10)
    assert (summary.events, summary.duplicates) == (6, 2)
    _load([BILLING, TRIAGE], [CHAT_2])
    assert _tree() == TREE
    assert _totals() == TOTALS
    assert warehouse.fetch_one("SELECT count(*) AS n FROM events")["n"] == 6  # type: ignore[index]


def test_a_span_in_a_loop_of_parents_ends_with_the_placeholder(spool: Path) -> None:
    trace = "ab" * 16
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5}
    looped = [
        span(
            "chat a", trace, "01" * 8, "2026-03-02T10:00:00", "2026-03-02T10:00:01", attrs, "02" * 8
        ),
        span(
            "chat b", trace, "02" * 8, "2026-03-02T10:00:02", "2026-03-02T10:00:03", attrs, "01" * 8
        ),
    ]
    _spool(traces_request({"service.name": "harness"}, looped))
    otlp.drain(seconds=10)
    assert [(a.agent, a.events, a.input_tokens) for a in queries.agents(trace)] == [("main", 2, 10)]


def test_only_genai_span_rows_set_off_the_walk(spool: Path, monkeypatch: Any) -> None:
    _load([CHAT_1])
    with monkeypatch.context() as patched:  # Triage stored without a walk
        patched.setattr(otlp_spans, "assign_agents", lambda cur, rows: 0)
        _load([TRIAGE])
    assert _agents_of_spans() == {"2": "main", "1": "asst_triage"}
    trace = "5b8aa5a2d2c872e8321cf37308d69df2"
    other = EventRows()  # a Claude Code record logged inside the trace's span, say
    other.add(run="s-1", agent="main", ts="2026-03-02T11:00:00Z", event="prompt", id="seq:1")
    other.set(0, trace_id=trace)
    assert warehouse.write(lambda cur: otlp_spans.assign_agents(cur, other)) == 0
    chat = EventRows()
    chat.add(run=RUN, agent="main", ts="2026-03-02T11:00:01Z", event="llm_call", trace_id=trace)
    chat.set(0, id=f"span:{trace}:0000000000000002")
    assert warehouse.write(lambda cur: otlp_spans.assign_agents(cur, chat)) == 1
    assert _agents_of_spans() == {"2": "asst_triage", "1": "asst_triage"}


def test_posted_as_an_exporter_sends_it_the_api_shows_the_tree(
    spool: Path, client: Any, api_token: str
) -> None:
    leaves = _request([CHAT_1, LOOKUP, HTTP, CHAT_2, REFUND])
    assert post(client, leaves, api_token, encoding="json", gzipped=True).status_code == 200
    otlp.drain(seconds=10)
    assert post(client, _request([BILLING, TRIAGE]), api_token).status_code == 200
    assert post(client, leaves, api_token).status_code == 200  # a retry, as protobuf
    otlp.drain(seconds=10)
    answer = client.get(f"/api/runs/{RUN}/agents", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert [
        (a["agent"], a["parent"], a["events"], a["errors"], a["input_tokens"], a["output_tokens"])
        for a in answer.json()
    ] == [("asst_billing", "asst_triage", 4, 1, 440, 400), ("asst_triage", None, 2, 0, 200, 150)]
