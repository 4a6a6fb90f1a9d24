"""Per-minute and per-hour rollups of the modelled serving metrics, and raw retention.

Owns writing serving_minutes, serving_hours and serving_rollup_marks. A rollup covers
whole minutes before a watermark (and whole hours before the watermark's hour) and is
written in the same transaction as its mark, so a crash leaves either both or neither (no
STARTED/DONE dance needed on a transactional store). Minutes at or after the watermark are
answered from raw samples; reading the watermark and flooring times belong to the read
side (analytics/serving/series.py), which must not import this module.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import warehouse
from analytics.serving.series import floor_hour, floor_minute, forget_watermark, watermark

FIRST_SAMPLE = "SELECT min(ts) FROM serving_samples WHERE metric IS NOT NULL"

# Sums over labels other than engine and le (finished_reason, model_name); gauges keep
# sum/count/max so means stay exact when minutes are merged into larger buckets.
ROLLUP_MINUTES = """
    INSERT INTO serving_minutes
    SELECT instance, time_bucket(INTERVAL 1 MINUTE, ts) AS minute, metric, engine, le,
           count(*) AS samples, sum(value) AS value_sum, max(value) AS value_max,
           sum(delta) AS increase
    FROM serving_samples
    WHERE metric IS NOT NULL AND ts >= ? AND ts < ?
    GROUP BY ALL
"""

ROLLUP_MINUTES_OF_INSTANCE = """
    INSERT INTO serving_minutes
    SELECT instance, time_bucket(INTERVAL 1 MINUTE, ts) AS minute, metric, engine, le,
           count(*) AS samples, sum(value) AS value_sum, max(value) AS value_max,
           sum(delta) AS increase
    FROM serving_samples
    WHERE metric IS NOT NULL AND ts >= ? AND ts < ? AND instance = ?
    GROUP BY ALL
"""

ROLLUP_HOURS = """
    INSERT INTO serving_hours
    SELECT instance, time_bucket(INTERVAL 1 HOUR, minute) AS hour, metric, engine, le,
           sum(samples), sum(value_sum), max(value_max), sum(increase)
    FROM serving_minutes
    WHERE minute >= ? AND minute < ?
    GROUP BY ALL
"""

ROLLUP_HOURS_OF_INSTANCE = """
    INSERT INTO serving_hours
    SELECT instance, time_bucket(INTERVAL 1 HOUR, minute) AS hour, metric, engine, le,
           sum(samples), sum(value_sum), max(value_max), sum(increase)
    FROM serving_minutes
    WHERE minute >= ? AND minute < ? AND instance = ?
    GROUP BY ALL
"""

DELETE_MINUTES = "DELETE FROM serving_minutes WHERE instance = ? AND minute >= ? AND minute < ?"
DELETE_HOURS = "DELETE FROM serving_hours WHERE instance = ? AND hour >= ? AND hour < ?"

INSERT_MARK = "INSERT INTO serving_rollup_marks VALUES (?, ?, now())"

DELETE_RAW = "DELETE FROM serving_samples WHERE ts < ?"


def rollup_minutes(
    cur: warehouse.Cursor, until: datetime, *, known_mark: datetime | None = None
) -> int:
    """Roll up every whole minute from the watermark to `until` (floored), and every hour
    that completes; returns the number of minutes covered. Runs inside the caller's
    transaction; `known_mark` saves reading the watermark again."""
    end = floor_minute(until)
    start = known_mark if known_mark is not None else watermark(cur)
    if start is None:
        row = cur.execute(FIRST_SAMPLE).fetchone()
        if row is None or row[0] is None:
            return 0
        start = floor_minute(row[0])
    if end <= start:
        return 0
    cur.execute(ROLLUP_MINUTES, [start, end])
    if floor_hour(end) > floor_hour(start):
        cur.execute(ROLLUP_HOURS, [floor_hour(start), floor_hour(end)])
    minutes = int((end - start).total_seconds() // 60)
    cur.execute(INSERT_MARK, [end, minutes])
    forget_watermark()
    return minutes


def rollup_range(
    cur: warehouse.Cursor,
    instance: str,
    start: datetime,
    end: datetime,
    *,
    known_mark: datetime | None = None,
) -> None:
    """Redo one instance's minutes (and hours) in [start, end] that lie before the
    watermark (history loaded late, e.g. by import_prometheus); later minutes are the
    regular rollup's."""
    mark = known_mark if known_mark is not None else watermark(cur)
    if mark is None:
        return
    lo = floor_minute(start)
    hi = min(floor_minute(end) + timedelta(minutes=1), mark)
    if hi > lo:
        cur.execute(DELETE_MINUTES, [instance, lo, hi])
        cur.execute(ROLLUP_MINUTES_OF_INSTANCE, [lo, hi, instance])
    hours_lo = floor_hour(start)
    hours_hi = min(floor_hour(end) + timedelta(hours=1), floor_hour(mark))
    if hours_hi > hours_lo:
        cur.execute(DELETE_HOURS, [instance, hours_lo, hours_hi])
        cur.execute(ROLLUP_HOURS_OF_INSTANCE, [hours_lo, hours_hi, instance])


def run_rollup(now: datetime | None = None, *, grace: timedelta = timedelta(minutes=1)) -> int:
    """Roll up every minute that closed at least `grace` ago (scrapes still in flight)."""
    until = (now or datetime.now(UTC)) - grace
    return warehouse.write(lambda cur: rollup_minutes(cur, until))


def apply_retention(raw_hours: int, now: datetime | None = None) -> datetime | None:
    """Delete raw samples older than `raw_hours`, but never ones not yet rolled up.
    Returns the cut-off used (None when nothing may be deleted yet)."""

    def work(cur: warehouse.Cursor) -> datetime | None:
        mark = watermark(cur)
        if mark is None:
            return None
        cutoff = min((now or datetime.now(UTC)) - timedelta(hours=raw_hours), mark)
        cur.execute(DELETE_RAW, [cutoff])
        return cutoff

    return warehouse.write(work)
