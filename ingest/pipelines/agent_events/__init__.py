"""Agent-event ingest: files (or an HTTP body) -> parse -> validate -> load, exactly once.

Owns the read position of every agent-event file: chunks of whole lines are loaded in a
warehouse transaction together with the position after the last of them, so a crash
mid-file loses and duplicates nothing, a re-run reads nothing twice, and a file that grew
is read from where it stopped. Events re-sent with the same run + id are stored once, and
the run totals follow in the same transaction (ingest/pipelines/run_rollups.py).

A long file's chunks are read, parsed and written to Parquet ("staged") by worker
threads, PARSE_AHEAD at a time; the loading thread only looks up which of a chunk's ids
are stored already and, when none is, adds the chunk's Parquet file to events as it is.
The steps live in this package's modules, each importing only those below it:
workers.py (the threads and the chunk size) -> staging.py (a chunk parsed and staged) ->
dedup.py (what a load remembers it stored); store.py (the lookups and the inserts of a
staged chunk, in the caller's transaction) -> staging.py, dedup.py. This module holds the
entry points and the transactions.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

import orjson
from django.conf import settings
from tqdm import tqdm

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines.agent_events import workers
from ingest.pipelines.agent_events.content_keys import with_content_keys
from ingest.pipelines.agent_events.dedup import Load
from ingest.pipelines.agent_events.staging import StagedChunk, discard_after, stage_lines
from ingest.pipelines.agent_events.store import Transaction, load_chunk
from ingest.pipelines.line_files import resume_from
from ingest.pipelines.loading import (
    IngestSummary,
    Position,
    PositionMoved,
    check_position,
    read_position,
    read_positions,
    record_position,
)
from ingest.sources import bodies, files
from ingest.sources.bodies import BodyError

__all__ = ["SOURCE_KIND", "BodyError", "ingest_body", "ingest_file", "run_agent_events"]
SOURCE_KIND = parser.SOURCE_KIND
PROGRESS_MIN_BYTES = 16 * 1024 * 1024  # smaller files finish before a bar is worth drawing
# Several chunks are loaded in one transaction, up to this many bytes: each transaction
# costs CPU of its own (the lake's snapshot, the position, the commit, the run totals,
# added once for all its rows). The writer lock is held meanwhile, a few seconds at most;
# a crash loses only the uncommitted transaction's work, never a row. The bench file in one
# transaction: 4.6 s against 5.2 s in two (bench/agent_events.md; python -m bench ingest).
COMMIT_BYTES = 256 * 1024 * 1024


def run_agent_events(
    paths: list[str],
    *,
    progress: IO[str] | None = None,
    chunk_bytes: int | None = None,
    commit_bytes: int | None = None,
) -> IngestSummary:
    """Ingest agent-event files and folders (recursively *.jsonl and *.jsonl.gz)."""
    summary = IngestSummary()
    logs = files.find_files(paths, failed=summary.failed)
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
        if not file_summary.failed:
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
    """Load what is new in one file; returns the summary and the position reached (where
    the file broke, if it could not be read on: named in the summary's `failed`)."""
    summary = IngestSummary()
    source = str(log.path)

    def load_rest() -> tuple[Position, files.FailedFile | None]:
        nonlocal stored
        while True:
            try:
                return _ingest_from(
                    log,
                    source,
                    (stored, resume_from(log, stored)),
                    summary,
                    progress,
                    (chunk_bytes or workers.CHUNK_BYTES, commit_bytes or COMMIT_BYTES),
                )
            except PositionMoved:
                # Another process loaded what we parsed: go on from where it got to.
                stored = read_position(SOURCE_KIND, source)

    def read_stored() -> None:
        # A conflicting transaction was rolled back whole: start again from the position
        # stored now (committed transactions before it stay loaded).
        nonlocal stored
        stored = read_position(SOURCE_KIND, source)

    reached, failed = warehouse.retry_on_conflict(load_rest, before_retry=read_stored)
    if failed is not None:
        summary.failed.append(failed)
    return summary, reached


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
) -> tuple[Position, files.FailedFile | None]:
    """Load from `start` (the stored position, and where reading resumes) to the end,
    in transactions of whole chunks, each committing the position after its last. Where
    the file cannot be read on, the chunks before the break are committed and the
    reason returned with the position."""
    expected, position = start
    chunk_bytes, commit_bytes = sizes
    remaining = files.end_offset(log) - position.byte_offset
    if remaining <= 0 and not log.compressed:
        return position, None  # nothing new (a tailed folder's usual file)
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
    load = Load(source)  # its stamp is found by workers.staged_chunks
    staged_chunks = workers.staged_chunks(log, position, chunk_bytes, load, staging)
    chunks = files.readable(staged_chunks)
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
                    transaction = Transaction()
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
                discard_after(taken, committing=committing)
            summary.add(done)  # committed
            loaded_before = True
            expected = position = new
    finally:
        staged_chunks.close()
        if bar is not None:
            bar.close()
    return position, chunks.failed


