"""What scraping found out about each vLLM instance: its latest scrape facts (up, model,
engines, KV blocks, the last error), the range of its data, its recent scrape outcomes
and its gauges at the last successful scrape.

Reads serving_scrapes and the samples of a scrape's own timestamp; series over a time
range are analytics/serving/queries.py's. SQL lives here as constants with bound
parameters; views and API handlers never write SQL.

Who sees an instance is decided here for every reader: list_instances(seen=...) lists only
the instances `seen` (a lib.access.Seen) allows, and require_instance(instance, seen) is
the one check of a named instance: an instance the reader may not see is answered exactly
as one never scraped (NotFoundError, 404, "no instance named 'X'").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import warehouse
from lib.access import VISIBLE_INSTANCE_SQL, Seen
from lib.errors import NotFoundError

INSTANCES = f"""
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
    WHERE ($instance::VARCHAR IS NULL OR instance = $instance) AND {VISIBLE_INSTANCE_SQL}
    GROUP BY instance
    ORDER BY instance
"""

DATA_RANGE = f"""
    SELECT min(ts) AS first, max(ts) AS last FROM serving_scrapes WHERE {VISIBLE_INSTANCE_SQL}
"""

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


@dataclass(frozen=True)
class Instance:
    """One instance's scrapes: the latest attempt, the latest failure, and what the latest
    successful scrape said about the server (None until one succeeded)."""

    instance: str
    last_scrape: datetime
    last_up: datetime | None  # the latest successful scrape
    up: bool  # of the latest attempt
    last_result_error: str | None  # of the latest attempt
    last_error_at: datetime | None
    last_error: str | None
    model: str | None
    engine: str | None  # the engine kind: "v0" or "v1"
    engines: int | None
    block_size: int | None
    num_gpu_blocks: int | None
    prefix_unit: str | None  # what prefix-cache counters count: "tokens" or "blocks"
    first_scrape: datetime
    scrapes: int
    failed_scrapes: int


@dataclass(frozen=True)
class Scrape:
    """One scrape attempt's outcome (an error is one line)."""

    ts: datetime
    up: bool
    error: str | None
    source: str
    duration_ms: float | None
    samples: int
    resets: int


@dataclass(frozen=True)
class LatestGauges:
    """One instance at its last successful scrape: KV usage (mean over engines, and each
    engine's), running and waiting requests (summed over engines); None when not exposed."""

    kv_usage: float | None
    running: float | None
    waiting: float | None
    kv_usage_by_engine: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class GaugesNow:
    """An instance's KV usage (mean over engines), running and waiting (summed) at its
    last successful scrape, as the fleet table shows them; None when not exposed."""

    kv_usage: float | None = None
    running: float | None = None
    waiting: float | None = None


def list_instances(instance: str | None = None, *, seen: Seen) -> list[Instance]:
    """The latest scrape facts of every instance `seen` allows, or of one when named."""
    params = {"instance": instance, "seen_instances": seen.instance_list()}
    return [Instance(**row) for row in warehouse.fetch_all(INSTANCES, params)]


def model_instances(model: str | None) -> frozenset[str] | None:
    """The instances whose latest successful scrape served `model` (vLLM's `model_name`
    label, the served model name), for a model filter; None when no model is asked. Of
    every instance: a reader's Window keeps only those it may see."""
    if model is None:
        return None
    return frozenset(row.instance for row in list_instances(seen=Seen.all()) if row.model == model)


def require_instance(instance: str, seen: Seen) -> Instance:
    """The instance's summary row, or NotFoundError (404) when it was never scraped or
    `seen` does not allow it (the same answer, so an instance's existence does not leak)."""
    rows = list_instances(instance, seen=seen) if seen.sees_instance(instance) else []
    if not rows:
        raise NotFoundError(f"no instance named {instance!r}")
    return rows[0]


def data_range(instance: str | None, seen: Seen) -> tuple[datetime, datetime] | None:
    """The first and last scrape of the instance (of every instance `seen` allows when
    None); None when there is none."""
    if instance is None:
        row = warehouse.fetch_one(DATA_RANGE, {"seen_instances": seen.instance_list()})
    elif not seen.sees_instance(instance):
        return None
    else:
        row = warehouse.fetch_one(INSTANCE_DATA_RANGE, {"instance": instance})
    if row is None or row["first"] is None:
        return None
    return row["first"], row["last"]


def recent_scrapes(instance: str, limit: int = 20) -> list[Scrape]:
    """The instance's latest scrape outcomes, newest first."""
    rows = warehouse.fetch_all(RECENT_SCRAPES, {"instance": instance, "limit": limit})
    return [Scrape(**row) for row in rows]


def latest_gauges(instance: str) -> LatestGauges:
    """KV usage (mean over engines), running and waiting (summed) at the last scrape."""
    rows = warehouse.fetch_all(LATEST_GAUGES, {"instance": instance})
    by_metric: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_metric[r["metric"]].append(r)
    kv = by_metric.get("kv_usage")

    def summed(metric: str) -> float | None:
        return sum(r["total"] for r in by_metric[metric]) if metric in by_metric else None

    return LatestGauges(
        kv_usage=sum(r["value"] for r in kv) / len(kv) if kv else None,
        running=summed("running"),
        waiting=summed("waiting"),
        kv_usage_by_engine={r["engine"]: r["value"] for r in kv or []},
    )


def latest_gauges_all(instances: list[Instance]) -> dict[str, GaugesNow]:
    """instance -> its gauges at its last successful scrape (rows from list_instances());
    an instance that never succeeded, or exposed none of them, is left out."""
    last = [(r.instance, r.last_up) for r in instances if r.last_up]
    if not last:
        return {}
    keys = [f"{i}@{round(ts.timestamp() * 1_000_000)}" for i, ts in last]
    rows = warehouse.fetch_all(
        LATEST_GAUGES_ALL, {"oldest": min(ts for _, ts in last), "keys": keys}
    )
    values: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        values[r["instance"]][r["metric"]] = r["value"] if r["metric"] == "kv_usage" else r["total"]
    return {instance: GaugesNow(**gauges) for instance, gauges in values.items()}
