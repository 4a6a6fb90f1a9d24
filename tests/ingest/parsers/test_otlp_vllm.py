"""vLLM's llm_request spans become per-request records: the SDK-rendered fixtures (current
vLLM with a propagated traceparent, vLLM 0.6 with only a host name) read field by field,
latencies from seconds to milliseconds, the instance matched to a scrape target, and a
sender of some teams refused another team's instance."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget
from ingest.parsers import otlp_vllm
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.sources.otlp import JSON, Signal, decode
from tests.otlp import span, traces_request

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "vllm"
ADMIN = Sender("ops")


def _fixture(name: str) -> Any:
    return decode(Signal.TRACES, (FIXTURES / name).read_bytes(), JSON)


@pytest.fixture(autouse=True)
def fresh_targets(db: None) -> None:
    otlp_vllm.TARGETS.clear()


def test_current_vllm_spans_become_records_with_the_agents_trace() -> None:
    batch = map_request(Signal.TRACES, _fixture("v1-traceparent.json"), ADMIN)
    assert (batch.records, batch.ignored, batch.rejected, batch.events) == (3, 0, [], [])
    first, second, third = batch.requests
    assert first == {
        "request_id": "chatcmpl-a1",
        "ts": "2026-03-02T09:00:00.000000Z",
        "model": None,  # current vLLM does not name the model on the span
        "instance": "vllm-a",
        "finish_reason": None,
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "span_id": "0000000000001000",
        "parent_span_id": "00f067aa0ba902b7",
        "ttft_ms": 250.0,
        "latency_ms": 1500.0,
        "queue_ms": 125.0,
        "prefill_ms": 125.0,
        "decode_ms": 1250.0,
        "usage_prompt_tokens": 1200,
        "usage_completion_tokens": 85,
        "usage_cached_tokens": None,
        "attrs": {
            "gen_ai.latency.time_in_model_inference": 1.375,
            "gen_ai.request.top_p": 0.95,
            "gen_ai.request.max_tokens": 512,
            "gen_ai.request.temperature": 0.7,
            "gen_ai.request.n": 1,
        },
    }
    assert (second["request_id"], second["parent_span_id"], second["ttft_ms"]) == (
        "chatcmpl-b2",
        "53995c3f42cd8ad8",
        500.0,
    )
    # Without a traceparent vLLM starts a trace of its own, with no parent.
    assert (third["trace_id"], third["parent_span_id"]) == (
        "0000000000000000000000000000abc1",
        None,
    )
    assert (third["queue_ms"], third["decode_ms"], third["ts"]) == (
        31.25,
        687.5,
        "2026-03-02T09:01:00.000000Z",
    )


def test_vllm_0_6_spans_name_the_model_and_the_host_gives_the_instance() -> None:
    batch = map_request(Signal.TRACES, _fixture("v0-host-name.json"), ADMIN)
    [record] = batch.requests
    # service.name is the SDK's default (unknown_service:python): host.name is the instance.
    assert (record["instance"], record["model"], record["request_id"]) == (
        "gpu-7",
        "Qwen/Qwen3-8B",
        "cmpl-d4",
    )
    assert (record["queue_ms"], record["ttft_ms"], record["latency_ms"]) == (500.0, 750.0, 3000.0)
    assert (record["prefill_ms"], record["decode_ms"]) == (None, None)
    assert record["attrs"]["gen_ai.latency.time_in_model_forward"] == 1.75
    assert record["attrs"]["gen_ai.usage.num_sequences"] == 1


def _one(resource: Mapping[str, Any], attrs: Mapping[str, Any], name: str = "llm_request") -> Any:
    return traces_request(
        resource,
        [span(name, "ab" * 16, "cd" * 8, "2026-03-02T11:00:00", "2026-03-02T11:00:01", attrs)],
    )


def test_the_instance_is_the_resource_name_that_is_a_scrape_target() -> None:
    resource = {"service.name": "vllm-frontend", "host.name": "gpu-7"}
    attrs = {"gen_ai.request.id": "r-1", "gen_ai.usage.cache_read.input_tokens": 96}
    [record] = map_request(Signal.TRACES, _one(resource, attrs), ADMIN).requests
    assert (record["instance"], record["usage_cached_tokens"]) == ("vllm-frontend", 96)
    ScrapeTarget.objects.create(name="gpu-7", url="http://gpu-7:8000/metrics")
    otlp_vllm.TARGETS.clear()
    [record] = map_request(Signal.TRACES, _one(resource, attrs), ADMIN).requests
    assert record["instance"] == "gpu-7"


def test_a_sender_of_some_teams_sends_only_their_instances() -> None:
    infra = Team.objects.create(name="infra")
    research = Team.objects.create(name="research")
    ScrapeTarget.objects.create(name="gpu-7", url="http://gpu-7:8000/metrics", team=infra)
    ScrapeTarget.objects.create(name="vllm-a", url="http://vllm-a:8000/metrics", team=research)
    bob = Sender("bob", frozenset({"infra"}))
    attrs = {"gen_ai.request.id": "r-2"}
    ok = map_request(Signal.TRACES, _one({"service.name": "gpu-7"}, attrs), bob)
    assert ([r["instance"] for r in ok.requests], ok.rejected) == (["gpu-7"], [])
    refused = map_request(Signal.TRACES, _one({"service.name": "vllm-a"}, attrs), bob)
    assert refused.requests == []
    assert [r.reason for r in refused.rejected] == [
        "instance vllm-a is not one of your teams' instances"
    ]
    unknown = map_request(Signal.TRACES, _one({"service.name": "gpu-9"}, attrs), bob)
    assert [r.reason for r in unknown.rejected] == [
        "instance gpu-9 is not one of your teams' instances"
    ]
    nameless = map_request(Signal.TRACES, _one({"service.name": "unknown_service"}, attrs), bob)
    assert [r.reason for r in nameless.rejected] == [
        "llm_request: no service.name or host.name; only an all-teams sender may send it"
    ]


def test_other_spans_are_ignored_and_a_bad_latency_is_rejected() -> None:
    other = map_request(
        Signal.TRACES,
        _one({"service.name": "vllm-a"}, {"http.route": "/v1/chat"}, "POST /v1/chat"),
        ADMIN,
    )
    assert (other.ignored, other.requests, other.rejected) == (1, [], [])
    bad = map_request(
        Signal.TRACES,
        _one({"service.name": "vllm-a"}, {"gen_ai.request.id": "r-3", "gen_ai.latency.e2e": -1.5}),
        ADMIN,
    )
    assert [(r.path, r.reason) for r in bad.rejected] == [
        (
            "resourceSpans[0].scopeSpans[0].spans[0]",
            "gen_ai.latency.e2e -1.5 is not a non-negative number",
        )
    ]
