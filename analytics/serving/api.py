"""Serving endpoints of the JSON API (docs/api.md): instances, KV usage,
prefix cache, preemptions, latency, plus throughput, queue, KV capacity and scrape history.

Handlers parse parameters and shape answers; the questions are analytics.queries.serving.
"""

from __future__ import annotations

import math
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from analytics.serving import queries as serving
from analytics.serving.latency import latency as read_latency
from lib.durations import format_time, parse_bucket_seconds, parse_time
from lib.errors import ParameterError

router = Router()


class InstanceOut(Schema):
    instance: str
    model: str | None
    engine: str | None
    last_scrape: str | None
    up: bool | None
    engines: int | None
    last_error: str | None
    last_error_at: str | None
    labels: dict[str, str]


class KvPointOut(Schema):
    t: str
    usage: float
    max: float


class KvUsageOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[KvPointOut]


class PrefixPointOut(Schema):
    t: str
    hits: float | None
    queries: float | None
    hit_rate: float | None


class PrefixOverallOut(Schema):
    hits: float | None
    queries: float | None
    hit_rate: float | None


class PrefixCacheOut(Schema):
    instance: str | None
    bucket_seconds: int
    unit: str | None
    points: list[PrefixPointOut]
    overall: PrefixOverallOut


class PreemptionPointOut(Schema):
    t: str
    preemptions: float


class PreemptionsOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[PreemptionPointOut]
    total: float


class LatencyPointOut(Schema):
    t: str
    seconds: float | None


class LatencyOut(Schema):
    instance: str | None
    metric: str
    quantile: float
    bucket_seconds: int
    points: list[LatencyPointOut]
    overall: float | None


class ThroughputPointOut(Schema):
    t: str
    prompt_tokens_per_s: float
    generation_tokens_per_s: float


class ThroughputOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[ThroughputPointOut]


class QueuePointOut(Schema):
    t: str
    running: float | None
    waiting: float | None
    running_max: float | None
    waiting_max: float | None


class QueueOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[QueuePointOut]


class CapacityOut(Schema):
    instance: str
    model: str | None
    engines: int | None
    block_size: int | None
    num_gpu_blocks: int | None
    capacity_tokens: int | None
    tokens_in_use: float | None
    kv_usage: float | None
    context_tokens: float | None
    requests_that_fit: int | None
    kv_bytes_per_token: int | None
    capacity_bytes: int | None


class ScrapeOut(Schema):
    ts: str
    up: bool
    error: str | None
    source: str
    duration_ms: float | None
    samples: int
    resets: int


def _target_labels() -> dict[str, dict[str, str]]:
    from analytics.serving.models import ScrapeTarget

    return {
        t.name: {str(k): str(v) for k, v in (t.labels or {}).items()}
        for t in ScrapeTarget.objects.all()
    }


def _window(
    instance: str | None, start: str | None, end: str | None, bucket: str | None
) -> tuple[serving.Window, dict[str, Any] | None]:
    """The request's window and, for one instance, its summary row (404 when unknown)."""
    row = serving.require_instance(instance) if instance is not None else None
    bucket_s = parse_bucket_seconds(bucket) if bucket else None
    known = (row["first_scrape"], row["last_scrape"]) if row else None
    window = serving.make_window(
        instance,
        parse_time(start, name="start"),
        parse_time(end, name="end"),
        bucket_s,
        known_range=known,
    )
    return window, row


def _times(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "t": format_time(p["t"])} for p in points]


@router.get("/instances", response=list[InstanceOut])
def instances(request: HttpRequest) -> list[dict[str, Any]]:
    """Every instance ever scraped or imported, and configured targets not yet scraped."""
    labels = _target_labels()
    out = []
    seen = set()
    for row in serving.list_instances():
        seen.add(row["instance"])
        out.append(
            {
                "instance": row["instance"],
                "model": row["model"],
                "engine": row["engine"],
                "last_scrape": format_time(row["last_scrape"]),
                "up": row["up"],
                "engines": row["engines"],
                "last_error": row["last_error"],
                "last_error_at": format_time(row["last_error_at"]),
                "labels": labels.get(row["instance"], {}),
            }
        )
    for name in sorted(set(labels) - seen):
        out.append(
            {
                "instance": name,
                "model": None,
                "engine": None,
                "last_scrape": None,
                "up": None,
                "engines": None,
                "last_error": None,
                "last_error_at": None,
                "labels": labels[name],
            }
        )
    return out


