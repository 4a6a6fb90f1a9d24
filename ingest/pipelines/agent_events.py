"""Agent-event ingest: files (or an HTTP body) -> parse -> validate -> load, exactly once.

Owns the read position of every agent-event file: chunks of whole lines are loaded in a
warehouse transaction together with the position after the last of them, so a crash
mid-file loses and duplicates nothing, a re-run reads nothing twice, and a file that grew is read
from where it stopped. Events re-sent with the same run + id are stored once, and the
run totals follow in the same transaction (ingest/pipelines/run_rollups.py).

A long file's chunks are read, parsed and written to Parquet ("staged") by worker
threads, PARSE_AHEAD at a time; the loading thread only looks up which of a chunk's ids
are stored already and, when none is, adds the chunk's Parquet file to events as it is.
"""

from __future__ import annotations

import threading
import uuid
from collections import deque
from collections.abc import Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
from django.conf import settings
from tqdm import tqdm

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines import run_rollups
from ingest.pipelines.line_files import resume_from
from ingest.pipelines.loading import (
    IngestSummary,
    Position,
    PositionMoved,
    check_position,
    insert_quarantine,
    read_position,
    read_positions,
    record_position,
)
from ingest.sources import files

SOURCE_KIND = parser.SOURCE_KIND
PROGRESS_MIN_BYTES = 16 * 1024 * 1024  # smaller files finish before a bar is worth drawing
# Several chunks are loaded in one transaction, up to this many bytes: each transaction
# costs ~0.1 s of CPU of its own (the lake's snapshot, the position, the commit, and the
# run totals, added once for all its rows; every statement on a lake table costs 15-40 ms
# of catalog lookups, even on an empty one). The writer lock is held meanwhile, a few
# seconds at most; a crash loses only the uncommitted transaction's work, never a row.
# bench_ingest's 250 MB in one transaction took 4.55-4.62 s against 4.93-5.49 s in two of
# 128 MiB (three interleaved pairs; five more: medians 3.65 against 3.98 s, within noise),
# at the same peak memory (its peak is while two chunks are parsed, not at the commit);
# the totals' columns of a transaction's events wait in memory until it commits.
COMMIT_BYTES = 256 * 1024 * 1024
# Each chunk is parsed whole in memory (its bytes, its lines, DuckDB's rows while they are
# written), and the next PARSE_AHEAD are parsed while one loads. A file with more than half
# a chunk to read is cut into a multiple of PARSE_AHEAD chunks (even_chunk_bytes). Every
# chunk has statements, a file added to the lake and catalog rows of its own, so fewer,
# larger chunks use less CPU: on the bench file, four chunks of 62 MB for two workers took
# a median of 2.00 s and 3.69 s of CPU against 2.08 s and 3.83 s for nine of 28 MB for
# three (eight interleaved pairs; six more: 2.11 s and 3.89 s against 2.25 s and 4.18 s),
# at the same peak, under 1 GiB: bench_ingest's command peaked at 547-612 MiB against
# 577-622 MiB (a .jsonl.gz of the same events, read on one thread: 690 against 640 MiB).
CHUNK_BYTES = 64 * 1024 * 1024
# Chunks parsed at once while one loads. Two keep the 2 cores busy: two workers on 64 MiB
# chunks took a median of 2.12 s against 2.32 s for three on 48 MiB ones (six chunks; six
# interleaved pairs; a peak of 620-640 MiB), and on 32 MiB chunks three were no faster
# than two (2.19 s against 2.16 s, five pairs).
PARSE_AHEAD = 2
# Staged chunks (small: their rows are in Parquet files) wait for the loading thread up
# to this many at once, so the workers go on while it commits a transaction.
STAGED_AHEAD = 2

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
# the same at its millionth event as at its first (on a 1,000,000-event run, 3 ms against
# 58 ms for reading the run's ids back). `{runs}` names the chunk's runs when they are
# few: given as constants, the lake reads only the files whose runs can match (with
# 10,000,000 events in 20 runs, one run's 1,000 candidates took 42 ms that way against
# 422 ms).
EARLIER_LOADS_SQL = "SELECT run, id FROM events WHERE {runs} ingested_at <> ?"
THIS_LOAD_SQL = "SELECT run, id FROM events WHERE {runs} ingested_at = ?"
LISTED_RUNS_UP_TO = 100
# How a load remembers the run + id of each event it stored (DuckDB's 64-bit hash): a
# chunk's ids whose hash it has seen are checked against its own rows (THIS_LOAD_SQL).
KEY_HASH_SQL = "hash(run, id)"


