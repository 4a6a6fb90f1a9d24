"""Questions about vLLM serving: instances, KV usage, prefix cache, preemptions,
throughput and queue, each over a time range in fixed buckets, and the fleet at a glance.
Latency quantiles are latency.py's, KV capacity capacity.py's.

Series are read through analytics/serving/series.py (hour and minute rollups before the
rollup watermark, raw samples after it). Counter rows carry reset-adjusted increases
computed at load time, so answers are sums. SQL lives here (and in series.py) as
constants with bound parameters; views and API handlers never write SQL.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import warehouse
from analytics.serving.histograms import finite_quantile
from analytics.serving.series import Window, cached_watermark, read_one, read_series
from lib.errors import NotFoundError, ParameterError

MAX_POINTS = 20_000

INSTANCES = """
    SELECT instance,
           max(ts) AS last_scrape,
           max(ts) FILTER (WHERE up) AS last_up,
           arg_max(up, ts) AS up,
           arg_max(error, ts) AS last_result_error,
           max(ts) FILTER (WHERE NOT up) AS last_error_at,
           arg_max(error, ts) FILTER (WHERE NOT up) AS last_error,
           arg_max(model, ts) FILTER (WHERE up) AS model,
           arg_max(engine_kind, ts) FILTER (WHERE up) AS engine,
           arg_max(engines, ts) FILTER (WHERE up) AS engines,
           arg_max(block_size, ts) FILTER (WHERE up) AS block_size,
           arg_max(num_gpu_blocks, ts) FILTER (WHERE up) AS num_gpu_blocks,
           arg_max(prefix_unit, ts) FILTER (WHERE up) AS prefix_unit,
           min(ts) AS first_scrape,
           count(*) AS scrapes,
           count(*) FILTER (WHERE NOT up) AS failed_scrapes
    FROM serving_scrapes
    WHERE $instance::VARCHAR IS NULL OR instance = $instance
    GROUP BY instance
    ORDER BY instance
"""

DATA_RANGE = "SELECT min(ts) AS first, max(ts) AS last FROM serving_scrapes"

INSTANCE_DATA_RANGE = """
    SELECT min(ts) AS first, max(ts) AS last FROM serving_scrapes WHERE instance = $instance
"""

RECENT_SCRAPES = """
    SELECT ts, up, error, source, duration_ms, samples, resets
    FROM serving_scrapes
    WHERE instance = $instance
    ORDER BY ts DESC
    LIMIT $limit
"""

# Per instance, over one window: the inputs of the Serving overview table.
SUMMARY_BY_INSTANCE = """
    SELECT instance, metric, le, sum(samples) AS samples, sum(value_sum) AS value_sum,
           sum(increase) AS increase
    FROM (
        SELECT instance, metric, le, samples, value_sum, increase
        FROM serving_minutes
        WHERE list_contains($metrics, metric)
          AND minute >= $minutes_start AND minute < $minutes_end
        UNION ALL
        SELECT instance, metric, le, 1, value, delta
        FROM serving_samples
        WHERE list_contains($metrics, metric) AND ts >= $raw_start AND ts < $raw_end
    ) AS rows
    GROUP BY ALL
"""

# `ts >= $oldest` is a constant so DuckLake skips files older than every instance's last scrape.
LATEST_GAUGES_ALL = """
    SELECT instance, metric, avg(value) AS value, sum(value) AS total
    FROM serving_samples
    WHERE ts >= $oldest AND list_contains($keys, instance || '@' || CAST(epoch_us(ts) AS VARCHAR))
      AND metric IN ('kv_usage', 'running', 'waiting')
    GROUP BY ALL
"""

LATEST_GAUGES = """
    WITH last AS (
        SELECT max(ts) AS ts FROM serving_scrapes WHERE instance = $instance AND up
    )
    SELECT s.metric, s.engine, avg(s.value) AS value, sum(s.value) AS total
    FROM serving_samples s, last
    WHERE s.instance = $instance AND s.ts = last.ts
      AND s.metric IN ('kv_usage', 'running', 'waiting', 'swapped')
    GROUP BY ALL
