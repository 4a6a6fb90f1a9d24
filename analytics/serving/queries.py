"""Questions about vLLM serving over a time range in fixed buckets: KV usage, prefix
cache, preemptions, throughput and queue, one instance's or the fleet's, and the fleet
table's summary. Each answers typed rows (defined beside the question that makes them).
Instance facts are instances.py's, latency quantiles latency.py's, KV capacity capacity.py's.

Series are read through analytics/serving/series.py (hour and minute rollups before the
rollup watermark, raw samples after it). Counter rows carry reset-adjusted increases
computed at load time, so answers are sums. SQL lives here (and in series.py) as
constants with bound parameters; views and API handlers never write SQL.

A question without an instance reads the fleet that its window's reader sees (Window.seen,
set by make_window(seen=...)): sums and means over only the visible instances, filtered in
the statement. Pages and API handlers always pass the request's Seen.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import warehouse
from analytics.serving.histograms import finite_quantile
from analytics.serving.instances import data_range
from analytics.serving.series import (
    SYSTEM,
    SeriesRow,
    Window,
    cached_watermark,
    read_one,
    read_series,
)
from lib.access import VISIBLE_INSTANCE_SQL, Seen
from lib.errors import ParameterError

MAX_POINTS = 20_000

# --- the window -------------------------------------------------------------------------


def auto_bucket_s(start: datetime, end: datetime, target_points: int = 120) -> int:
    """A round bucket giving about `target_points` points (at least one minute)."""
    span = max((end - start).total_seconds(), 60.0)
    for size in (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400):
        if span / size <= target_points:
            return size
    return 86400 * 7


def make_window(
    instance: str | None,
    start: datetime | None,
    end: datetime | None,
    bucket_s: int | None,
    *,
    known_range: tuple[datetime, datetime] | None = None,
    seen: Seen = SYSTEM,
) -> Window:
    """Resolve defaults (the range of the data `seen` sees, or `known_range`) and align to
    buckets; the window reads as `seen` may."""
    if start is None or end is None:
        found = known_range or data_range(instance, seen)
        if found is None:
            now = datetime.now(UTC)
            found = (now - timedelta(hours=1), now)
        start = start or found[0]
        end = end or found[1] + timedelta(microseconds=1)  # include the last scrape
    if end <= start:
        raise ParameterError("end must be after start")
    size = bucket_s or auto_bucket_s(start, end)
    epoch = start.timestamp()
    aligned_start = datetime.fromtimestamp(math.floor(epoch / size) * size, tz=UTC)
    aligned_end = datetime.fromtimestamp(math.ceil(end.timestamp() / size) * size, tz=UTC)
    if aligned_end <= aligned_start:
        aligned_end = aligned_start + timedelta(seconds=size)
    points = (aligned_end - aligned_start).total_seconds() / size
    if points > MAX_POINTS:
        raise ParameterError(
            f"{int(points)} buckets requested; use a larger bucket (at most {MAX_POINTS})"
        )
    return Window(aligned_start, aligned_end, size, seen)


# --- series -----------------------------------------------------------------------------


@dataclass(frozen=True)
class KvPoint:
    t: datetime
    usage: float  # mean over the bucket's samples of every engine, 0..1
    max: float  # the largest single sample


@dataclass(frozen=True)
class GaugePoint:
    t: datetime
    mean: float  # summed over engines, e.g. the running requests of the whole instance
    max: float  # the largest single sample


@dataclass(frozen=True)
class IncreasePoint:
    t: datetime
    increase: float  # reset-adjusted, summed over engines


@dataclass(frozen=True)
class PreemptionPoint:
    t: datetime
    preemptions: float


@dataclass(frozen=True)
class Preemptions:
    points: list[PreemptionPoint]
    total: float


@dataclass(frozen=True)
class PrefixPoint:
    """Hits and queries (None from a V0 hit-rate gauge) and hits / queries."""

    t: datetime
    hits: float | None
    queries: float | None
    hit_rate: float | None


@dataclass(frozen=True)
class PrefixTotals:
    hits: float | None
    queries: float | None
    hit_rate: float | None


class PrefixSource(StrEnum):
    COUNTERS = "counters"  # V1's hits and queries counters
    GAUGE = "gauge"  # V0's hit-rate gauge
    NONE = "none"  # neither in the window


@dataclass(frozen=True)
class PrefixCache:
    points: list[PrefixPoint]
    overall: PrefixTotals
    source: PrefixSource


@dataclass(frozen=True)
class ThroughputPoint:
    t: datetime
    prompt_tokens_per_s: float
    generation_tokens_per_s: float


@dataclass(frozen=True)
class QueuePoint:
    """Running and waiting requests: means summed over engines, and peaks (None when the
    bucket has no sample of that gauge)."""

    t: datetime
    running: float | None
    waiting: float | None
    running_max: float | None
    waiting_max: float | None


def _kv_points(rows: list[SeriesRow]) -> list[KvPoint]:
    sums: dict[datetime, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        acc = sums[r.t]
        acc[0] += r.value_sum
        acc[1] += r.samples
        acc[2] = max(acc[2], r.value_max)
    return [KvPoint(t, acc[0] / acc[1], acc[2]) for t, acc in sorted(sums.items()) if acc[1]]


def kv_usage(instance: str | None, w: Window, engine: str | None = None) -> list[KvPoint]:
    """Mean KV-cache usage (0..1) per bucket over every sample of every engine."""
    return _kv_points(read_one("kv_usage", instance, engine, w))


def _gauge_points(rows: list[SeriesRow]) -> list[GaugePoint]:
    per: dict[datetime, dict[str, list[float]]] = defaultdict(dict)
    for r in rows:
        acc = per[r.t].setdefault(str(r.engine), [0.0, 0.0, 0.0])
        acc[0] += r.value_sum
        acc[1] += r.samples
        acc[2] = max(acc[2], r.value_max)
    out = []
    for t, engines in sorted(per.items()):
        mean = sum(a[0] / a[1] for a in engines.values() if a[1])
        out.append(GaugePoint(t, mean, max(a[2] for a in engines.values())))
    return out


def _increase_points(rows: list[SeriesRow]) -> list[IncreasePoint]:
    totals: dict[datetime, float] = defaultdict(float)
    for r in rows:
        totals[r.t] += r.increase or 0.0
    return [IncreasePoint(t, v) for t, v in sorted(totals.items())]


def _increases(rows: list[SeriesRow]) -> dict[datetime, float]:
    return {p.t: p.increase for p in _increase_points(rows)}


def gauge_means(
    metric: str, instance: str | None, w: Window, engine: str | None = None
) -> list[GaugePoint]:
    """Per bucket: the gauge's mean summed over engines (e.g. running requests of the
    whole instance) and its largest single sample."""
    return _gauge_points(read_one(metric, instance, engine, w))


def counter_increase(
    metric: str, instance: str | None, w: Window, engine: str | None = None
) -> list[IncreasePoint]:
    """Reset-adjusted increase per bucket, summed over engines."""
    return _increase_points(read_one(metric, instance, engine, w))


def _preemption_points(rows: list[SeriesRow]) -> list[PreemptionPoint]:
    return [PreemptionPoint(p.t, p.increase) for p in _increase_points(rows)]


def preemptions(instance: str | None, w: Window, engine: str | None = None) -> Preemptions:
    points = _preemption_points(read_one("preemptions", instance, engine, w))
    return Preemptions(points, sum(p.preemptions for p in points))


def _hit_rate(hits: float, queries: float) -> float | None:
    return hits / queries if queries > 0 else None


def prefix_cache(instance: str | None, w: Window, engine: str | None = None) -> PrefixCache:
    """Hits and queries per bucket (V1 counters; tokens, or blocks on 0.8.x) and
    hits/queries; for V0, which only exposes a hit-rate gauge, the gauge's mean."""
    rows = read_series(("prefix_hits", "prefix_queries", "prefix_hit_rate"), instance, engine, w)
    hits = _increases(rows["prefix_hits"])
    queries = _increases(rows["prefix_queries"])
    points: list[PrefixPoint] = []
    if hits or queries:
        for t in sorted(set(hits) | set(queries)):
            h, q = hits.get(t, 0.0), queries.get(t, 0.0)
            points.append(PrefixPoint(t, h, q, _hit_rate(h, q)))
        total_h = sum(hits.values())
        total_q = sum(queries.values())
        overall = PrefixTotals(total_h, total_q, _hit_rate(total_h, total_q))
        return PrefixCache(points, overall, PrefixSource.COUNTERS)
    gauge = rows["prefix_hit_rate"]
    per: dict[datetime, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in gauge:
        per[r.t][0] += r.value_sum
        per[r.t][1] += r.samples
    for t, (s, n) in sorted(per.items()):
        points.append(PrefixPoint(t, None, None, s / n if n else None))
    total_s = sum(v[0] for v in per.values())
    total_n = sum(v[1] for v in per.values())
    overall = PrefixTotals(None, None, total_s / total_n if total_n else None)
    return PrefixCache(points, overall, PrefixSource.GAUGE if gauge else PrefixSource.NONE)


def throughput(instance: str | None, w: Window, engine: str | None = None) -> list[ThroughputPoint]:
    """Prompt and generation tokens per second per bucket (increase / bucket length)."""
    rows = read_series(("prompt_tokens", "generation_tokens"), instance, engine, w)
    prompt = _increases(rows["prompt_tokens"])
    gen = _increases(rows["generation_tokens"])
    return [
        ThroughputPoint(t, prompt.get(t, 0.0) / w.bucket_s, gen.get(t, 0.0) / w.bucket_s)
        for t in sorted(set(prompt) | set(gen))
    ]


def queue(instance: str | None, w: Window, engine: str | None = None) -> list[QueuePoint]:
    """Running and waiting requests per bucket: means summed over engines, and peaks."""
    rows = read_series(("running", "waiting"), instance, engine, w)
    running = {p.t: p for p in _gauge_points(rows["running"])}
    waiting = {p.t: p for p in _gauge_points(rows["waiting"])}
    out = []
    for t in sorted(set(running) | set(waiting)):
        r, q = running.get(t), waiting.get(t)
        out.append(
            QueuePoint(
                t,
                running=r.mean if r else None,
                waiting=q.mean if q else None,
                running_max=r.max if r else None,
                waiting_max=q.max if q else None,
            )
        )
    return out


def mean_request_tokens(instance: str, w: Window) -> float | None:
    """Mean prompt + generation tokens per finished request over the window."""
    # `requests` is stored split by finished_reason (`requests:stop`, ...); read them all.
    rows = read_series(
        ("prompt_tokens", "generation_tokens"), instance, None, w, split=("requests",)
    )

    def total(metric: str) -> float:
        return sum(p.increase for p in _increase_points(rows[metric]))

    requests = sum(total(m) for m in rows if m == "requests" or m.startswith("requests:"))
    if requests <= 0:
        return None
    return (total("prompt_tokens") + total("generation_tokens")) / requests


# --- the fleet --------------------------------------------------------------------------

# Per instance, over one window: the inputs of the Serving overview table.
SUMMARY_BY_INSTANCE = f"""
    SELECT instance, metric, le, sum(samples) AS samples, sum(value_sum) AS value_sum,
           sum(increase) AS increase
    FROM (
        SELECT instance, metric, le, samples, value_sum, increase
        FROM serving_minutes
        WHERE list_contains($metrics, metric)
          AND minute >= $minutes_start AND minute < $minutes_end AND {VISIBLE_INSTANCE_SQL}
        UNION ALL
        SELECT instance, metric, le, 1, value, delta
        FROM serving_samples
        WHERE list_contains($metrics, metric) AND ts >= $raw_start AND ts < $raw_end
          AND {VISIBLE_INSTANCE_SQL}
    ) AS rows
    GROUP BY ALL
"""


@dataclass(frozen=True)
class FleetSeries:
    """One instance's lines on the fleet charts."""

    kv_usage: list[KvPoint] = field(default_factory=list)
    preemptions: list[PreemptionPoint] = field(default_factory=list)


def fleet_series(w: Window, only: frozenset[str] | None = None) -> dict[str, FleetSeries]:
    """The KV usage and preemptions per bucket of every instance the window's reader
    sees (of those in `only`, when given), read in one statement."""
    rows = read_series(("kv_usage", "preemptions"), None, None, w, only=only)
    per_instance: dict[str, dict[str, list[SeriesRow]]] = defaultdict(
        lambda: {"kv_usage": [], "preemptions": []}
    )
    for metric, metric_rows in rows.items():
        for r in metric_rows:
            per_instance[r.instance][metric].append(r)
    return {
        instance: FleetSeries(
            kv_usage=_kv_points(by_metric["kv_usage"]),
            preemptions=_preemption_points(by_metric["preemptions"]),
        )
        for instance, by_metric in per_instance.items()
    }


@dataclass(frozen=True)
class InstanceSummary:
    """One instance over the fleet table's window (None where it exposed nothing)."""

    kv_usage_mean: float | None = None
    hit_rate: float | None = None  # from the counters, else V0's gauge
    preemptions: float = 0.0
    ttft_p95: float | None = None  # seconds


@dataclass
class _SummaryInputs:
    kv: list[float] = field(default_factory=lambda: [0.0, 0.0])  # value sum, samples
    rate: list[float] = field(default_factory=lambda: [0.0, 0.0])  # value sum, samples
    hits: float = 0.0
    queries: float = 0.0
    preemptions: float = 0.0
    ttft: dict[float, float] = field(default_factory=lambda: defaultdict(float))  # le -> count


def fleet_summary(start: datetime, end: datetime, seen: Seen) -> dict[str, InstanceSummary]:
    """Per instance `seen` allows, over [start, end): mean KV usage, prefix hit rate,
    preemptions and p95 TTFT."""
    metrics = [
        "kv_usage",
        "prefix_hits",
        "prefix_queries",
        "prefix_hit_rate",
        "preemptions",
        "ttft",
    ]
    start = start.replace(second=0, microsecond=0)
    mark = cached_watermark()
    rolled = start if mark is None else min(max(start, mark), end)
    rows = warehouse.fetch_all(
        SUMMARY_BY_INSTANCE,
        {
            "metrics": metrics,
            "minutes_start": start,
            "minutes_end": rolled,
            "raw_start": rolled,
            "raw_end": end,
            "seen_instances": seen.instance_list(),
        },
    )
    acc: dict[str, _SummaryInputs] = defaultdict(_SummaryInputs)
    for r in rows:
        a = acc[r["instance"]]
        inc = r["increase"] or 0.0
        if r["metric"] == "kv_usage":
            a.kv[0] += r["value_sum"]
            a.kv[1] += r["samples"]
        elif r["metric"] == "prefix_hit_rate":
            a.rate[0] += r["value_sum"]
            a.rate[1] += r["samples"]
        elif r["metric"] == "prefix_hits":
            a.hits += inc
        elif r["metric"] == "prefix_queries":
            a.queries += inc
        elif r["metric"] == "preemptions":
            a.preemptions += inc
        elif r["metric"] == "ttft":
            a.ttft[r["le"]] += inc
    out: dict[str, InstanceSummary] = {}
    for instance, a in acc.items():
        hit_rate = _hit_rate(a.hits, a.queries)
        if hit_rate is None and a.rate[1]:
            hit_rate = a.rate[0] / a.rate[1]
        out[instance] = InstanceSummary(
            kv_usage_mean=a.kv[0] / a.kv[1] if a.kv[1] else None,
            hit_rate=hit_rate,
            preemptions=a.preemptions,
            ttft_p95=finite_quantile(0.95, a.ttft.items()) if a.ttft else None,
        )
    return out