@router.get("/kv-usage", response=KvUsageOut)
def kv_usage(
    request: HttpRequest,
    instance: str | None = None,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Mean KV-cache usage (fraction 0..1) per bucket, over every engine unless `engine`."""
    w, _ = _window(instance, start, end, bucket)
    points = serving.kv_usage(instance, w, engine)
    return {"instance": instance, "bucket_seconds": w.bucket_s, "points": _times(points)}


@router.get("/prefix-cache", response=PrefixCacheOut)
def prefix_cache(
    request: HttpRequest,
    instance: str | None = None,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Prefix-cache hits, queries and hit rate per bucket and overall (reset-aware)."""
    w, row = _window(instance, start, end, bucket)
    answer = serving.prefix_cache(instance, w, engine)
    unit = row["prefix_unit"] if row else None
    return {
        "instance": instance,
        "bucket_seconds": w.bucket_s,
        "unit": unit,
        "points": _times(answer["points"]),
        "overall": answer["overall"],
    }


@router.get("/preemptions", response=PreemptionsOut)
def preemptions(
    request: HttpRequest,
    instance: str | None = None,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Preemptions per bucket and in total (reset-aware counter increases)."""
    w, _ = _window(instance, start, end, bucket)
    answer = serving.preemptions(instance, w, engine)
    return {
        "instance": instance,
        "bucket_seconds": w.bucket_s,
        "points": _times(answer["points"]),
        "total": answer["total"],
    }


@router.get("/latency", response=LatencyOut)
def latency(
    request: HttpRequest,
    instance: str | None = None,
    metric: str = "ttft",
    quantile: float = 0.95,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Quantile of TTFT, inter-token latency or end-to-end latency per bucket (seconds),
    as histogram_quantile(q, sum by (le) (increase(..._bucket[bucket])))."""
    if not math.isfinite(quantile):
        raise ParameterError("quantile must be a number between 0 and 1")
    w, _ = _window(instance, start, end, bucket)
    answer = read_latency(metric, quantile, instance, w, engine)
    return {
        "instance": instance,
        "metric": metric,
        "quantile": quantile,
        "bucket_seconds": w.bucket_s,
        "points": _times(answer["points"]),
        "overall": answer["overall"],
    }


@router.get("/throughput", response=ThroughputOut)
def throughput(
    request: HttpRequest,
    instance: str | None = None,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Prompt and generation tokens per second per bucket."""
    w, _ = _window(instance, start, end, bucket)
    points = serving.throughput(instance, w, engine)
    return {"instance": instance, "bucket_seconds": w.bucket_s, "points": _times(points)}


@router.get("/queue", response=QueueOut)
def queue(
    request: HttpRequest,
    instance: str | None = None,
    bucket: str | None = None,
    start: str | None = None,
    end: str | None = None,
    engine: str | None = None,
) -> dict[str, Any]:
    """Running and waiting requests per bucket (means summed over engines, and peaks)."""
    w, _ = _window(instance, start, end, bucket)
    points = serving.queue(instance, w, engine)
    return {"instance": instance, "bucket_seconds": w.bucket_s, "points": _times(points)}


@router.get("/kv-capacity", response=CapacityOut)
def kv_capacity(
    request: HttpRequest, instance: str, context_tokens: float | None = None
) -> dict[str, Any]:
    """KV-cache capacity from vllm:cache_config_info, tokens held now, how many requests
    of a typical context length fit, and bytes when the model's config is known."""
    from analytics.serving.capacity import capacity_for

    if context_tokens is not None and not (math.isfinite(context_tokens) and context_tokens > 0):
        raise ParameterError("context_tokens must be a positive number")
    return capacity_for(instance, context_tokens)


@router.get("/scrapes", response=list[ScrapeOut])
def scrapes(request: HttpRequest, instance: str, limit: int = 50) -> list[dict[str, Any]]:
    """The instance's latest scrape outcomes, newest first (errors are one line)."""
    serving.require_instance(instance)
    if not 1 <= limit <= 1000:
        raise ParameterError("limit must be between 1 and 1000")
    rows = serving.recent_scrapes(instance, limit)
    return [{**r, "ts": format_time(r["ts"])} for r in rows]
