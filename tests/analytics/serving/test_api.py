"""The serving endpoints of api.md, through the whole stack (HTTP -> query -> JSON)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.serving.models import ModelConfig, ScrapeTarget
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v0_text, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def scraped(lake: Path, db: None) -> None:
    """gpu-a: 2 engines, 3 scrapes 15 s apart; preemptions 0 -> 2 -> 5 on engine 0 only,
    prefix hits/queries 0/0 -> 30/100 -> 90/200 per engine, kv usage 0.2/0.4/0.6 (e0)
    and 0.0/0.2/0.4 (e1); 0.4 -> 0.6 is the last scrape."""
    states = [
        ({"0": EngineState(0.2), "1": EngineState(0.0)}),
        (
            {
                "0": EngineState(0.4, preemptions=2, prefix_hits=30, prefix_queries=100),
                "1": EngineState(0.2, prefix_hits=30, prefix_queries=100),
            }
        ),
        (
            {
                "0": EngineState(
                    0.6,
                    preemptions=5,
                    prefix_hits=90,
                    prefix_queries=200,
                    requests=2,
                    prompt_tokens=3000,
                    generation_tokens=1000,
                ),
                "1": EngineState(0.4, prefix_hits=90, prefix_queries=200),
            }
        ),
    ]
    load_scrapes(
        [
            PendingScrape("gpu-a", T0 + timedelta(seconds=15 * i), scrape=parse_scrape(v1_text(s)))
            for i, s in enumerate(states)
        ]
    )


def _get(client: Client, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.get(path, headers=headers)
    return response.status_code, response.json()


def test_every_serving_endpoint_needs_authentication(scraped: None) -> None:
    for path in ("instances", "kv-usage", "prefix-cache", "preemptions", "latency"):
        assert Client().get(f"/api/serving/{path}").status_code == 401


def test_instances_lists_model_engine_last_scrape_and_up(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    ScrapeTarget.objects.create(
        name="gpu-b", url="http://127.0.0.1:9/metrics", labels={"team": "infra"}
    )
    status, body = _get(Client(), "/api/serving/instances", auth_headers)
    assert status == 200
    assert body == [
        {
            "instance": "gpu-a",
            "model": "meta-llama/Llama-3.1-8B",
            "engine": "v1",
            "last_scrape": "2026-01-01T00:00:30Z",
            "up": True,
            "engines": 2,
            "last_error": None,
            "last_error_at": None,
            "labels": {},
        },
        {
            "instance": "gpu-b",
            "model": None,
            "engine": None,
            "last_scrape": None,
            "up": None,
            "engines": None,
            "last_error": None,
            "last_error_at": None,
            "labels": {"team": "infra"},
        },
    ]


def test_kv_usage_is_the_mean_over_the_bucket(scraped: None, auth_headers: dict[str, str]) -> None:
    status, body = _get(Client(), "/api/serving/kv-usage?instance=gpu-a&bucket=1h", auth_headers)
    assert status == 200
    # (0.2 + 0.4 + 0.6 + 0.0 + 0.2 + 0.4) / 6
    assert body["points"] == [
        {"t": "2026-01-01T00:00:00Z", "usage": pytest.approx(0.3), "max": 0.6, "reason": None}
    ]
    status, body = _get(
        Client(), "/api/serving/kv-usage?instance=gpu-a&bucket=1h&engine=1", auth_headers
    )
    assert body["points"][0]["usage"] == pytest.approx(0.2)


def test_prefix_cache_and_preemptions_sum_increases(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(
        Client(), "/api/serving/prefix-cache?instance=gpu-a&bucket=30s", auth_headers
    )
    assert status == 200
    assert body["unit"] == "tokens"
    assert body["points"] == [
        {"t": "2026-01-01T00:00:00Z", "hits": 60.0, "queries": 200.0, "hit_rate": 0.3},
        {"t": "2026-01-01T00:00:30Z", "hits": 120.0, "queries": 200.0, "hit_rate": 0.6},
    ]
    assert body["overall"] == {"hits": 180.0, "queries": 400.0, "hit_rate": 0.45}
    status, body = _get(Client(), "/api/serving/preemptions?instance=gpu-a&bucket=1m", auth_headers)
    assert body["total"] == 5.0
    assert body["points"] == [{"t": "2026-01-01T00:00:00Z", "preemptions": 5.0}]


def test_latency_answers_a_quantile_per_bucket(scraped: None, auth_headers: dict[str, str]) -> None:
    status, body = _get(
        Client(),
        "/api/serving/latency?instance=gpu-a&metric=ttft&quantile=0.95&bucket=5m",
        auth_headers,
    )
    assert status == 200
    # no TTFT observations in the window: Prometheus answers NaN, the API null
    assert body["points"] == [{"t": "2026-01-01T00:00:00Z", "seconds": None, "mean_seconds": None}]


def test_latency_after_a_restart_without_created_lines_is_prometheus_value(
    lake: Path, db: None, auth_headers: dict[str, str]
) -> None:
    # V0 (and vLLM's multiprocess mode) has no `_created` lines: across a restart only the
    # buckets whose count dropped are seen as reset. TTFT buckets (0.1, 0.5, 1, +Inf) read
    # 2, 5, 5, 5 and then, after the restart, 5, 5, 7, 8: no count dropped, so the
    # increases are 3, 0, 2, 3, a zero right after a non-zero lower bucket. Prometheus
    # forces them monotonic: 3, 3, 3, 3. rank 0.95 * 3 = 2.85 lies in (0, 0.1]:
    # 0.1 * 2.85 / 3; rank 0.25 * 3 = 0.75: 0.1 * 0.75 / 3.
    before = EngineState(ttft=(2.0, 5.0, 5.0, 5.0))
    after = EngineState(ttft=(5.0, 5.0, 7.0, 8.0))
    load_scrapes(
        [
            PendingScrape("gpu-v0", T0 + timedelta(seconds=15 * i), scrape=parse_scrape(v0_text(s)))
            for i, s in enumerate((before, after))
        ]
    )
    client = Client()
    for quantile, want in ((0.95, 0.1 * 2.85 / 3), (0.25, 0.1 * 0.75 / 3)):
        status, body = _get(
            client,
            f"/api/serving/latency?instance=gpu-v0&metric=ttft&quantile={quantile}&bucket=5m"
            "&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z",
            auth_headers,
        )
        assert status == 200, body
        assert body["overall"] == pytest.approx(want)


def test_unknown_instance_is_404_and_bad_parameters_422(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    client = Client()
    status, body = _get(client, "/api/serving/kv-usage?instance=nope", auth_headers)
    assert (status, body) == (404, {"detail": "no instance named 'nope'"})
    for query in (
        "kv-usage?instance=gpu-a&bucket=soon",
        "kv-usage?instance=gpu-a&start=yesterday",
        "preemptions?instance=gpu-a&start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z",
        "latency?instance=gpu-a&metric=p99",
        "latency?instance=gpu-a&quantile=1.5",
        "latency?instance=gpu-a&quantile=abc",
    ):
        assert client.get(f"/api/serving/{query}", headers=auth_headers).status_code == 422, query


def test_a_bad_window_is_one_line_naming_the_parameter(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    client = Client()
    for query, detail in (
        ("bucket=soon", "bucket must look like 30s, 5m, 1h or 1d, got 'soon'"),
        ("start=yesterday", "start must be an RFC 3339 time, got 'yesterday'"),
        ("end=never", "end must be an RFC 3339 time, got 'never'"),
        ("start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z", "end must be after start"),
    ):
        status, body = _get(client, f"/api/serving/queue?instance=gpu-a&{query}", auth_headers)
        assert (status, body) == (422, {"detail": detail}), query


def test_a_window_with_start_end_and_bucket_is_answered_as_asked(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(
        Client(),
        "/api/serving/preemptions?instance=gpu-a&engine=0&bucket=30s"
        "&start=2026-01-01T00:00:00Z&end=2026-01-01T00:01:00Z",
        auth_headers,
    )
    assert status == 200
    assert body == {
        "instance": "gpu-a",
        "bucket_seconds": 30,
        "points": [
            {"t": "2026-01-01T00:00:00Z", "preemptions": 2.0},
            {"t": "2026-01-01T00:00:30Z", "preemptions": 3.0},
        ],
        "total": 5.0,
    }


def test_kv_capacity_counts_tokens_requests_and_bytes(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    ModelConfig.objects.create(
        model="meta-llama/Llama-3.1-8B", num_layers=32, num_kv_heads=8, head_dim=128, dtype_bytes=2
    )
    status, body = _get(Client(), "/api/serving/kv-capacity?instance=gpu-a", auth_headers)
    assert status == 200
    # 1000 blocks x 16 tokens x 2 engines; usage now (0.6 + 0.4) / 2 = 0.5
    # typical request (3000 + 1000) / 2 = 2000 tokens = 125 blocks: 8 per engine
    assert body == {
        "instance": "gpu-a",
        "model": "meta-llama/Llama-3.1-8B",
        "engines": 2,
        "block_size": 16,
        "num_gpu_blocks": 1000,
        "capacity_tokens": 32000,
        "tokens_in_use": 16000.0,
        "kv_usage": 0.5,
        "kv_usage_reason": None,
        "context_tokens": 2000.0,
        "requests_that_fit": 16,
        "kv_bytes_per_token": 131072,
        "capacity_bytes": 32000 * 131072,
    }
