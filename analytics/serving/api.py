"""Serving endpoints of the JSON API (docs/api.md): instances, KV usage,
prefix cache, preemptions, latency by phase, speculative decoding, SLO attainment, the
fleet table, plus throughput, queue, KV capacity and scrape history.

Handlers take their parameters as ninja Query schemas (the window as lib.window's
WindowQuery) and shape answers into the Out schemas; the questions are analytics/serving/'s
(queries, instances, latency, spec_decode, slo, fleet, capacity), whose typed rows the
Out schemas (here and in schemas.py) read.

Who sees what: every handler reads as `seen_of(request)` (lib.access), through `_window`
(a series endpoint) or `require_instance(instance, seen)` (an endpoint of one named
instance); a new endpoint must go through one of them too. An instance the user may not
see answers 404 "no instance named 'X'", exactly as an unknown one, and a window from
`_window` makes every fleet-wide figure a sum over only the visible instances (in SQL).
"""

from __future__ import annotations

import math
from dataclasses import asdict

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.serving import queries as serving
from analytics.serving.capacity import Capacity, capacity_for
from analytics.serving.fleet import FleetRow, fleet_table, fleet_window
from analytics.serving.instances import (
    Instance,
    Scrape,
    list_instances,
    recent_scrapes,
    require_instance,
)
from analytics.serving.latency import latency as read_latency
from analytics.serving.schemas import (
    CapacityQuery,
    FleetOut,
    LatencyQuery,
    ModelQuery,
    ScrapesQuery,
    SeriesQuery,
    SloOut,
    SloQuery,
    SpecDecodeOut,
)
from analytics.serving.slo import slo_attainment
from analytics.serving.spec_decode import spec_decode as read_spec_decode
from lib.access import Seen, seen_of
from lib.durations import Time
from lib.errors import ParameterError
from lib.window import WindowQuery

router = Router()


class InstanceOut(Schema):
    instance: str
    model: str | None
    engine: str | None
    last_scrape: Time | None
    up: bool | None
    engines: int | None
    last_error: str | None
    last_error_at: Time | None
    labels: dict[str, str]


class KvPointOut(Schema):
    """usage and max are fractions 0..1; both null, with `reason`, when a sample of the
    bucket was not (a bad scrape: 7.5, NaN), since the mean then means nothing."""

    t: Time
    usage: float | None
    max: float | None
    reason: str | None = None


class KvUsageOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[KvPointOut]


class PrefixPointOut(Schema):
    t: Time
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
    t: Time
    preemptions: float


class PreemptionsOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[PreemptionPointOut]
    total: float


class LatencyPointOut(Schema):
    t: Time
    seconds: float | None
    mean_seconds: float | None


class LatencyOut(Schema):
    instance: str | None
    metric: str
    quantile: float
    bucket_seconds: int
    points: list[LatencyPointOut]
    overall: float | None
    overall_mean: float | None


class ThroughputPointOut(Schema):
    t: Time
    prompt_tokens_per_s: float
    generation_tokens_per_s: float


class ThroughputOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[ThroughputPointOut]


class QueuePointOut(Schema):
    t: Time
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
    kv_usage_reason: str | None = None  # why kv_usage and tokens_in_use are null
    context_tokens: float | None
    requests_that_fit: int | None
    kv_bytes_per_token: int | None
    capacity_bytes: int | None


class ScrapeOut(Schema):
    ts: Time
    up: bool
    error: str | None
    source: str
    duration_ms: float | None
    samples: int
    resets: int


def kv_fraction_problem(*values: float) -> str | None:
    """Why KV usage figures cannot be served as fractions 0..1 (one line), or None."""
    for value in values:
        if not math.isfinite(value):
            return "a scrape reported a KV usage that is not a number"
        if not 0 <= value <= 1:
            return f"a scrape reported a KV usage of {value:g}, outside 0..1"
    return None


def _kv_point(point: serving.KvPoint) -> KvPointOut:
    reason = kv_fraction_problem(point.usage, point.max)
    if reason is not None:
        return KvPointOut(t=point.t, usage=None, max=None, reason=reason)  # type: ignore[arg-type]
    return KvPointOut.model_validate(point)


def _target_labels(seen: Seen) -> dict[str, dict[str, str]]:
    """The labels of every registered target `seen` allows."""
    from analytics.serving.models import ScrapeTarget

    return {
        t.name: {str(k): str(v) for k, v in (t.labels or {}).items()}
        for t in ScrapeTarget.objects.all()
        if seen.sees_instance(t.name)
    }


