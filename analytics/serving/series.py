"""How a serving series is read: the window, which table answers which part of it
(per-hour rollups, per-minute rollups, raw samples, split at the rollup watermark), and
the one statement that reads several metrics per (bucket, instance, engine, le).

Owns the read half of the rollups too: the watermark (cached for readers) and the minute
and hour floors; ingest/pipelines/serving_rollups.py writes the rollups with them, and
nothing here imports ingest/. analytics/serving/queries.py asks its questions through
read_series(), whose rows are SeriesRow; this module knows nothing of what the metrics mean.

A Window carries who is reading (`seen`, a lib.access.Seen): a read over a window of a
user who does not see everything keeps only the rows of their visible instances, in the
statement itself (visible_instance_sql), so every fleet-wide sum and mean is over them.
A window built without one is the system's own (alerts, reports): it sees every instance.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import warehouse
from lib.access import Seen, visible_instance_sql

# What the system's own reads see (alerts, reports, the beat): every instance.
SYSTEM = Seen.all()

WATERMARK = "SELECT max(rolled_until) FROM serving_rollup_marks"

# Readers in other processes may use a watermark a few seconds old: still correct, since
# raw samples are deleted only far behind it (retention), never just behind it.
WATERMARK_TTL_S = 5.0
_cached: tuple[str, float, datetime | None] | None = None

# A series is read from up to three tables, each only for the part of the window it owns:
# per-hour rollups for hours before the watermark's hour, per-minute rollups from there to
# the watermark, raw samples after it. Every bound is a bound parameter, never a join, so
# DuckLake skips files outside it; instance and engine filters are plain equalities (never
# `? IS NULL OR ...`, which stops filter pushdown); the visibility filter is added only for a
# reader who does not see everything.
_PARTS = {
    "hours": """
        SELECT hour AS ts, instance, metric, engine, le, samples, value_sum, value_max, increase
        FROM serving_hours
        WHERE {metric_filter} AND hour >= $hours_start AND hour < $hours_end{filters}""",
    "minutes": """
        SELECT minute AS ts, instance, metric, engine, le, samples, value_sum, value_max, increase
        FROM serving_minutes
        WHERE {metric_filter} AND minute >= $minutes_start AND minute < $minutes_end{filters}""",
    "raw": """
        SELECT ts, instance, metric, engine, le, 1 AS samples, value AS value_sum, value AS value_max,
               delta AS increase
        FROM serving_samples
        WHERE {metric_filter} AND ts >= $raw_start AND ts < $raw_end{filters}""",
}

_BUCKETED = """
    SELECT CAST(floor(epoch(ts) / $bucket) * $bucket AS BIGINT) AS t, {instance} AS instance,
           metric, engine, le,
           sum(samples) AS samples, sum(value_sum) AS value_sum, max(value_max) AS value_max,
           sum(increase) AS increase
    FROM ({parts}) AS rows
    GROUP BY ALL
    ORDER BY t