"""


# --- instances and ranges ---------------------------------------------------------------


def list_instances(instance: str | None = None) -> list[dict[str, Any]]:
    """Every instance's latest scrape facts, or one instance's when named."""
    return warehouse.fetch_all(INSTANCES, {"instance": instance})


def require_instance(instance: str) -> dict[str, Any]:
    """The instance's summary row, or NotFoundError (404) when it was never scraped."""
    rows = list_instances(instance)
    if not rows:
        raise NotFoundError(f"unknown instance {instance!r}")
    return rows[0]


def data_range(instance: str | None) -> tuple[datetime, datetime] | None:
    if instance is None:
        row = warehouse.fetch_one(DATA_RANGE)
    else:
        row = warehouse.fetch_one(INSTANCE_DATA_RANGE, {"instance": instance})
    if row is None or row["first"] is None:
        return None
    return row["first"], row["last"]


def recent_scrapes(instance: str, limit: int = 20) -> list[dict[str, Any]]:
    return warehouse.fetch_all(RECENT_SCRAPES, {"instance": instance, "limit": limit})


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
) -> Window:
    """Resolve defaults (the data's own range, or `known_range`) and align to buckets."""
    if start is None or end is None:
        found = known_range or data_range(instance)
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
    return Window(aligned_start, aligned_end, size)


# --- series -----------------------------------------------------------------------------