def _window(
    instance: str | None, window: WindowQuery, seen: Seen
) -> tuple[serving.Window, Instance | None]:
    """The request's window, read as `seen` may, and for one instance its summary row
    (404 "no instance named 'X'" when unknown or not visible to `seen`)."""
    row = require_instance(instance, seen) if instance is not None else None
    bucket_s = window.bucket_seconds()
    known = (row.first_scrape, row.last_scrape) if row else None
    w = serving.make_window(
        instance, window.start_time(), window.end_time(), bucket_s, known_range=known, seen=seen
    )
    return w, row


@router.get("/instances", response=list[InstanceOut])
def instances(request: HttpRequest) -> list[InstanceOut]:
    """Every visible instance ever scraped or imported, and visible targets not yet scraped."""
    seen = seen_of(request)
    labels = _target_labels(seen)
    out = []
    listed = set()
    for row in list_instances(seen=seen):
        listed.add(row.instance)
        out.append(
            InstanceOut.model_validate({**asdict(row), "labels": labels.get(row.instance, {})})
        )
    for name in sorted(set(labels) - listed):
        out.append(
            InstanceOut(
                instance=name,
                model=None,
                engine=None,
                last_scrape=None,
                up=None,
                engines=None,
                last_error=None,
                last_error_at=None,
                labels=labels[name],
            )
        )
    return out


@router.get("/kv-usage", response=KvUsageOut)
def kv_usage(
    request: HttpRequest, series: Query[SeriesQuery], window: Query[WindowQuery]
) -> KvUsageOut:
    """Mean KV-cache usage (fraction 0..1) per bucket, over every engine unless `engine`."""
    w, _ = _window(series.instance, window, seen_of(request))
    points = [_kv_point(p) for p in serving.kv_usage(series.instance, w, series.engine)]
    return KvUsageOut(instance=series.instance, bucket_seconds=w.bucket_s, points=points)


@router.get("/prefix-cache", response=PrefixCacheOut)
def prefix_cache(
    request: HttpRequest, series: Query[SeriesQuery], window: Query[WindowQuery]
) -> PrefixCacheOut:
    """Prefix-cache hits, queries and hit rate per bucket and overall (reset-aware)."""
    w, row = _window(series.instance, window, seen_of(request))
    answer = serving.prefix_cache(series.instance, w, series.engine)
    return PrefixCacheOut.model_validate(
        {
            "instance": series.instance,
            "bucket_seconds": w.bucket_s,
            "unit": row.prefix_unit if row else None,
            "points": answer.points,
            "overall": answer.overall,
        }
    )


@router.get("/preemptions", response=PreemptionsOut)
def preemptions(
    request: HttpRequest, series: Query[SeriesQuery], window: Query[WindowQuery]
) -> PreemptionsOut:
    """Preemptions per bucket and in total (reset-aware counter increases)."""
    w, _ = _window(series.instance, window, seen_of(request))
    answer = serving.preemptions(series.instance, w, series.engine)
    return PreemptionsOut.model_validate(
        {
            "instance": series.instance,
            "bucket_seconds": w.bucket_s,
            "points": answer.points,
            "total": answer.total,
        }
    )


@router.get("/latency", response=LatencyOut)
def latency(
    request: HttpRequest,
    series: Query[SeriesQuery],
    params: Query[LatencyQuery],
    window: Query[WindowQuery],
) -> LatencyOut:
    """Quantile of TTFT, inter-token latency or end-to-end latency per bucket (seconds),
    as histogram_quantile(q, sum by (le) (increase(..._bucket[bucket])))."""
    if not math.isfinite(params.quantile):
        raise ParameterError("quantile must be a number between 0 and 1")
    w, _ = _window(series.instance, window, seen_of(request))
    answer = read_latency(
        params.metric, params.quantile, series.instance, w, series.engine, params.model
    )
    return LatencyOut.model_validate(
        {
            "instance": series.instance,
            "metric": params.metric,
            "quantile": params.quantile,
            "bucket_seconds": w.bucket_s,
            "points": answer.points,
            "overall": answer.overall,
            "overall_mean": answer.overall_mean,
        }
    )


