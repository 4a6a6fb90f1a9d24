"""Scrape vLLM `/metrics` endpoints: read -> parse -> load, many scrapes per snapshot.

Owns collecting scrapes (never raises for a bad target: a failure is a row with a one-line
reason) and loading them. Every DuckLake commit costs ~15 ms of CPU whatever its size
(bench/bench_serving.py), so scrapes are loaded in batches: all due targets of a beat
tick, or a minute of spooled scrapes, land in one transaction together with the per-minute
rollup they complete. A scrape is always written whole or not at all; re-loading a scrape
already stored (same instance and time) is a no-op. Counter increases are computed here,
against each series' previous sample, so that queries and rollups only ever sum them.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pyarrow as pa

import warehouse
from analytics.serving.series import floor_minute, watermark
from ingest.parsers.counters import CounterState, compute_deltas
from ingest.parsers.prometheus_text import ExpositionError, one_line
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines import serving_rollups
from ingest.pipelines.pending_scrape import PendingScrape
from ingest.pipelines.scrape_baselines import (
    ScrapeState,
    baselines,
    drop_stored,
    read_state,
    remember,
)
from ingest.sources.vllm_metrics import read_metrics
from lib.http import FetchError

log = logging.getLogger(__name__)

# Minutes are rolled up a few at a time: each rollup costs its own statements (~30 ms of
# CPU), and answers read the minutes not yet rolled from raw samples anyway.
ROLLUP_EVERY = timedelta(minutes=5)

INSERT_SAMPLES = """
    INSERT INTO serving_samples
    SELECT instance, ts, name, labels, kind, value, created, metric, engine, le, delta
    FROM serving_batch
"""

INSERT_SCRAPES = """
    INSERT INTO serving_scrapes
    SELECT instance, ts, up, error, source, duration_ms, samples, engine_kind, model,
           engines, block_size, num_gpu_blocks, prefix_unit, resets
    FROM serving_scrape_batch