def run_claim(run: str) -> str:
    """The key a load of posted lines claims for each run it stores events of."""
    return f"events-of-run\0{run}"


def ingest_body(
    body: bytes | Iterable[bytes],
    *,
    source: str | None = None,
    run_allowed: Callable[[str], bool] | None = None,
) -> IngestSummary:
    """Ingest a POSTed body (bytes, or its chunks as they arrive): JSON Lines, or one JSON
    array of events. The body is complete, so a last line without a newline is a line.

    Read and loaded a block of lines at a time (bodies.BLOCK_BYTES), one transaction a
    block, so memory follows the block, not the body. Events without an `id` get a content
    key (content_keys.py): posting the same lines again, whole or split, stores nothing
    twice. A JSON array that breaks off is a BodyError, the blocks before it loaded.
    With `run_allowed`, an event of a run it refuses is quarantined with that reason."""
    summary = IngestSummary()
    request = bodies.Body([body] if isinstance(body, bytes | bytearray) else body)
    if request.is_empty:
        return summary
    name = source or f"api/{uuid.uuid4()}"
    lake_dir, staging = _staging_dirs()
    load = Load(name, run_allowed=run_allowed)
    load.find_stamp()
    blocks = _array_blocks(request.element_batches()) if request.is_array else request.blocks()
    for block in blocks:
        lines = parser.split_lines(
            block.data, first_line_no=block.first_line_no, base_offset=block.start_offset
        )
        staged = stage_lines(with_content_keys(lines), load, staging, size=len(block.data))
        del lines

        def store(cur: warehouse.Cursor, staged: StagedChunk = staged) -> tuple[int, int]:
            # Claimed before the transaction's first read, so its snapshot holds what a
            # writer of the same runs committed meanwhile (a client's retry racing its first
            # try on another web server would otherwise find its lines not stored yet and
            # store them twice with a PostgreSQL catalog; warehouse.claim says why).
            warehouse.claim(run_claim(run) for run in staged.runs)
            transaction = Transaction()
            loaded = load_chunk(cur, staged, load, transaction, lake_dir)
            transaction.totals.add(cur)
            return loaded

        try:
            # A conflicting attempt is rolled back and run again, so the file stays till
            # the end; one that an attempt added is left to run_maintenance if the write
            # fails.
            accepted, quarantined = warehouse.write(store)
        finally:
            discard_after([staged], committing=True)
        summary.accepted += accepted
        summary.quarantined += quarantined
        summary.duplicates += staged.valid - accepted
        summary.bytes += len(block.data)
    return summary


def _array_blocks(batches: Iterator[list[bodies.Element]]) -> Iterator[bodies.Block]:
    """A JSON array's elements as blocks of JSON Lines, one element a line (element i is
    line i + 1, as quarantine reports it)."""
    offset = 0
    for batch in batches:
        data = b"".join(_json_line(element.value) for element in batch)
        yield bodies.Block(data, batch[0].index + 1, offset)
        offset += len(data)


def _json_line(element: object) -> bytes:
    try:
        return orjson.dumps(element) + b"\n"
    except orjson.JSONEncodeError:  # an integer past 64 bits: the parser judges it
        return json.dumps(element, separators=(",", ":")).encode() + b"\n"