@router.get("/spec-decode", response=SpecDecodeOut)
def spec_decode(
    request: HttpRequest,
    series: Query[SeriesQuery],
    params: Query[ModelQuery],
    window: Query[WindowQuery],
) -> SpecDecodeOut:
    """Speculative decoding per bucket and overall: acceptance rate (accepted / draft
    tokens), mean acceptance length (1 + accepted / drafts), accepted tokens by position."""
    w, _ = _window(series.instance, window, seen_of(request))
    answer = read_spec_decode(series.instance, w, series.engine, params.model)
    return SpecDecodeOut.model_validate(
        {
            "instance": series.instance,
            "bucket_seconds": w.bucket_s,
            "points": answer.points,
            "overall": answer.overall,
            "by_position": answer.by_position,
        }
    )


@router.get("/slo", response=SloOut)
def slo(
    request: HttpRequest,
    series: Query[SeriesQuery],
    params: Query[SloQuery],
    window: Query[WindowQuery],
) -> SloOut:
    """Share of requests under `target_seconds` (TTFT, TPOT, e2e) from histogram buckets;
    `note` says when the target is not a bucket bound (the largest bound below counts)."""
    w, _ = _window(series.instance, window, seen_of(request))
    answer = slo_attainment(
        params.metric, params.target_seconds, series.instance, w, series.engine, params.model
    )
    return SloOut.model_validate(
        {
            "instance": series.instance,
            "metric": params.metric,
            "target_seconds": params.target_seconds,
            "bucket_seconds": w.bucket_s,
            "points": answer.points,
            "overall": answer.overall,
            "target_is_bucket_bound": answer.target_is_bucket_bound,
            "bound_seconds": answer.bound_seconds,
            "note": answer.note,
        }
    )


@router.get("/fleet", response=FleetOut)
def fleet(request: HttpRequest, params: Query[ModelQuery], window: Query[WindowQuery]) -> FleetOut:
    """One row per instance and engine over the window (the last hour unless asked)."""
    seen = seen_of(request)
    w = fleet_window(window, seen)
    rows: list[FleetRow] = fleet_table(list_instances(seen=seen), w, params.model)
    return FleetOut.model_validate({"start": w.start, "end": w.end, "rows": rows})


@router.get("/throughput", response=ThroughputOut)
def throughput(
    request: HttpRequest, series: Query[SeriesQuery], window: Query[WindowQuery]
) -> ThroughputOut:
    """Prompt and generation tokens per second per bucket."""
    w, _ = _window(series.instance, window, seen_of(request))
    points = serving.throughput(series.instance, w, series.engine)
    return ThroughputOut.model_validate(
        {"instance": series.instance, "bucket_seconds": w.bucket_s, "points": points}
    )


@router.get("/queue", response=QueueOut)
def queue(request: HttpRequest, series: Query[SeriesQuery], window: Query[WindowQuery]) -> QueueOut:
    """Running and waiting requests per bucket (means summed over engines, and peaks)."""
    w, _ = _window(series.instance, window, seen_of(request))
    points = serving.queue(series.instance, w, series.engine)
    return QueueOut.model_validate(
        {"instance": series.instance, "bucket_seconds": w.bucket_s, "points": points}
    )


@router.get("/kv-capacity", response=CapacityOut)
def kv_capacity(request: HttpRequest, params: Query[CapacityQuery]) -> CapacityOut:
    """KV-cache capacity from vllm:cache_config_info, tokens held now, how many requests
    of a typical context length fit, and bytes when the model's config is known."""
    context = params.context_tokens
    if context is not None and not (math.isfinite(context) and context > 0):
        raise ParameterError("context_tokens must be a positive number")
    capacity: Capacity = capacity_for(params.instance, context, seen=seen_of(request))
    out = CapacityOut.model_validate(capacity)
    if capacity.kv_usage is not None:
        out.kv_usage_reason = kv_fraction_problem(capacity.kv_usage)
        if out.kv_usage_reason is not None:
            out.kv_usage = out.tokens_in_use = None
    return out


@router.get("/scrapes", response=list[ScrapeOut])
def scrapes(request: HttpRequest, params: Query[ScrapesQuery]) -> list[Scrape]:
    """The instance's latest scrape outcomes, newest first (errors are one line)."""
    require_instance(params.instance, seen_of(request))
    if not 1 <= params.limit <= 1000:
        raise ParameterError("limit must be between 1 and 1000")
    return recent_scrapes(params.instance, params.limit)
