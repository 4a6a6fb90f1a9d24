"""Spooled vLLM request traces reach `requests` in the OTLP loader's transaction: each
request_id once however often the exporter retried, or when the same request came
through the requests pipeline first; with the span's own columns and provenance."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

import warehouse
from analytics.serving.models import ScrapeTarget
from analytics.tokens.vocabularies import configured_encodings
from dashboard.models import ApiToken
from ingest.parsers import otlp_vllm
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.pipelines.requests import ingest_body
from ingest.sources.otlp import JSON, Signal, decode
from lib.access import Scope

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "vllm"
SENDER = Sender("ops")

COLUMNS_SQL = """
SELECT request_id, strftime(ts, '%H:%M:%S') AS at, model, instance, usage_prompt_tokens,
       usage_completion_tokens, ttft_ms, latency_ms, queue_ms, prefill_ms, decode_ms,
       trace_id, span_id, parent_span_id, source_kind, source, shape, language, prompt
FROM requests ORDER BY request_id
"""


@pytest.fixture
def spool(settings: Any, tmp_path: Path, lake: Path, db: None) -> Path:
    settings.DATA_DIR = tmp_path
    otlp_vllm.TARGETS.clear()
    return otlp_spool.spool_dir()


def _spool(name: str) -> Path:
    body = (FIXTURES / name).read_bytes()
    batch = map_request(Signal.TRACES, decode(Signal.TRACES, body, JSON), SENDER)
    return otlp_spool.append(batch, SENDER, otlp_spool.body_digest(body))


def test_spans_are_stored_once_with_their_latencies_and_ids(spool: Path) -> None:
    _spool("v1-traceparent.json")
    _spool("v1-traceparent.json")  # the exporter retried the batch
    _spool("v0-host-name.json")
    summary = otlp.drain(seconds=10)
    assert summary.files == 3
    rows = [tuple(r.values()) for r in warehouse.fetch_all(COLUMNS_SQL)]
    source = "otlp/traces/ops"
    assert rows == [
        (
            "chatcmpl-a1", "09:00:00", None, "vllm-a", 1200, 85, 250.0, 1500.0, 125.0, 125.0,
            1250.0, "4bf92f3577b34da6a3ce929d0e0e4736", "0000000000001000", "00f067aa0ba902b7",
            "otlp", source, "otlp_span", None, None,
        ),
        (
            "chatcmpl-b2", "09:00:05", None, "vllm-a", 3400, 210, 500.0, 2500.0, 250.0, 250.0,
            2000.0, "4bf92f3577b34da6a3ce929d0e0e4736", "0000000000001001", "53995c3f42cd8ad8",
            "otlp", source, "otlp_span", None, None,
        ),
        (
            "cmpl-c3", "09:01:00", None, "vllm-a", 40, 16, 62.5, 750.0, 31.25, 31.25, 687.5,
            "0000000000000000000000000000abc1", "0000000000001002", None,
            "otlp", source, "otlp_span", None, None,
        ),
        (
            "cmpl-d4", "10:00:00", "Qwen/Qwen3-8B", "gpu-7", 512, 64, 750.0, 3000.0, 500.0, None,
            None, "0000000000000000000000000000def1", "0000000000002000", None,
            "otlp", source, "otlp_span", None, None,
        ),
    ]  # fmt: skip
    # One token row per request and encoding, with no text to count.
    [tokens] = warehouse.fetch_all(
        "SELECT count(*) AS n, count(prompt_tokens) AS counted FROM request_tokens"
    )
    assert tokens == {"n": 4 * len(configured_encodings()), "counted": 0}
    _spool("v1-traceparent.json")  # a retry after the load: nothing new
    otlp.drain(seconds=10)
    [count] = warehouse.fetch_all("SELECT count(*) AS n FROM requests")
    assert count == {"n": 4}


def test_a_request_sent_both_ways_is_stored_once(spool: Path) -> None:
    line = b'{"ts": "2026-03-02T09:00:00Z", "request_id": "chatcmpl-a1", "prompt": "Hello there"}\n'
    assert ingest_body(line, "requests:gateway")["accepted"] == 1
    _spool("v1-traceparent.json")
    otlp.drain(seconds=10)
    rows = warehouse.fetch_all("SELECT request_id, source_kind FROM requests ORDER BY request_id")
    assert [(r["request_id"], r["source_kind"]) for r in rows] == [
        ("chatcmpl-a1", "requests"),  # the gateway's record came first and stays
        ("chatcmpl-b2", "otlp"),
        ("cmpl-c3", "otlp"),
    ]


def test_a_team_member_posts_vllm_traces_of_their_instance_only(
    client: Client, spool: Path
) -> None:
    from django.contrib.auth.models import User

    from analytics.costs.models import Team
    from tests.people import grant

    infra, research = Team.objects.create(name="infra"), Team.objects.create(name="research")
    ScrapeTarget.objects.create(name="vllm-a", url="http://vllm-a:8000/metrics", team=infra)
    ScrapeTarget.objects.create(name="gpu-7", url="http://gpu-7:8000/metrics", team=research)
    bea = grant(User.objects.create_user("bea", "bea@example.com", "x"), "editor", (infra,))
    token = ApiToken.issue(bea, "vllm", scope=Scope.INGEST)[1]
    for name in ("v1-traceparent.json", "v0-host-name.json"):
        response = client.post(
            "/v1/traces",
            data=(FIXTURES / name).read_bytes(),  # the file as an exporter sends it
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        assert response.status_code == 200
    refused = orjson.loads(response.content)["partialSuccess"]
    assert refused == {
        "rejectedSpans": "1",
        "errorMessage": "resourceSpans[0].scopeSpans[0].spans[0]: "
        "instance gpu-7 is not one of your teams' instances",
    }
    otlp.drain(seconds=10)
    rows = warehouse.fetch_all("SELECT request_id, instance, source FROM requests ORDER BY 1")
    assert [tuple(r.values()) for r in rows] == [
        ("chatcmpl-a1", "vllm-a", "otlp/traces/bea"),
        ("chatcmpl-b2", "vllm-a", "otlp/traces/bea"),
        ("cmpl-c3", "vllm-a", "otlp/traces/bea"),
    ]