def _kv_points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sums: dict[datetime, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        acc = sums[r["t"]]
        acc[0] += r["value_sum"]
        acc[1] += r["samples"]
        acc[2] = max(acc[2], r["value_max"])
    return [
        {"t": t, "usage": acc[0] / acc[1], "max": acc[2]}
        for t, acc in sorted(sums.items())
        if acc[1]
    ]


def kv_usage(instance: str | None, w: Window, engine: str | None = None) -> list[dict[str, Any]]:
    """Mean KV-cache usage (0..1) per bucket over every sample of every engine."""
    return _kv_points(read_one("kv_usage", instance, engine, w))


def _gauge_points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    per: dict[datetime, dict[str, list[float]]] = defaultdict(dict)
    for r in rows:
        acc = per[r["t"]].setdefault(str(r["engine"]), [0.0, 0.0, 0.0])
        acc[0] += r["value_sum"]
        acc[1] += r["samples"]
        acc[2] = max(acc[2], r["value_max"])
    out = []
    for t, engines in sorted(per.items()):
        mean = sum(a[0] / a[1] for a in engines.values() if a[1])
        out.append({"t": t, "mean": mean, "max": max(a[2] for a in engines.values())})
    return out


def _increase_points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    totals: dict[datetime, float] = defaultdict(float)
    for r in rows:
        totals[r["t"]] += r["increase"] or 0.0
    return [{"t": t, "increase": v} for t, v in sorted(totals.items())]


def gauge_means(
    metric: str, instance: str | None, w: Window, engine: str | None = None
) -> list[dict[str, Any]]:
    """Per bucket: the gauge's mean summed over engines (e.g. running requests of the
    whole instance) and its largest single sample."""
    return _gauge_points(read_one(metric, instance, engine, w))


def counter_increase(
    metric: str, instance: str | None, w: Window, engine: str | None = None
) -> list[dict[str, Any]]:
    """Reset-adjusted increase per bucket, summed over engines."""
    return _increase_points(read_one(metric, instance, engine, w))


def preemptions(instance: str | None, w: Window, engine: str | None = None) -> dict[str, Any]:
    points = [
        {"t": p["t"], "preemptions": p["increase"]}
        for p in counter_increase("preemptions", instance, w, engine)
    ]
    return {"points": points, "total": sum(p["preemptions"] for p in points)}


def _hit_rate(hits: float, queries: float) -> float | None:
    return hits / queries if queries > 0 else None


def prefix_cache(instance: str | None, w: Window, engine: str | None = None) -> dict[str, Any]:
    """Hits and queries per bucket (V1 counters; tokens, or blocks on 0.8.x) and
    hits/queries; for V0, which only exposes a hit-rate gauge, the gauge's mean."""
    rows = read_series(("prefix_hits", "prefix_queries", "prefix_hit_rate"), instance, engine, w)
    hits = {p["t"]: p["increase"] for p in _increase_points(rows["prefix_hits"])}
    queries = {p["t"]: p["increase"] for p in _increase_points(rows["prefix_queries"])}
    points: list[dict[str, Any]] = []
    if hits or queries:
        for t in sorted(set(hits) | set(queries)):
            h, q = hits.get(t, 0.0), queries.get(t, 0.0)
            points.append({"t": t, "hits": h, "queries": q, "hit_rate": _hit_rate(h, q)})
        total_h = sum(hits.values())
        total_q = sum(queries.values())
        overall = {"hits": total_h, "queries": total_q, "hit_rate": _hit_rate(total_h, total_q)}
        return {"points": points, "overall": overall, "source": "counters"}
    gauge = rows["prefix_hit_rate"]
    per: dict[datetime, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in gauge:
        per[r["t"]][0] += r["value_sum"]
        per[r["t"]][1] += r["samples"]
    for t, (s, n) in sorted(per.items()):
        points.append({"t": t, "hits": None, "queries": None, "hit_rate": s / n if n else None})
    total_s = sum(v[0] for v in per.values())
    total_n = sum(v[1] for v in per.values())
    overall = {"hits": None, "queries": None, "hit_rate": total_s / total_n if total_n else None}
    return {"points": points, "overall": overall, "source": "gauge" if gauge else "none"}


def throughput(instance: str | None, w: Window, engine: str | None = None) -> list[dict[str, Any]]:
    """Prompt and generation tokens per second per bucket (increase / bucket length)."""
    rows = read_series(("prompt_tokens", "generation_tokens"), instance, engine, w)
    prompt = {p["t"]: p["increase"] for p in _increase_points(rows["prompt_tokens"])}
    gen = {p["t"]: p["increase"] for p in _increase_points(rows["generation_tokens"])}
    return [
        {
            "t": t,
            "prompt_tokens_per_s": prompt.get(t, 0.0) / w.bucket_s,
            "generation_tokens_per_s": gen.get(t, 0.0) / w.bucket_s,
        }
        for t in sorted(set(prompt) | set(gen))
    ]


def queue(instance: str | None, w: Window, engine: str | None = None) -> list[dict[str, Any]]:
    """Running and waiting requests per bucket: means summed over engines, and peaks."""
    rows = read_series(("running", "waiting"), instance, engine, w)
    running = {p["t"]: p for p in _gauge_points(rows["running"])}
    waiting = {p["t"]: p for p in _gauge_points(rows["waiting"])}
    out = []
    for t in sorted(set(running) | set(waiting)):
        r, q = running.get(t), waiting.get(t)
        out.append(
            {
                "t": t,
                "running": r["mean"] if r else None,
                "waiting": q["mean"] if q else None,
                "running_max": r["max"] if r else None,
                "waiting_max": q["max"] if q else None,
            }
        )
    return out


def latest_gauges(instance: str) -> dict[str, Any]:
    """KV usage (mean over engines), running and waiting (summed) at the last scrape."""
    rows = warehouse.fetch_all(LATEST_GAUGES, {"instance": instance})
    by_metric: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_metric[r["metric"]].append(r)
    kv = by_metric.get("kv_usage")
    return {
        "kv_usage": sum(r["value"] for r in kv) / len(kv) if kv else None,
        "kv_usage_by_engine": {r["engine"]: r["value"] for r in kv or []},
        "running": sum(r["total"] for r in by_metric["running"])
        if "running" in by_metric
        else None,
        "waiting": sum(r["total"] for r in by_metric["waiting"])
        if "waiting" in by_metric
        else None,
    }


def fleet_series(w: Window) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every instance's KV usage and preemptions per bucket, read in one statement:
    instance -> {"kv_usage": [{t, usage, max}], "preemptions": [{t, preemptions}]}."""
    rows = read_series(("kv_usage", "preemptions"), None, None, w)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for metric, metric_rows in rows.items():
        per_instance: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in metric_rows:
            per_instance[r["instance"]].append(r)
        for instance, instance_rows in per_instance.items():
            series = out.setdefault(instance, {"kv_usage": [], "preemptions": []})
            if metric == "kv_usage":
                series["kv_usage"] = _kv_points(instance_rows)
            else:
                series["preemptions"] = [
                    {"t": p["t"], "preemptions": p["increase"]}
                    for p in _increase_points(instance_rows)
                ]
    return out


def fleet_summary(start: datetime, end: datetime) -> dict[str, dict[str, Any]]:
    """Per instance over [start, end): mean KV usage, prefix hits/queries and hit rate,
    preemptions, p95 TTFT; plus KV usage, running and waiting at its last scrape."""
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
        },
    )
    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "kv": [0.0, 0.0],
            "rate": [0.0, 0.0],
            "hits": 0.0,
            "queries": 0.0,
            "preemptions": 0.0,
            "ttft": defaultdict(float),
        }
    )
    for r in rows:
        a = acc[r["instance"]]
        inc = r["increase"] or 0.0
        if r["metric"] == "kv_usage":
            a["kv"][0] += r["value_sum"]
            a["kv"][1] += r["samples"]
        elif r["metric"] == "prefix_hit_rate":
            a["rate"][0] += r["value_sum"]
            a["rate"][1] += r["samples"]
        elif r["metric"] == "prefix_hits":
            a["hits"] += inc
        elif r["metric"] == "prefix_queries":
            a["queries"] += inc
        elif r["metric"] == "preemptions":
            a["preemptions"] += inc
        elif r["metric"] == "ttft":
            a["ttft"][r["le"]] += inc
    out: dict[str, dict[str, Any]] = {}
    for instance, a in acc.items():
        hit_rate = _hit_rate(a["hits"], a["queries"])
        if hit_rate is None and a["rate"][1]:
            hit_rate = a["rate"][0] / a["rate"][1]
        out[instance] = {
            "kv_usage_mean": a["kv"][0] / a["kv"][1] if a["kv"][1] else None,
            "hit_rate": hit_rate,
            "preemptions": a["preemptions"],
            "ttft_p95": finite_quantile(0.95, a["ttft"].items()) if a["ttft"] else None,
        }
    return out


def latest_gauges_all(instances: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """instance -> {kv_usage (mean over engines), running, waiting (summed)} at its last
    successful scrape (rows from list_instances())."""
    last = [(r["instance"], r["last_up"]) for r in instances if r.get("last_up")]
    if not last:
        return {}
    keys = [f"{i}@{round(ts.timestamp() * 1_000_000)}" for i, ts in last]
    rows = warehouse.fetch_all(
        LATEST_GAUGES_ALL, {"oldest": min(ts for _, ts in last), "keys": keys}
    )
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        out[r["instance"]][r["metric"]] = r["value"] if r["metric"] == "kv_usage" else r["total"]
    return dict(out)


def mean_request_tokens(instance: str, w: Window) -> float | None:
    """Mean prompt + generation tokens per finished request over the window."""
    rows = read_series(("requests", "prompt_tokens", "generation_tokens"), instance, None, w)

    def total(metric: str) -> float:
        return sum(p["increase"] for p in _increase_points(rows[metric]))

    requests = total("requests")
    if requests <= 0:
        return None
    return (total("prompt_tokens") + total("generation_tokens")) / requests