class _Load:
    """One pass over a source: its name, the ingested_at of every row it stores (a stamp
    no earlier row has), and the sorted key hashes of the events it has stored, so that
    its own repeats are found in memory instead of by reading its own files back."""

    def __init__(self, source: str, stamp: datetime | None = None) -> None:
        self.source = source
        self._stamp = Future[datetime]()
        if stamp is not None:
            self._stamp.set_result(stamp)
        self._hashes = np.empty(0, dtype=np.uint64)
        self._unmerged: list[np.ndarray] = []  # remembered, not yet in _hashes

    @property
    def stamp(self) -> datetime:
        """The stamp; waits for find_stamp() when it has not set it yet."""
        return self._stamp.result()

    def find_stamp(self) -> None:
        """Find a stamp no stored event has (run_rollups.unused_stamp), once: a lake query
        of 40-50 ms, which _staged_chunks runs on the calling thread while the workers
        read their first chunks (a chunk needs the stamp only once its lines are split
        and checked)."""
        if self._stamp.done():
            return
        try:
            self._stamp.set_result(run_rollups.unused_stamp(warehouse.cursor()))
        except BaseException as exc:
            self._stamp.set_exception(exc)
            raise

    def stored_any(self, ordered: np.ndarray) -> bool:
        """Whether this load has stored any of these sorted key hashes."""
        stored = self._merged()
        at = np.searchsorted(stored, ordered)
        inside = at < len(stored)
        return bool((stored[at[inside]] == ordered[inside]).any())

    def maybe_stored(self, hashes: pa.ChunkedArray) -> np.ndarray:
        """Which of these key hashes (NULL for an event without id) this load has stored.
        They are looked up in sorted order: 12-18 ms for 134,000 among 1,072,000, against
        54-64 ms in their own order."""
        values, valid = _hash_values(hashes)
        order = np.argsort(values)
        ordered = values[order]
        stored = self._merged()
        at = np.searchsorted(stored, ordered)
        hit = at < len(stored)
        hit[hit] = stored[at[hit]] == ordered[hit]
        found = np.empty(len(values), dtype=bool)
        found[order] = hit
        return found & valid

    def remember(self, ordered: np.ndarray) -> None:
        """Add the sorted key hashes of events this load stored. They join the others when
        a later chunk is looked up (_merged), so a load's last chunk, looked up by none,
        is never merged (17 ms less after the last of bench_ingest's four chunks)."""
        self._unmerged.append(ordered)

    def _merged(self) -> np.ndarray:
        for ordered in self._unmerged:
            self._hashes = np.insert(self._hashes, np.searchsorted(self._hashes, ordered), ordered)
        self._unmerged.clear()
        return self._hashes