"""


# A split metric (ingest/parsers/vllm.py's EXTRA_LABELS) is stored once per label value
# as `<metric>:<value>`; reading it by its bare name reads every value too.
_EXACT = "list_contains($metrics, metric)"
_WITH_SPLIT = (
    "(list_contains($metrics, metric) OR list_contains($split, split_part(metric, ':', 1)))"
)


# Summed over instances ("*"), a fleet-wide read returns one row per bucket, engine and
# bound instead of one per instance too (16x fewer for 16 targets).
ALL_INSTANCES = "*"


def _series_sql(
    parts: tuple[str, ...],
    by_instance: bool,
    by_engine: bool,
    split: bool,
    summed: bool = False,
    visible: bool = False,
) -> str:
    filters = (
        (" AND instance = $instance" if by_instance else "")
        + (" AND engine = $engine" if by_engine else "")
        + (f" AND {visible_instance_sql('instance')}" if visible else "")
    )
    metric_filter = _WITH_SPLIT if split else _EXACT
    union = "\n        UNION ALL".join(
        _PARTS[p].format(filters=filters, metric_filter=metric_filter) for p in parts
    )
    return _BUCKETED.format(parts=union, instance=f"'{ALL_INSTANCES}'" if summed else "instance")


_PART_SETS = [
    tuple(p for p, on in zip(("hours", "minutes", "raw"), bits, strict=True) if on)
    for bits in itertools.product((True, False), repeat=3)
    if any(bits)
]
# Every statement a series read can run: (tables read, by instance, by engine, with split
# metrics, summed over instances, only visible instances) -> SQL.
SERIES_SQL = {
    (parts, by_instance, by_engine, split, summed, visible): _series_sql(
        parts, by_instance, by_engine, split, summed, visible
    )
    for parts in _PART_SETS
    for by_instance in (True, False)
    for by_engine in (True, False)
    for split in (True, False)
    for summed in (True, False)
    for visible in (True, False)
}


def floor_minute(ts: datetime) -> datetime:
    return ts.astimezone(UTC).replace(second=0, microsecond=0)


def floor_hour(ts: datetime) -> datetime:
    return ts.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def watermark(cur: warehouse.Cursor) -> datetime | None:
    row = cur.execute(WATERMARK).fetchone()
    return row[0] if row else None


def cached_watermark() -> datetime | None:
    """The rollup watermark for readers, re-read at most every WATERMARK_TTL_S (and
    whenever the process points at another warehouse)."""
    global _cached
    from django.conf import settings

    lake = f"{settings.FLEETSCOPE_WAREHOUSE}|{settings.FLEETSCOPE_WAREHOUSE_DATA}"
    now = time.monotonic()
    if _cached is None or _cached[0] != lake or now - _cached[1] > WATERMARK_TTL_S:
        row = warehouse.fetch_one("SELECT max(rolled_until) AS w FROM serving_rollup_marks")
        _cached = (lake, now, row["w"] if row else None)
    return _cached[2]


def forget_watermark() -> None:
    global _cached
    _cached = None


@dataclass(frozen=True)
class Window:
    """A query range [start, end) cut into buckets of `bucket_s` seconds, read as `seen`
    may (every instance by default: the system's own reads)."""

    start: datetime
    end: datetime
    bucket_s: int
    seen: Seen = SYSTEM

    @property
    def minute_aligned(self) -> bool:
        return self.bucket_s % 60 == 0


def _split(w: Window, mark: datetime | None) -> dict[str, tuple[datetime, datetime]]:
    """Which table answers which part of the window (empty parts left out)."""
    spans: dict[str, tuple[datetime, datetime]] = {}
    if mark is None or not w.minute_aligned:
        return {"raw": (w.start, w.end)}
    rolled = min(w.end, mark)
    raw_start = max(w.start, mark)
    minutes_start = w.start
    if w.bucket_s % 3600 == 0:
        hours_end = min(rolled, floor_hour(mark))
        if hours_end > w.start:
            spans["hours"] = (w.start, hours_end)
            minutes_start = hours_end
    if rolled > minutes_start:
        spans["minutes"] = (minutes_start, rolled)
    if w.end > raw_start:
        spans["raw"] = (raw_start, w.end)
    return spans


@dataclass(slots=True)
class SeriesRow:
    """One metric's sums over one bucket of one instance, engine and histogram bound.
    Gauges carry samples, value_sum and value_max; counters the reset-adjusted increase
    (None where no sample had a previous one); `le` is None except for histograms.
    Not frozen: a frozen dataclass costs several times as much to build, and a month's
    read makes tens of thousands of these."""

    t: datetime  # the bucket's start
    instance: str
    engine: str | None
    le: float | None
    samples: int
    value_sum: float
    value_max: float
    increase: float | None


def read_series(
    metrics: tuple[str, ...],
    instance: str | None,
    engine: str | None,
    w: Window,
    split: tuple[str, ...] = (),
    only: frozenset[str] | None = None,
    summed: bool = False,
) -> dict[str, list[SeriesRow]]:
    """Rows per (bucket, engine, le) of each metric, read in one statement: every
    DuckLake statement pays ~10 ms per table for its catalog lookups. Each metric named
    in `split` is read with its `<metric>:<value>` series too, each under its own key
    (present only when it has rows). `only`: keep these instances' rows alone (a model
    filter, see instances.model_instances); None keeps every instance. `summed` (for a
    read of every instance, without `only`): rows summed over instances, instance "*"."""
    out: dict[str, list[SeriesRow]] = {m: [] for m in (*metrics, *split)}
    spans = _split(w, cached_watermark())
    if not spans:
        return out
    parts = tuple(p for p in ("hours", "minutes", "raw") if p in spans)
    params: dict[str, Any] = {"metrics": list(metrics), "bucket": float(w.bucket_s)}
    if split:
        params["split"] = list(split)
    for part, (lo, hi) in spans.items():
        params[f"{part}_start"], params[f"{part}_end"] = lo, hi
    if instance is not None:
        params["instance"] = instance
    if engine is not None:
        params["engine"] = engine
    summed = summed and instance is None and only is None
    visible = not w.seen.everything
    if visible:
        params["seen_instances"] = w.seen.instance_list()
    sql = SERIES_SQL[
        (parts, instance is not None, engine is not None, bool(split), summed, visible)
    ]
    # Buckets come back as epoch seconds: converting each distinct one once is far
    # cheaper than a TIMESTAMPTZ per row (tens of thousands of rows for 30 days).
    times: dict[int, datetime] = {}
    # Tuples in _BUCKETED's column order, straight into the typed rows (no dict per row).
    for (
        epoch,
        inst,
        metric,
        eng,
        le,
        samples,
        value_sum,
        value_max,
        increase,
    ) in warehouse.fetch_rows(sql, params):
        if only is not None and inst not in only:
            continue
        when = times.get(epoch)
        if when is None:
            when = times[epoch] = datetime.fromtimestamp(epoch, tz=UTC)
        rows = out.get(metric)
        if rows is None:
            rows = out[metric] = []
        rows.append(SeriesRow(when, inst, eng, le, samples, value_sum, value_max, increase))
    return out


def read_one(
    metric: str,
    instance: str | None,
    engine: str | None,
    w: Window,
    only: frozenset[str] | None = None,
) -> list[SeriesRow]:
    return read_series((metric,), instance, engine, w, only=only)[metric]