"""

SAMPLE_SCHEMA = pa.schema(
    [
        ("instance", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("name", pa.string()),
        ("labels", pa.string()),
        ("kind", pa.string()),
        ("value", pa.float64()),
        ("created", pa.float64()),
        ("metric", pa.string()),
        ("engine", pa.string()),
        ("le", pa.float64()),
        ("delta", pa.float64()),
    ]
)

SCRAPE_SCHEMA = pa.schema(
    [
        ("instance", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("up", pa.bool_()),
        ("error", pa.string()),
        ("source", pa.string()),
        ("duration_ms", pa.float64()),
        ("samples", pa.int32()),
        ("engine_kind", pa.string()),
        ("model", pa.string()),
        ("engines", pa.int32()),
        ("block_size", pa.int32()),
        ("num_gpu_blocks", pa.int64()),
        ("prefix_unit", pa.string()),
        ("resets", pa.int32()),
    ]
)


@dataclass
class LoadResult:
    scrapes: int = 0
    failed: int = 0
    samples: int = 0
    duplicates: int = 0
    resets: int = 0
    errors: dict[str, str] = field(default_factory=dict)

    def add(self, other: LoadResult) -> None:
        self.scrapes += other.scrapes
        self.failed += other.failed
        self.samples += other.samples
        self.duplicates += other.duplicates
        self.resets += other.resets
        self.errors.update(other.errors)

    def summary(self) -> dict[str, object]:
        return {
            "accepted": self.samples,
            "quarantined": self.failed,
            "duplicates": self.duplicates,
            "scrapes": self.scrapes,
            "resets": self.resets,
            "errors": self.errors,
        }


def collect_scrape(
    instance: str, url: str, *, timeout_s: float = 5.0, now: datetime | None = None
) -> PendingScrape:
    """Scrape `url` once as `instance`; never raises for a bad target or body."""
    pending = PendingScrape(instance, now or datetime.now(UTC))
    started = time.perf_counter()
    try:
        pending.scrape = parse_scrape(read_metrics(url, timeout_s=timeout_s))
    except (FetchError, ExpositionError) as exc:
        pending.error = one_line(str(exc))
    except Exception as exc:  # a parser bug must still be a failed scrape, not a crash
        log.exception("scraping %s failed unexpectedly", url)
        pending.error = f"internal error: {type(exc).__name__}"
    pending.duration_ms = (time.perf_counter() - started) * 1000
    return pending


def load_scrapes(
    pending: Sequence[PendingScrape],
    *,
    rollup_until: datetime | None = None,
    states: dict[str, CounterState] | None = None,
) -> LoadResult:
    """Load scrapes of any instances in one transaction (optionally with the rollup of
    every minute before `rollup_until`). `states` carries counter state across calls
    (an import's chunks); without it each instance's previous scrape is read back."""
    ordered = sorted(pending, key=lambda p: (p.instance, p.ts))

    def work(
        cur: warehouse.Cursor,
    ) -> tuple[LoadResult, list[PendingScrape], dict[str, CounterState]]:
        state = read_state(cur, ordered) if ordered else ScrapeState(set(), {}, None)
        if not ordered:
            state.mark = watermark(cur) if rollup_until is not None else None
        fresh = drop_stored(ordered, state.stored)
        result = LoadResult(duplicates=len(ordered) - len(fresh))
        current: dict[str, CounterState] = {}
        if fresh:
            current = baselines(cur, fresh, states, state.last_up)
            samples, scrape_rows = _build_tables(fresh, current, result)
            cur.register("serving_batch", samples)
            cur.register("serving_scrape_batch", scrape_rows)
            try:
                cur.execute(INSERT_SAMPLES)
                cur.execute(INSERT_SCRAPES)
            finally:
                cur.unregister("serving_batch")
                cur.unregister("serving_scrape_batch")
            _redo_rolled_minutes(cur, fresh, state.mark)
        if rollup_until is not None and (
            state.mark is None or floor_minute(rollup_until) - state.mark >= ROLLUP_EVERY
        ):
            serving_rollups.rollup_minutes(cur, rollup_until, known_mark=state.mark)
        return result, fresh, current

    # Remembered only once committed: `work` may run again after a conflict.
    # Its statements are small (a few thousand rows): idle DuckDB worker threads only add
    # CPU; most of a load's cost is DuckLake's catalog work per statement and commit.
    with warehouse.single_threaded():
        result, fresh, current = warehouse.write(work)
    remember(fresh, current, states)
    return result


def _redo_rolled_minutes(
    cur: warehouse.Cursor, fresh: list[PendingScrape], mark: datetime | None
) -> None:
    """Scrapes older than the rollup watermark (an import of history, a late spool) are
    rolled into their minutes now, so long-range answers include them."""
    if mark is None:
        return
    spans: dict[str, tuple[datetime, datetime]] = {}
    for p in fresh:
        if p.up and p.ts < mark:
            lo, hi = spans.get(p.instance, (p.ts, p.ts))
            spans[p.instance] = (min(lo, p.ts), max(hi, p.ts))
    for instance, (lo, hi) in spans.items():
        serving_rollups.rollup_range(cur, instance, lo, hi, known_mark=mark)


def _build_tables(
    fresh: list[PendingScrape], current: dict[str, CounterState], result: LoadResult
) -> tuple[pa.Table, pa.Table]:
    """Arrow tables for the samples and scrape rows; advances `current` in place."""
    columns: dict[str, list[object]] = {f.name: [] for f in SAMPLE_SCHEMA}
    scrape_columns: dict[str, list[object]] = defaultdict(list)
    for p in fresh:
        s = p.scrape
        row: dict[str, object] = {
            "instance": p.instance,
            "ts": p.ts,
            "up": p.up,
            "error": p.error,
            "source": p.source,
            "duration_ms": p.duration_ms,
            "samples": 0,
            "resets": 0,
        }
        if s is None:
            result.failed += 1
            result.errors[p.instance] = p.error or "failed"
        else:
            state = current[p.instance]
            keys = s.keys()
            deltas, starts, resets = compute_deltas(keys, s.values, s.createds, s.cumulative, state)
            n = len(s)
            columns["instance"] += [p.instance] * n
            columns["ts"] += [p.ts] * n
            columns["name"] += s.names
            columns["labels"] += s.labels
            columns["kind"] += s.kinds
            columns["value"] += s.values
            columns["created"] += starts
            columns["metric"] += s.metrics
            columns["engine"] += s.engines
            columns["le"] += s.les
            columns["delta"] += deltas
            row.update(
                samples=n,
                resets=resets,
                engine_kind=str(s.engine_kind),
                model=s.model,
                engines=s.engine_count,
                block_size=s.block_size,
                num_gpu_blocks=s.num_gpu_blocks,
                prefix_unit=s.prefix_unit,
            )
            result.scrapes += 1
            result.samples += n
            result.resets += resets
        for f in SCRAPE_SCHEMA:
            scrape_columns[f.name].append(row.get(f.name))
    return (
        pa.table(columns, schema=SAMPLE_SCHEMA),
        pa.table(dict(scrape_columns), schema=SCRAPE_SCHEMA),
    )
