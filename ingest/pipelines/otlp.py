"""Loading the OTLP spool into the warehouse, many acknowledged requests per transaction,
each record once however often its exporter retried it.

Owns draining ingest/pipelines/otlp_spool.py's files (one drainer at a time, by a lock
file), the SQL that stores metric points once per (series, ts) and quarantines a request's
rejected records once per request body, and removing files only after their transaction
committed. Events go through ingest/pipelines/adapter_loading.py (run + id: Claude Code's
`session.id` + `event.sequence`, a span's trace + span id), so the run totals follow.
Must not decode OTLP or map records (ingest/sources/otlp.py, ingest/parsers/otlp*.py).
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

import warehouse
from ingest.parsers.event_rows import EventRows
from ingest.pipelines import otlp_calls, otlp_requests, otlp_spans, otlp_spool
from ingest.pipelines.adapter_loading import Dedup, insert_new
from ingest.pipelines.loading import insert_quarantine, now_utc
from ingest.pipelines.otlp_spool import Spooled
from lib.file_locks import held_alone

log = logging.getLogger(__name__)

SOURCE_KIND = "otlp"
# Files per transaction: enough for a second of 4 clients' batches of 512 records.
FILES_PER_LOAD = 128

POINT_SCHEMA = pa.schema(
    [
        ("series", pa.string()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("kind", pa.string()),
        ("temporality", pa.string()),
        ("service", pa.string()),
        ("session", pa.string()),
        ("person", pa.string()),
        ("organization", pa.string()),
        ("team", pa.string()),
        ("department", pa.string()),
        ("cost_center", pa.string()),
        ("attrs", pa.string()),
        ("resource", pa.string()),
        ("start_ts", pa.string()),
        ("ts", pa.string()),
        ("value", pa.float64()),
        ("count", pa.int64()),
        ("source", pa.string()),
    ]
)
_POINT_NAMES = [f.name for f in POINT_SCHEMA]

INSERT_POINTS_SQL = f"""
INSERT INTO otlp_points ({", ".join(_POINT_NAMES)}, ingested_at)
SELECT {
    ", ".join(
        f"CAST(b.{n} AS TIMESTAMPTZ)" if n in ("start_ts", "ts") else f"b.{n}" for n in _POINT_NAMES
    )
}, $now
FROM (
    SELECT *, row_number() OVER (PARTITION BY series, ts) AS nth FROM otlp_point_batch
) AS b
WHERE b.nth = 1 AND NOT EXISTS (
    SELECT 1 FROM otlp_points AS p
    WHERE p.series = b.series AND p.ts = CAST(b.ts AS TIMESTAMPTZ)
)
"""

QUARANTINED_SOURCES_SQL = """
SELECT DISTINCT source FROM quarantine
WHERE source_kind = ? AND source IN (SELECT source FROM wanted_sources)
"""

QUARANTINE_SCHEMA = pa.schema(
    [
        ("line_no", pa.int64()),
        ("byte_offset", pa.int64()),
        ("reason", pa.string()),
        ("raw_text", pa.string()),
    ]
)


@dataclass
class DrainSummary:
    files: int = 0
    events: int = 0  # stored now (the rest of the batch's events were stored before)
    duplicates: int = 0
    points: int = 0
    quarantined: int = 0
    set_aside: list[str] = field(default_factory=list)
    busy: bool = False  # another drainer held the lock

    def add(self, other: DrainSummary) -> None:
        self.files += other.files
        self.events += other.events
        self.duplicates += other.duplicates
        self.points += other.points
        self.quarantined += other.quarantined
        self.set_aside.extend(other.set_aside)


def _drain_lock() -> AbstractContextManager[bool]:
    """True when this process is the one drainer; False when another one is."""
    return held_alone(otlp_spool.spool_dir() / ".drain.lock")


def drain(*, seconds: float = 50.0, files_per_load: int = FILES_PER_LOAD) -> DrainSummary:
    """Load what the spool holds, a transaction per `files_per_load` files, until it is
    empty or `seconds` have passed (a Celery task's share of the worker)."""
    summary = DrainSummary()
    with _drain_lock() as held:
        if not held:
            summary.busy = True
            return summary
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            paths = otlp_spool.pending_files(limit=files_per_load)
            if not paths:
                break
            summary.add(load_files(paths))
    return summary


def load_files(paths: list[Path]) -> DrainSummary:
    """Store these spool files in one transaction, then remove them."""
    summary = DrainSummary()
    batches: list[Spooled] = []
    for path in paths:
        try:
            batches.append(otlp_spool.read(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            otlp_spool.set_aside(path, f"unreadable: {exc}")
            log.warning("spooled OTLP request %s unreadable (%s); set aside", path.name, exc)
            summary.set_aside.append(path.name)
    if batches:
        stored = warehouse.write(lambda cur: _store(cur, batches))
        summary.add(stored)
        otlp_spool.discard([b.path for b in batches])
    return summary


# What every OTLP load claims first (warehouse.claim): drainers of several machines' spools
# take turns, so a batch an exporter sent to two of them (a retry) is found stored by the
# second, whose snapshot is taken after the first committed.
LOAD_CLAIM = "otlp-load"


def _store(cur: warehouse.Cursor, batches: list[Spooled]) -> DrainSummary:
    warehouse.claim([LOAD_CLAIM])  # before the transaction's first read
    summary = DrainSummary(files=len(batches))
    rows = EventRows()
    for batch in batches:
        for event in batch.events:
            rows.add(**event, source=batch.source)
    if len(rows):
        table = rows.table()
        table = otlp_calls.new_otlp_calls(cur, table)  # a call a transcript stored is kept once
        inserted = insert_new(cur, table, source_kind=SOURCE_KIND, source="otlp", dedup=Dedup.RUN)
        summary.events = inserted
        summary.duplicates = table.num_rows - inserted
        otlp_spans.assign_agents(cur, rows)
    summary.points = _insert_points(cur, batches)
    otlp_requests.store(cur, batches)  # vLLM's llm_request spans -> requests
    summary.quarantined = _quarantine(cur, batches)
    return summary


def _insert_points(cur: warehouse.Cursor, batches: list[Spooled]) -> int:
    columns: dict[str, list[Any]] = {name: [] for name in _POINT_NAMES}
    for batch in batches:
        for point in batch.points:
            for name in _POINT_NAMES:
                columns[name].append(batch.source if name == "source" else point.get(name))
    if not columns["series"]:
        return 0
    table = pa.table([pa.array(columns[f.name], f.type) for f in POINT_SCHEMA], schema=POINT_SCHEMA)
    cur.register("otlp_point_batch", table)
    try:
        cur.execute(INSERT_POINTS_SQL, {"now": now_utc()})
        row = cur.fetchone()
    finally:
        cur.unregister("otlp_point_batch")
    return int(row[0]) if row else 0


def _quarantine(cur: warehouse.Cursor, batches: list[Spooled]) -> int:
    """Each request's rejected records, under `<source>/<body digest>`: a retried request
    is quarantined once."""
    wanted = {f"{b.source}/{b.digest}": b for b in batches if b.rejected}
    if not wanted:
        return 0
    cur.register("wanted_sources", pa.table({"source": pa.array(sorted(wanted), pa.string())}))
    try:
        cur.execute(QUARANTINED_SOURCES_SQL, [SOURCE_KIND])
        done = {r[0] for r in cur.fetchall()}
    finally:
        cur.unregister("wanted_sources")
    count = 0
    for source, batch in wanted.items():
        if source in done:
            continue
        done.add(source)  # the same body twice in one load
        table = pa.table(
            [
                pa.array([r.position for r in batch.rejected], pa.int64()),
                pa.nulls(len(batch.rejected), pa.int64()),
                pa.array([f"{r.path}: {r.reason}" for r in batch.rejected], pa.string()),
                pa.array([r.raw for r in batch.rejected], pa.string()),
            ],
            schema=QUARANTINE_SCHEMA,
        )
        count += insert_quarantine(cur, SOURCE_KIND, source, table)
    return count
