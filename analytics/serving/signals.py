"""The rest of vLLM's signals as series: counters and gauges broken down by their label
(finished reason, prompt-token source, waiting reason, sleep state), the hit rates of the
local, external (KV connector) and multimodal caches, histogram increases for heatmaps
(request lengths, KV block lifetimes), KV transfer through NIXL, MFU inputs and the LoRA
adapters named at the last scrape.

Series are read through analytics/serving/series.py; only the LoRA gauge (its adapters
are labels, its value a timestamp) is read from raw samples here, with SQL as a constant
and bound parameters. Every function takes an optional `model` (vLLM's model_name).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import orjson

import warehouse
from analytics.serving.instances import model_instances
from analytics.serving.queries import GaugePoint, IncreasePoint
from analytics.serving.series import SeriesRow, Window, read_series
from lib.errors import ParameterError

# Split metrics (stored as `<metric>:<label value>`) by the label they are split by.
SPLIT_LABELS = {
    "requests": "finished_reason",
    "prompt_tokens_by_source": "source",
    "waiting_by_reason": "reason",
    "sleep_state": "sleep_state",
}
CACHES = {
    "local": ("prefix_hits", "prefix_queries"),
    "external": ("external_prefix_hits", "external_prefix_queries"),
    "multimodal": ("mm_cache_hits", "mm_cache_queries"),
}
# The heatmap-able histograms: request lengths and KV block ages.
HISTOGRAMS = frozenset(
    {
        "request_prompt_tokens",
        "request_generation_tokens",
        "request_max_generation_tokens",
        "request_params_n",
        "request_params_max_tokens",
        "prefill_kv_computed_tokens",
        "iteration_tokens",
        "kv_block_lifetime",
        "kv_block_idle_before_evict",
        "kv_block_reuse_gap",
        "nixl_xfer_time",
        "nixl_post_time",
        "nixl_bytes",
        "nixl_descriptors",
    }
)

LORA_AT_LAST_SCRAPE = """
    WITH last AS (
        SELECT max(ts) AS ts FROM serving_scrapes WHERE instance = $instance AND up
    )
    SELECT s.labels, s.value
    FROM serving_samples s, last
    WHERE s.instance = $instance AND s.ts = last.ts
      AND s.name IN ('vllm:lora_requests_info', 'ray_vllm:lora_requests_info')
    ORDER BY s.value DESC
    LIMIT 1
"""


def _increase_points(rows: list[SeriesRow]) -> list[IncreasePoint]:
    totals: dict[datetime, float] = defaultdict(float)
    for r in rows:
        totals[r.t] += r.increase or 0.0
    return [IncreasePoint(t, v) for t, v in sorted(totals.items())]


def _gauge_points(rows: list[SeriesRow]) -> list[GaugePoint]:
    """Per bucket: each engine's mean summed over engines (and instances), and the peak."""
    per: dict[datetime, dict[tuple[str, str], list[float]]] = defaultdict(dict)
    for r in rows:
        acc = per[r.t].setdefault((r.instance, str(r.engine)), [0.0, 0.0, -math.inf])
        acc[0] += r.value_sum
        acc[1] += r.samples
        acc[2] = max(acc[2], r.value_max)
    return [
        GaugePoint(
            t,
            sum(a[0] / a[1] for a in engines.values() if a[1]),
            max(a[2] for a in engines.values()),
        )
        for t, engines in sorted(per.items())
    ]


def _split_rows(metric: str, rows: dict[str, list[SeriesRow]]) -> dict[str, list[SeriesRow]]:
    prefix = metric + ":"
    return {m[len(prefix) :]: r for m, r in sorted(rows.items()) if m.startswith(prefix) and r}


