"""Storing a staged chunk in the caller's transaction: which of its events are stored
already (by another load, or by this one), then its new events and rejected lines.

Owns the stored-id lookups against the lake (the dedup's reads: dedup.py keeps only what
the load remembers) and what one transaction of a load gathers (Transaction). It must not
commit: the transaction and the read position are the caller's (__init__.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines import run_rollups
from ingest.pipelines.agent_events import dedup
from ingest.pipelines.agent_events.dedup import Load, sorted_hashes
from ingest.pipelines.agent_events.staging import KEYS_SQL, StagedChunk
from ingest.pipelines.loading import insert_quarantine

# `candidate_events` (StagedChunk.keys) -> the lines of those whose run + id is stored
# already: duplicates, not stored again. `{stored}` is EARLIER_LOADS_SQL, or
# THIS_LOAD_SQL for ids the load may have stored itself.
STORED_IDS_SQL = """
SELECT b.source_line
FROM candidate_events AS b
SEMI JOIN ({stored}) AS e ON e.run = b.run AND e.id = b.id
"""
# The stored events of other loads (every row of one load has its stamp as ingested_at):
# the lake skips this load's own files by their min/max stamp, so a run's lookup costs
# the same at its millionth event as at its first. `{runs}` names the chunk's runs when
# they are few: given as constants, the lake reads only the files whose runs can match
# (ten times faster with 20 runs, bench/agent_events.md).
EARLIER_LOADS_SQL = "SELECT run, id FROM events WHERE {runs} ingested_at <> ?"
THIS_LOAD_SQL = "SELECT run, id FROM events WHERE {runs} ingested_at = ?"
LISTED_RUNS_UP_TO = 100


@dataclass
class Transaction:
    """What one transaction of a load has gathered: the run totals its chunks add, and
    the runs that no other load has stored (found once: a transaction reads one snapshot,
    and the others' rows do not change in it)."""

    totals: run_rollups.PendingTotals = field(default_factory=run_rollups.PendingTotals)
    alone: set[str] = field(default_factory=set)


def load_chunk(
    cur: warehouse.Cursor,
    chunk: StagedChunk,
    load: Load,
    transaction: Transaction,
    lake_dir: Path | None,
) -> tuple[int, int]:
    """Store a staged chunk's new events and rejected lines; returns (accepted,
    quarantined). A staged file in `lake_dir` (the events table's own folder) whose events
    are all new is added to events as it is; otherwise its new rows are inserted (the
    caller deletes the file after the transaction: staging.discard_after). The events' run
    totals wait in the transaction's totals for its end."""
    chunk.added = False
    accepted = chunk.count
    if chunk.count:
        stored = _stored_lines(cur, chunk, load, transaction)
        hashes = chunk.hashes
        if len(stored):
            keys = _keys(cur, chunk)
            keys = keys.filter(pc.invert(pc.is_in(keys.column("source_line"), value_set=stored)))
            hashes = sorted_hashes(keys.column("key_hash"))
            accepted = keys.num_rows
        if chunk.file is not None and not len(stored) and chunk.file.parent == lake_dir:
            assert chunk.reduced is not None
            transaction.totals.add_file(cur, chunk.file, chunk.reduced)
            chunk.added = True
        else:
            rows = chunk.rows if chunk.rows is not None else _read_back(cur, chunk.file)
            reduced = chunk.reduced
            if len(stored):
                rows = rows.filter(
                    pc.is_in(rows.column("source_line"), value_set=keys.column("source_line"))
                )
                reduced = None  # the worker's covers every row: counted again from these
            transaction.totals.insert(cur, rows, reduced)
        load.remember(hashes)
    quarantined = insert_quarantine(cur, parser.SOURCE_KIND, load.source, chunk.rejected)
    return accepted, quarantined


def _keys(cur: warehouse.Cursor, chunk: StagedChunk) -> pa.Table:
    """StagedChunk.keys, read from the staged file the first time they are needed."""
    if chunk.keys is None:
        assert chunk.file is not None
        sql = KEYS_SQL.format(key_hash=dedup.KEY_HASH_SQL, rows="read_parquet(?)")
        chunk.keys = cur.execute(sql, [str(chunk.file)]).to_arrow_table()
    return chunk.keys


def _read_back(cur: warehouse.Cursor, staged: Path | None) -> pa.Table:
    """The rows of a staged file (a chunk kept in memory has no file)."""
    assert staged is not None
    return cur.execute("SELECT * FROM read_parquet(?)", [str(staged)]).to_arrow_table()


def _stored_lines(
    cur: warehouse.Cursor, chunk: StagedChunk, load: Load, transaction: Transaction
) -> pa.ChunkedArray:
    """The source_line of each candidate whose run + id is stored already: by another
    load, or by this one (a hash it remembers, then checked against its rows)."""
    runs = chunk.runs
    listed = ""
    if len(runs) <= LISTED_RUNS_UP_TO:
        listed = f"run IN ({', '.join('?' * len(runs))}) AND"
    else:
        runs = []
    params = [*runs, load.stamp]
    earlier = EARLIER_LOADS_SQL.format(runs=listed)
    found = pa.chunked_array([], pa.int64())
    # Runs found alone earlier in this transaction are not asked about again. Asking is
    # cheaper than the join (2 ms against 25-50 ms, bench/agent_events.md), which reads
    # every candidate however empty its other side is: when no other load stored the runs
    # (a new run's usual case), it is skipped.
    if not (runs and transaction.alone.issuperset(runs)):
        if _any_stored(cur, earlier, params):
            found = _stored_of(cur, _keys(cur, chunk), earlier, params)
        else:
            transaction.alone.update(runs)
    if not load.stored_any(chunk.hashes):
        return found
    keys = _keys(cur, chunk)
    seen = load.maybe_stored(keys.column("key_hash"))
    own = _stored_of(cur, keys.filter(seen), THIS_LOAD_SQL.format(runs=listed), params)
    return pa.chunked_array([*found.chunks, *own.chunks], pa.int64())


def _any_stored(cur: warehouse.Cursor, stored: str, params: list[object]) -> bool:
    return cur.execute(f"SELECT 1 FROM ({stored}) LIMIT 1", params).fetchone() is not None


def _stored_of(
    cur: warehouse.Cursor, keys: pa.Table, stored: str, params: list[object]
) -> pa.ChunkedArray:
    cur.register("candidate_events", keys.select(["run", "id", "source_line"]))
    try:
        found = cur.execute(STORED_IDS_SQL.format(stored=stored), params).to_arrow_table()
    finally:
        cur.unregister("candidate_events")
    return found.column("source_line")