def _hash_values(hashes: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    valid = np.asarray(pc.is_valid(hashes))
    values = pc.fill_null(hashes, 0).to_numpy().astype(np.uint64, copy=False)
    return values, valid


def _sorted_hashes(hashes: pa.ChunkedArray) -> np.ndarray:
    """The key hashes of events with an id, sorted (worked out in the worker: the loading
    thread looks them up and remembers them without sorting them again)."""
    values, valid = _hash_values(hashes)
    return np.sort(values[valid])


def _repeats(ordered: np.ndarray) -> bool:
    return bool((ordered[1:] == ordered[:-1]).any())


@dataclass
class _Transaction:
    """What one transaction of a load has gathered: the run totals its chunks add, and
    the runs that no other load has stored (found once: a transaction reads one snapshot,
    and the others' rows do not change in it)."""

    totals: run_rollups.PendingTotals = field(default_factory=run_rollups.PendingTotals)
    alone: set[str] = field(default_factory=set)


@dataclass
class StagedChunk:
    """A chunk's lines parsed and ready to load: its new-looking events (valid, and the
    first line of each run + id) stamped as events stores them, in a Parquet file
    (`file`) or, when they are few enough to be inlined in the catalog, in memory
    (`rows`). The load keeps only their key hashes, runs and what they add to the run
    totals in memory; their ids, when it needs them, it reads from the file (_keys)."""

    keys: pa.Table | None  # the candidates' run, id, source_line and key_hash (_keys)
    hashes: np.ndarray  # the key hashes of those with an id, sorted (_sorted_hashes)
    runs: list[str]  # the candidates' runs
    count: int  # the candidates
    rejected: pa.Table  # line_no, byte_offset, reason, raw_text
    lines: int  # lines consumed, blank ones included
    valid: int  # valid events, repeated ids included
    size: int  # bytes parsed (the chunk's own are not kept: they would hold memory)
    file: Path | None = None
    rows: pa.Table | None = None
    # What the staged file's rows add to the run totals (run_rollups.reduce_rows), worked
    # out in the worker: the load only merges it when it stores every row.
    reduced: run_rollups.Reduced | None = None
    added: bool = False  # the file was added to events as it is (load_chunk)

    def discard(self) -> None:
        """Delete the staged file: once its rows are copied into the lake, or when they
        will not be loaded."""
        if self.file is not None:
            self.file.unlink(missing_ok=True)

    def release(self) -> None:
        """Drop the chunk's tables once it is loaded: until its transaction ends, only
        its file's fate is kept."""
        self.keys = self.rejected = _NO_ROWS
        self.hashes = _NO_HASHES
        self.runs = []
        self.rows = self.reduced = None


_NO_ROWS = pa.table({})
_NO_HASHES = np.empty(0, dtype=np.uint64)
_NO_REJECTED = pa.schema(
    [
        ("line_no", pa.int64()),
        ("byte_offset", pa.int64()),
        ("reason", pa.string()),
        ("raw_text", pa.string()),
    ]
)


# The fast path, from the parsed lines to a staged file in one statement: DuckDB's rows
# never pass through Arrow (for 130,000 events, a median of 328 ms against 391 ms for
# exporting them and writing the file from Arrow), and the chunk is not copied to a
# temporary file for read_json (which, reading such a file, staged a chunk no faster: a
# minimum of 277 ms against 269 ms, 25 runs each). Rejected lines are written too, with a
# NULL ts, and taken out again if there are any. A chunk holding a line that is not JSON
# is staged again by _STAGE_ANY_SQL (parser.TYPED_ROWS_ANY_SQL). source_kind, the same in
# every row, is an ENUM of one value, which the Parquet writer stores without looking each
# row up in its dictionary: about 1 ms per 130,000 rows against 6-8 ms for a VARCHAR (read
# back, it is a VARCHAR).
def _stage_sql(typed_rows: str) -> str:
    return f"""
SELECT {", ".join(parser.EVENT_COLUMNS)}, line_no AS source_line,
       '{SOURCE_KIND}'::ENUM('{SOURCE_KIND}') AS source_kind, ?::VARCHAR AS source,
       ?::TIMESTAMPTZ AS ingested_at
FROM ({typed_rows})
"""


_STAGE_SQL = _stage_sql(parser.TYPED_ROWS_SQL)
_STAGE_ANY_SQL = _stage_sql(parser.TYPED_ROWS_ANY_SQL)
# What the load needs of a staged file besides its totals, in the same scan (reduce_sql):
# its key hashes, how many rows it holds, and how many the fast path rejected (NULL ts:
# their reasons come from the exact path).
_STAGED_EXTRA = """,
       list({key_hash}) FILTER (WHERE id IS NOT NULL) AS key_hashes,
       count(*) AS candidates,
       count(*) FILTER (WHERE ts IS NULL) AS rejected"""
# The ids of a staged file's rows (StagedChunk.keys), read when the load needs them.
_KEYS_SQL = """
SELECT run, id, source_line, CASE WHEN id IS NOT NULL THEN {key_hash} END AS key_hash
FROM {rows}
"""


def _discard_after(chunks: Iterable[StagedChunk], *, committing: bool) -> None:
    """Delete the staged files a transaction leaves: all of them when it rolled back
    before its COMMIT, else those it did not add to events (which the lake now owns; if
    the COMMIT itself failed, run_maintenance deletes them as orphans)."""
    for chunk in chunks:
        if not (committing and chunk.added):
            chunk.discard()


def stage_lines(lines: pa.Table, load: _Load, folder: Path, *, size: int) -> StagedChunk:
    """Parse and check whole lines (parser.split_lines, numbered as in the file) and stage
    their new-looking events in a Parquet file in `folder`, stamped for `load`.

    The fast path writes the file straight from the typed rows. When any line needs the
    exact path (a suspect line, or one the fast path rejected), an id repeats within the
    chunk, or the rows are few enough to be inlined, they are read back, completed and
    staged again (_restaged)."""
    cur = warehouse.cursor()
    nonblank = parser.nonblank_lines(lines)
    suspect = pc.fill_null(
        pc.match_substring_regex(nonblank.column("text"), parser.SUSPECT_LINE), False
    )
    file = folder / f"fleetscope-{uuid.uuid4()}.parquet"
    cur.register(
        "chunk_lines", nonblank.select(["line_no", "text"]).append_column("suspect", suspect)
    )
    try:
        stamped = [load.source, load.stamp]
        try:
            warehouse.data_files.copy_to_parquet(cur, _STAGE_SQL, file, stamped)
        except warehouse.InvalidInput:  # a line that is not JSON (the file is rewritten)
            warehouse.data_files.copy_to_parquet(cur, _STAGE_ANY_SQL, file, stamped)
        reduced = cur.execute(
            run_rollups.reduce_sql("read_parquet(?)", _STAGED_EXTRA.format(key_hash=KEY_HASH_SQL)),
            [str(file)],
        ).to_arrow_table()
        hashes = _sorted_hashes(pc.list_flatten(reduced.column("key_hashes")))
        count = pc.sum(reduced.column("candidates")).as_py() or 0
        if (
            not pc.any(suspect).as_py()
            and not pc.sum(reduced.column("rejected")).as_py()
            and not _repeats(hashes)
            and count > warehouse.lake.INLINED_ROWS_UP_TO
        ):
            return StagedChunk(
                None,
                hashes,
                pc.unique(reduced.column("run")).to_pylist(),
                count,
                _NO_REJECTED.empty_table(),
                lines.num_rows,
                count,
                size,
                file=file,
                reduced=run_rollups.Reduced.of(
                    reduced.drop_columns(["key_hashes", "candidates", "rejected"])
                ),
            )
    except BaseException:
        file.unlink(missing_ok=True)
        raise
    finally:
        cur.unregister("chunk_lines")
    return _restaged(
        cur, lines, file, nonblank.column("line_no").filter(suspect), load, folder, size
    )


def _restaged(
    cur: warehouse.Cursor,
    lines: pa.Table,
    file: Path,
    suspect: pa.ChunkedArray,
    load: _Load,
    folder: Path,
    size: int,
) -> StagedChunk:
    """A chunk the fast path staged in `file` whose lines need the exact path (the
    `suspect` ones, and those it rejected), whose ids repeat, or whose rows are few: its
    valid rows, those of the exact path added, and only the first line of each run + id
    kept, staged again (the first file is deleted)."""
    columns = ", ".join(parser.EVENT_COLUMNS)
    try:
        staged = cur.execute(
            f"SELECT {columns}, source_line AS line_no FROM read_parquet(?)", [str(file)]
        ).to_arrow_table()
    finally:
        file.unlink(missing_ok=True)
    fast_rejected = pc.is_null(staged.column("ts"))
    typed = staged.filter(pc.invert(fast_rejected))
    recheck = pa.chunked_array(
        [*suspect.chunks, *staged.column("line_no").filter(fast_rejected).chunks], pa.int64()
    )
    rejected = _NO_REJECTED.empty_table()
    valid = typed
    if len(recheck):
        exact = _exact_path(cur, lines.filter(pc.is_in(lines.column("line_no"), value_set=recheck)))
        reasons = exact.column("reason")
        rejected = _rejected(exact.filter(pc.is_valid(reasons)), lines)
        checked = exact.filter(pc.is_null(reasons)).select(typed.column_names)
        valid = pa.concat_tables([typed, checked.cast(typed.schema)]).sort_by("line_no")
    return _stage_rows(
        cur,
        _candidates(valid),
        (rejected, lines.num_rows, valid.num_rows, size),
        load,
        folder,
    )


def _candidates(valid: pa.Table) -> pa.Table:
    """Of valid rows sharing a run + id, the first line's (the rows are filtered only when
    an id repeats)."""
    with_id = valid.select(["run", "id", "line_no"]).filter(pc.is_valid(valid.column("id")))
    if with_id.num_rows == 0:
        return valid
    firsts = with_id.group_by(["run", "id"]).aggregate([("line_no", "min")])
    if firsts.num_rows == with_id.num_rows:
        return valid
    keep = pc.or_(
        pc.is_null(valid.column("id")),
        pc.is_in(valid.column("line_no"), value_set=firsts.column("line_no_min")),
    )
    return valid.filter(keep)


def _run_on(cur: warehouse.Cursor, name: str, table: pa.Table, sql: str) -> pa.Table:
    cur.register(name, table)
    try:
        return cur.execute(sql).to_arrow_table()
    finally:
        cur.unregister(name)


def _exact_path(cur: warehouse.Cursor, lines: pa.Table) -> pa.Table:
    """Every field's JSON type checked, line by line: slower, and exact for any input."""
    fields = _run_on(cur, "raw_lines", lines, parser.LINES_TO_FIELDS_SQL)
    return _run_on(cur, "validated", parser.validate_fields(fields), parser.FINALIZE_SQL)


def _rejected(bad: pa.Table, lines: pa.Table) -> pa.Table:
    """The quarantine rows of rejected lines (`bad`: line_no, byte_offset, reason), with
    their raw text from `lines`."""
    if bad.num_rows == 0:
        return _NO_REJECTED.empty_table()
    index = pc.subtract(bad.column("line_no"), lines.column("line_no")[0])
    text = lines.column("text").take(index).cast(pa.string())
    raw_base64 = lines.column("raw_base64").take(index).cast(pa.string())
    cut = pc.utf8_slice_codeunits(pc.utf8_rtrim(text, characters="\r\n"), 0, parser.RAW_TEXT_LIMIT)
    raw_text = pc.coalesce(cut, pc.binary_join_element_wise("base64:", raw_base64, ""))
    return pa.table(
        {
            "line_no": bad.column("line_no"),
            "byte_offset": bad.column("byte_offset"),
            "reason": bad.column("reason"),
            "raw_text": raw_text,
        },
        schema=_NO_REJECTED,
    )


def _stage_rows(
    cur: warehouse.Cursor,
    candidates: pa.Table,
    chunk: tuple[pa.Table, int, int, int],
    load: _Load,
    folder: Path,
) -> StagedChunk:
    """Stamp a chunk's candidates (EVENT_COLUMNS and line_no) and write them to a Parquet
    file in `folder` (kept in memory instead when the catalog would inline them). `chunk`
    is the rest of the StagedChunk: rejected, lines, valid and size."""
    rows = _stamped(candidates, load)
    cur.register("staged_rows", rows)
    try:
        keys = cur.execute(
            _KEYS_SQL.format(key_hash=KEY_HASH_SQL, rows="staged_rows")
        ).to_arrow_table()
        staged = StagedChunk(
            keys,
            _sorted_hashes(keys.column("key_hash")),
            pc.unique(rows.column("run")).to_pylist(),
            rows.num_rows,
            *chunk,
        )
        if rows.num_rows <= warehouse.lake.INLINED_ROWS_UP_TO:
            staged.rows = rows
        else:
            staged.reduced = run_rollups.reduce_rows(cur, "staged_rows")
            staged.file = folder / f"fleetscope-{uuid.uuid4()}.parquet"
            warehouse.data_files.copy_to_parquet(cur, "SELECT * FROM staged_rows", staged.file)
    finally:
        cur.unregister("staged_rows")
    return staged


def load_chunk(
    cur: warehouse.Cursor,
    chunk: StagedChunk,
    load: _Load,
    transaction: _Transaction,
    lake_dir: Path | None,
) -> tuple[int, int]:
    """Store a staged chunk's new events and rejected lines; returns (accepted,
    quarantined). A staged file in `lake_dir` (the events table's own folder) whose events
    are all new is added to events as it is; otherwise its new rows are inserted (the
    caller deletes the file after the transaction: _discard_after). The events' run
    totals wait in the transaction's totals for its end."""
    chunk.added = False
    accepted = chunk.count
    if chunk.count:
        stored = _stored_lines(cur, chunk, load, transaction)
        hashes = chunk.hashes
        if len(stored):
            keys = _keys(cur, chunk)
            keys = keys.filter(pc.invert(pc.is_in(keys.column("source_line"), value_set=stored)))
            hashes = _sorted_hashes(keys.column("key_hash"))
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
    quarantined = insert_quarantine(cur, SOURCE_KIND, load.source, chunk.rejected)
    return accepted, quarantined


def _keys(cur: warehouse.Cursor, chunk: StagedChunk) -> pa.Table:
    """StagedChunk.keys, read from the staged file the first time they are needed."""
    if chunk.keys is None:
        assert chunk.file is not None
        sql = _KEYS_SQL.format(key_hash=KEY_HASH_SQL, rows="read_parquet(?)")
        chunk.keys = cur.execute(sql, [str(chunk.file)]).to_arrow_table()
    return chunk.keys


def _read_back(cur: warehouse.Cursor, staged: Path | None) -> pa.Table:
    """The rows of a staged file (a chunk kept in memory has no file)."""
    assert staged is not None
    return cur.execute("SELECT * FROM read_parquet(?)", [str(staged)]).to_arrow_table()


def _stored_lines(
    cur: warehouse.Cursor, chunk: StagedChunk, load: _Load, transaction: _Transaction
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
    # Runs found alone earlier in this transaction are not asked about again. Asking costs
    # 2 ms against 25-50 ms for the join, which reads every candidate however empty its
    # other side is: when no other load stored the runs (a new run's usual case), it is
    # skipped.
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


def _stamped(rows: pa.Table, load: _Load) -> pa.Table:
    """The rows as events stores them: line_no as source_line, with the source, its kind
    and the load's stamp (one-value dictionaries: no copy per row)."""
    n = rows.num_rows
    zeros = pa.array(np.zeros(n, dtype=np.int32))

    def constant(value: object, kind: pa.DataType) -> pa.Array:
        return pa.DictionaryArray.from_arrays(zeros, pa.array([value], kind))

    return (
        rows.rename_columns([*parser.EVENT_COLUMNS, "source_line"])
        .append_column("source_kind", constant(SOURCE_KIND, pa.string()))
        .append_column("source", constant(load.source, pa.string()))
        .append_column("ingested_at", constant(load.stamp, pa.timestamp("us", tz="UTC")))
    )


def run_agent_events(
    paths: list[str],
    *,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
    commit_bytes: int | None = None,
) -> IngestSummary:
    """Ingest agent-event files and folders (recursively *.jsonl and *.jsonl.gz)."""
    summary = IngestSummary()
    logs = files.find_files(paths)
    summary.files = len(logs)
    positions = read_positions(SOURCE_KIND)  # one query, however many files
    for log in logs:
        file_summary, reached = ingest_file(
            log,
            stored=positions.get(str(log.path)),
            progress=progress,
            chunk_bytes=chunk_bytes,
            commit_bytes=commit_bytes,
        )
        summary.add(file_summary)
        summary.pending_bytes += files.pending_bytes(log, reached.byte_offset)
    return summary


def ingest_file(
    log: files.LogFile,
    *,
    stored: Position | None,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
    commit_bytes: int | None = None,
) -> tuple[IngestSummary, Position]:
    """Load what is new in one file; returns the summary and the position reached."""
    summary = IngestSummary()
    source = str(log.path)

    def load_rest() -> Position:
        nonlocal stored
        while True:
            try:
                return _ingest_from(
                    log,
                    source,
                    (stored, resume_from(log, stored)),
                    summary,
                    progress,
                    (chunk_bytes or CHUNK_BYTES, commit_bytes or COMMIT_BYTES),
                )
            except PositionMoved:
                # Another process loaded what we parsed: go on from where it got to.
                stored = read_position(SOURCE_KIND, source)

    def read_stored() -> None:
        # A conflicting transaction was rolled back whole: start again from the position
        # stored now (committed transactions before it stay loaded).
        nonlocal stored
        stored = read_position(SOURCE_KIND, source)

    return summary, warehouse.retry_on_conflict(load_rest, before_retry=read_stored)


def _staging_dirs() -> tuple[Path | None, Path]:
    """(the events table's own folder, when the lake's data path is local; the folder
    chunks are staged in): staged files are added to events from the first as they are,
    and copied into the lake (inserted) from anywhere else."""
    lake_dir = warehouse.local_table_dir("events")
    return lake_dir, lake_dir or files.chunk_dir(Path(settings.DATA_DIR))


def _ingest_from(
    log: files.LogFile,
    source: str,
    start: tuple[Position | None, Position],
    summary: IngestSummary,
    progress: IO[str] | None,
    sizes: tuple[int, int],
) -> Position:
    """Load from `start` (the stored position, and where reading resumes) to the end,
    in transactions of whole chunks, each committing the position after its last."""
    expected, position = start
    chunk_bytes, commit_bytes = sizes
    remaining = files.end_offset(log) - position.byte_offset
    if remaining <= 0 and not log.compressed:
        return position  # nothing new (a tailed folder's usual file)
    bar = None
    if progress is not None and remaining >= PROGRESS_MIN_BYTES:
        bar = tqdm(
            total=remaining,
            unit="B",
            unit_scale=True,
            desc=log.path.name,
            file=progress,
            mininterval=0.5,
            leave=False,
        )
    lake_dir, staging = _staging_dirs()
    load = _Load(source)  # its stamp is found by _staged_chunks
    chunks = _staged_chunks(log, position, chunk_bytes, load, staging)
    loaded_before = False
    try:
        while (item := next(chunks, None)) is not None:
            done = IngestSummary()
            taken: list[StagedChunk] = []
            committing = False
            try:
                with warehouse.transaction() as cur:
                    # Checked first, while the next chunks parse, not after the last.
                    check_position(cur, SOURCE_KIND, source, expected)
                    transaction = _Transaction()
                    runs: set[str] = set()  # of the chunks' candidates
                    new = position
                    # Chunks join the transaction until it holds commit_bytes; the next
                    # ones are parsed meanwhile.
                    while item is not None:
                        end_offset, staged = item
                        taken.append(staged)
                        accepted, quarantined = load_chunk(cur, staged, load, transaction, lake_dir)
                        runs.update(staged.runs)
                        staged.release()
                        new = Position(log.file_key, end_offset, new.line_no + staged.lines)
                        done.accepted += accepted
                        done.quarantined += quarantined
                        done.duplicates += staged.valid - accepted
                        done.bytes += staged.size
                        if bar is not None:
                            bar.update(staged.size)
                        item = next(chunks, None) if done.bytes < commit_bytes else None
                    # Runs that no other load stored (transaction.alone) and this one
                    # had not either (its first transaction) have nothing stored.
                    transaction.totals.add(
                        cur, new_runs=not loaded_before and transaction.alone.issuperset(runs)
                    )
                    record_position(cur, SOURCE_KIND, source, new)
                    committing = True
            finally:
                _discard_after(taken, committing=committing)
            summary.add(done)  # committed
            loaded_before = True
            expected = position = new
    finally:
        chunks.close()
        if bar is not None:
            bar.close()
    return position


def _staged_chunks(
    log: files.LogFile, position: Position, chunk_bytes: int, load: _Load, folder: Path
) -> Generator[tuple[int, StagedChunk], None, None]:
    """Each chunk from `position` on, read, parsed and staged, with the offset after it.
    When more than half a chunk is left to read, worker threads read, parse and stage the
    next PARSE_AHEAD at once while the caller loads this one; otherwise (and for a .gz
    file, whose size to come is not known) the chunks are staged one after another on the
    calling thread. DuckDB, Arrow and NumPy release the GIL, so the workers share the
    cores. Meanwhile DuckDB runs each statement on one thread: its statements on a chunk
    gain little from more, and bench_ingest's 1,000,000 events took 11-13 s of CPU that
    way against 17-18 s with two (2 cores). Chunks being parsed (PARSE_AHEAD) and staged
    ones waiting (STAGED_AHEAD) are bounded, which bounds memory."""
    first_line = Future[int]()
    first_line.set_result(position.line_no)
    remaining = files.end_offset(log) - position.byte_offset
    if remaining <= chunk_bytes // 2:
        load.find_stamp()
        with files.chunk_refs(log, position.byte_offset, chunk_bytes) as refs:
            for ref in refs:
                after = Future[int]()
                yield ref.end_offset, _stage(ref, first_line, after, load, folder, None)
                first_line = after
        return
    with (
        files.chunk_refs(
            log, position.byte_offset, even_chunk_bytes(remaining, chunk_bytes)
        ) as refs,
        warehouse.single_threaded(),
    ):
        pending: deque[tuple[int, Future[StagedChunk]]] = deque()
        pool = ThreadPoolExecutor(PARSE_AHEAD, thread_name_prefix="parse-agent-events")
        buffers = threading.local()  # each worker's, freed with this generator
        try:
            lines_before = first_line
            for ref in refs:
                lines_after = Future[int]()
                staged = pool.submit(_stage, ref, lines_before, lines_after, load, folder, buffers)
                pending.append((ref.end_offset, staged))
                lines_before = lines_after
                del ref  # a .gz chunk's bytes go once parsed
                if len(pending) == PARSE_AHEAD:
                    load.find_stamp()  # while every worker reads a chunk
                if len(pending) > PARSE_AHEAD + STAGED_AHEAD:
                    end_offset, oldest = pending.popleft()
                    yield end_offset, oldest.result()
            load.find_stamp()  # found above, unless there were fewer chunks than workers
            while pending:
                end_offset, oldest = pending.popleft()
                yield end_offset, oldest.result()
        finally:
            # Chunks that will not be loaded now (an error, or the caller stopped): the
            # workers finish (the file is still open), and their staged files go.
            pool.shutdown(wait=True, cancel_futures=True)
            for _, future in pending:
                if not future.cancelled() and future.exception() is None:
                    future.result().discard()


def even_chunk_bytes(remaining: int, chunk_bytes: int) -> int:
    """The size, at most `chunk_bytes`, that cuts `remaining` bytes into a multiple of
    PARSE_AHEAD chunks of about the same size: the workers then finish their last chunks
    together, where a short last chunk left the others idle while one parsed a whole chunk
    (bench_ingest's 250 MB: four chunks of 62 MB for two workers, not three of 64 MiB and
    one of 48 MB)."""
    count = -(-remaining // chunk_bytes)
    count = -(-count // PARSE_AHEAD) * PARSE_AHEAD
    return -(-remaining // count)


def _stage(
    ref: files.ChunkRef,
    lines_before: Future[int],
    lines_after: Future[int],
    load: _Load,
    folder: Path,
    buffers: threading.local | None,
) -> StagedChunk:
    """Read, parse and stage one chunk. Its lines are numbered once the lines before it
    are counted (`lines_before`: the previous chunk's `lines_after`, set as soon as that
    chunk is split into lines), so chunks can be parsed side by side. With `buffers`,
    each thread reads its chunks into a buffer of its own, used again (nothing staged
    refers to it)."""
    try:
        if buffers is None:
            data: bytes | memoryview = ref.read()
        else:
            size = ref.end_offset - ref.start_offset
            if len(getattr(buffers, "data", b"")) < size:
                buffers.data = bytearray(size + size // 16)  # room for longer cuts
            data = ref.read_into(buffers.data)
        lines = parser.split_lines(data, first_line_no=1, base_offset=ref.start_offset)
        line_no = lines_before.result()
        lines_after.set_result(line_no + lines.num_rows)
    except BaseException as exc:
        if not lines_after.done():
            lines_after.set_exception(exc)
        raise
    if line_no:
        index = lines.schema.get_field_index("line_no")
        lines = lines.set_column(index, "line_no", pc.add(lines.column(index), line_no))
    return stage_lines(lines, load, folder, size=len(data))


class BodyError(ValueError):
    """An HTTP body that is neither JSON Lines nor a JSON array."""


def ingest_body(body: bytes, *, source: str | None = None) -> IngestSummary:
    """Ingest a POSTed body: JSON Lines, or one JSON array of events. The body is complete,
    so a last line without a newline is a line."""
    summary = IngestSummary()
    data = _body_lines(body)
    if not data.strip():
        return summary
    name = source or f"api/{uuid.uuid4()}"
    lake_dir, staging = _staging_dirs()
    load = _Load(name)
    load.find_stamp()
    lines = parser.split_lines(data, first_line_no=1, base_offset=0)
    staged = stage_lines(lines, load, staging, size=len(body))

    def store(cur: warehouse.Cursor) -> tuple[int, int]:
        transaction = _Transaction()
        loaded = load_chunk(cur, staged, load, transaction, lake_dir)
        transaction.totals.add(cur)
        return loaded

    try:
        # A conflicting attempt is rolled back and run again, so the file stays till the
        # end; one that an attempt added is left to run_maintenance if the write fails.
        accepted, quarantined = warehouse.write(store)
    finally:
        _discard_after([staged], committing=True)
    summary.accepted, summary.quarantined = accepted, quarantined
    summary.duplicates = staged.valid - accepted
    summary.bytes = len(body)
    return summary


def _body_lines(body: bytes) -> bytes:
    stripped = body.lstrip()
    if stripped.startswith(b"["):
        try:
            items = orjson.loads(stripped)
        except orjson.JSONDecodeError as exc:
            raise BodyError(f"body starts like a JSON array but is not valid JSON: {exc}") from exc
        if not isinstance(items, list):
            raise BodyError("body must be JSON Lines or a JSON array of events")
        return b"".join(orjson.dumps(item) + b"\n" for item in items)
    return body if body.endswith(b"\n") else body + b"\n"
