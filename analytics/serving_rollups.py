"""Per-minute rollups of the modelled serving metrics, and raw-sample retention.

Owns serving_minutes and serving_rollup_marks. A rollup covers whole minutes before a
watermark and is written in the same transaction as its mark, so a crash leaves either
both or neither (no STARTED/DONE dance needed on a transactional store). Minutes at or
after the watermark are answered from raw samples by analytics/queries/serving.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb

from analytics import warehouse

WATERMARK = "SELECT max(rolled_until) FROM serving_rollup_marks"

FIRST_SAMPLE = "SELECT min(ts) FROM serving_samples WHERE metric IS NOT NULL"

# Sums over labels other than engine and le (finished_reason, model_name); gauges keep
# sum/count/max so means stay exact when minutes are merged into larger buckets.
ROLLUP = """
    INSERT INTO serving_minutes
    SELECT instance, time_bucket(INTERVAL 1 MINUTE, ts) AS minute, metric, engine, le,
           count(*) AS samples, sum(value) AS value_sum, max(value) AS value_max,
           sum(delta) AS increase
    FROM serving_samples
    WHERE metric IS NOT NULL AND ts >= ? AND ts < ?
      AND (CAST(? AS VARCHAR) IS NULL OR instance = CAST(? AS VARCHAR))
    GROUP BY ALL
"""

DELETE_MINUTES = """
    DELETE FROM serving_minutes WHERE instance = ? AND minute >= ? AND minute < ?
"""

INSERT_MARK = "INSERT INTO serving_rollup_marks VALUES (?, ?, now())"

DELETE_RAW = "DELETE FROM serving_samples WHERE ts < ?"


def floor_minute(ts: datetime) -> datetime:
    return ts.astimezone(UTC).replace(second=0, microsecond=0)


def watermark(cur: duckdb.DuckDBPyConnection) -> datetime | None:
    row = cur.execute(WATERMARK).fetchone()
    return row[0] if row else None


def rollup_minutes(cur: duckdb.DuckDBPyConnection, until: datetime) -> int:
    """Roll up every whole minute from the watermark to `until` (floored); returns the
    number of minutes covered. Runs inside the caller's transaction."""
    end = floor_minute(until)
    start = watermark(cur)
    if start is None:
        row = cur.execute(FIRST_SAMPLE).fetchone()
        if row is None or row[0] is None:
            return 0
        start = floor_minute(row[0])
    if end <= start:
        return 0
    cur.execute(ROLLUP, [start, end, None, None])
    minutes = int((end - start).total_seconds() // 60)
    cur.execute(INSERT_MARK, [end, minutes])
    return minutes


def rollup_range(
    cur: duckdb.DuckDBPyConnection, instance: str, start: datetime, end: datetime
) -> None:
    """Redo one instance's minutes in [start, end) that lie before the watermark (history
    loaded late, e.g. by import_prometheus); later minutes are the regular rollup's."""
    mark = watermark(cur)
    if mark is None:
        return
    lo = floor_minute(start)
    hi = min(floor_minute(end) + timedelta(minutes=1), mark)
    if hi <= lo:
        return
    cur.execute(DELETE_MINUTES, [instance, lo, hi])
    cur.execute(ROLLUP, [lo, hi, instance, instance])


def run_rollup(now: datetime | None = None, *, grace: timedelta = timedelta(minutes=1)) -> int:
    """Roll up every minute that closed at least `grace` ago (scrapes still in flight)."""
    until = (now or datetime.now(UTC)) - grace
    return warehouse.write(lambda cur: rollup_minutes(cur, until))


def apply_retention(raw_hours: int, now: datetime | None = None) -> datetime | None:
    """Delete raw samples older than `raw_hours`, but never ones not yet rolled up.
    Returns the cut-off used (None when nothing may be deleted yet)."""

    def work(cur: duckdb.DuckDBPyConnection) -> datetime | None:
        mark = watermark(cur)
        if mark is None:
            return None
        cutoff = min((now or datetime.now(UTC)) - timedelta(hours=raw_hours), mark)
        cur.execute(DELETE_RAW, [cutoff])
        return cutoff

    return warehouse.write(work)
