"""KV usage from a bad scrape (7.5, NaN: outside the contract's 0..1) is served as null
with the reason, and every serving answer stays valid JSON (no bare NaN)."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def strict_json(text: bytes) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def scrape(instance: str, *usages: float) -> None:
    load_scrapes(
        [
            PendingScrape(
                instance,
                T0 + timedelta(hours=i),
                scrape=parse_scrape(v1_text({"0": EngineState(u)})),
            )
            for i, u in enumerate(usages)
        ]
    )


def get(path: str, headers: dict[str, str]) -> Any:
    response = Client().get(path, headers=headers)
    assert response.status_code == 200, response.content
    return strict_json(response.content)


@pytest.mark.usefixtures("lake")
def test_a_bucket_holding_a_usage_outside_0_to_1_is_null_with_its_reason(
    db: None, auth_headers: dict[str, str]
) -> None:
    scrape("gpu-bad", 0.25, 7.5, 0.5)
    body = get("/api/serving/kv-usage?instance=gpu-bad&bucket=1h", auth_headers)
    assert body["points"] == [
        {"t": "2026-01-01T00:00:00Z", "usage": 0.25, "max": 0.25, "reason": None},
        {
            "t": "2026-01-01T01:00:00Z",
            "usage": None,
            "max": None,
            "reason": "a scrape reported a KV usage of 7.5, outside 0..1",
        },
        {"t": "2026-01-01T02:00:00Z", "usage": 0.5, "max": 0.5, "reason": None},
    ]
    capacity = get("/api/serving/kv-capacity?instance=gpu-bad", auth_headers)
    assert (capacity["kv_usage"], capacity["kv_usage_reason"]) == (0.5, None)


@pytest.mark.usefixtures("lake")
def test_the_latest_usage_outside_0_to_1_leaves_capacity_without_usage(
    db: None, auth_headers: dict[str, str]
) -> None:
    scrape("gpu-bad", 0.25, 7.5)
    capacity = get("/api/serving/kv-capacity?instance=gpu-bad", auth_headers)
    assert capacity["kv_usage"] is None
    assert capacity["tokens_in_use"] is None
    assert capacity["kv_usage_reason"] == "a scrape reported a KV usage of 7.5, outside 0..1"


@pytest.mark.usefixtures("lake")
def test_a_nan_usage_is_null_never_a_bare_nan(db: None, auth_headers: dict[str, str]) -> None:
    scrape("gpu-nan", 0.25, float("nan"))
    body = get("/api/serving/kv-usage?instance=gpu-nan&bucket=1h", auth_headers)
    assert body["points"][1] == {
        "t": "2026-01-01T01:00:00Z",
        "usage": None,
        "max": None,
        "reason": "a scrape reported a KV usage that is not a number",
    }
    capacity = get("/api/serving/kv-capacity?instance=gpu-nan", auth_headers)
    assert capacity["kv_usage"] is None
    assert capacity["kv_usage_reason"] == "a scrape reported a KV usage that is not a number"
    for path in ("queue", "throughput", "preemptions", "prefix-cache", "latency"):
        get(f"/api/serving/{path}?instance=gpu-nan&bucket=1h", auth_headers)  # strict JSON