def increase_by_label(
    metric: str,
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> dict[str, list[IncreasePoint]]:
    """label value -> increases per bucket of a split counter (`requests` by finished
    reason, `prompt_tokens_by_source` by source); samples without the label under ""."""
    rows = read_series((), instance, engine, w, split=(metric,), only=model_instances(model))
    out = {label: _increase_points(r) for label, r in _split_rows(metric, rows).items()}
    if rows.get(metric):
        out[""] = _increase_points(rows[metric])
    return out


def gauge_by_label(
    metric: str,
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> dict[str, list[GaugePoint]]:
    """label value -> means (summed over engines) and peaks per bucket of a split gauge
    (`waiting_by_reason` by reason, `sleep_state` by state)."""
    rows = read_series((), instance, engine, w, split=(metric,), only=model_instances(model))
    return {label: _gauge_points(r) for label, r in _split_rows(metric, rows).items()}


def counters(
    metrics: tuple[str, ...],
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> dict[str, list[IncreasePoint]]:
    """Increases per bucket of plain counters (corrupted_requests, nixl_failed_transfers,
    mfu_flops_per_gpu, ...), read in one statement."""
    rows = read_series(metrics, instance, engine, w, only=model_instances(model))
    return {m: _increase_points(rows[m]) for m in metrics}


@dataclass(frozen=True)
class CachePoint:
    t: datetime
    hits: float
    queries: float
    hit_rate: float | None  # hits / queries


@dataclass(frozen=True)
class CacheHitRate:
    points: list[CachePoint]
    hits: float
    queries: float
    hit_rate: float | None  # over the window


def cache_hit_rates(
    instance: str | None, w: Window, engine: str | None = None, model: str | None = None
) -> dict[str, CacheHitRate]:
    """ "local" (prefix cache), "external" (KV connector) and "multimodal" cache hits,
    queries and hits / queries, per bucket and over the window; a cache the instances
    never exported is left out."""
    metrics = tuple(m for pair in CACHES.values() for m in pair)
    rows = read_series(metrics, instance, engine, w, only=model_instances(model))
    out: dict[str, CacheHitRate] = {}
    for name, (hits_metric, queries_metric) in CACHES.items():
        if not rows[hits_metric] and not rows[queries_metric]:
            continue
        hits = {p.t: p.increase for p in _increase_points(rows[hits_metric])}
        queries = {p.t: p.increase for p in _increase_points(rows[queries_metric])}
        points = [
            CachePoint(t, h, q, h / q if q > 0 else None)
            for t in sorted(set(hits) | set(queries))
            for h, q in [(hits.get(t, 0.0), queries.get(t, 0.0))]
        ]
        total_h, total_q = sum(hits.values()), sum(queries.values())
        out[name] = CacheHitRate(points, total_h, total_q, total_h / total_q if total_q else None)
    return out


@dataclass(frozen=True)
class HistogramPoint:
    """One bucket of time: observations per histogram bucket (not cumulative: `counts[i]`
    is the observations in (bounds[i-1], bounds[i]]), their number and mean."""

    t: datetime
    bounds: list[float]  # upper bounds, +Inf last
    counts: list[float]
    count: float
    mean: float | None  # increase(_sum) / increase(_count)


def histogram_series(
    metric: str,
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> list[HistogramPoint]:
    """A histogram's observations per bucket of time and bound, for a heatmap."""
    if metric not in HISTOGRAMS:
        raise ParameterError(f"histogram must be one of {', '.join(sorted(HISTOGRAMS))}")
    rows = read_series(
        (metric, f"{metric}_sum", f"{metric}_count"),
        instance,
        engine,
        w,
        only=model_instances(model),
    )
    cumulative: dict[datetime, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows[metric]:
        if r.le is not None:
            cumulative[r.t][r.le] += r.increase or 0.0
    sums = {p.t: p.increase for p in _increase_points(rows[f"{metric}_sum"])}
    counts = {p.t: p.increase for p in _increase_points(rows[f"{metric}_count"])}
    out = []
    for t, by_le in sorted(cumulative.items()):
        bounds = sorted(by_le)
        values = [by_le[b] for b in bounds]
        per_bucket = [max(v - (values[i - 1] if i else 0.0), 0.0) for i, v in enumerate(values)]
        count = counts.get(t, values[-1] if values else 0.0)
        mean = sums.get(t, 0.0) / count if count > 0 and t in sums else None
        out.append(HistogramPoint(t, bounds, per_bucket, count, mean))
    return out


@dataclass(frozen=True)
class LoraAdapters:
    """The LoRA adapters vLLM named at the instance's last successful scrape."""

    running: list[str]
    waiting: list[str]
    max_lora: int | None


def _names(text: str | None) -> list[str]:
    return sorted(n for n in (text or "").split(",") if n)


def lora_adapters(instance: str) -> LoraAdapters | None:
    """The newest `vllm:lora_requests_info` label set (its value is when vLLM set it), or
    None when the last scrape had none (LoRA off)."""
    row = warehouse.fetch_one(LORA_AT_LAST_SCRAPE, {"instance": instance})
    if row is None:
        return None
    labels = orjson.loads(row["labels"])
    try:
        max_lora = int(labels.get("max_lora", ""))
    except ValueError:
        max_lora = None
    return LoraAdapters(
        _names(labels.get("running_lora_adapters")),
        _names(labels.get("waiting_lora_adapters")),
        max_lora,
    )
