"""The read loop of the transcript adapters (Claude Code, Codex): many files, each resumed
after its last committed position, gathered into batches of about `batch_bytes`.

A projects folder holds thousands of small transcripts; one transaction per file would
spend its time committing, so a batch carries the chunks of many files and the load
commits them with every file's new position in one transaction. When another process
moved one of those positions first, the load raises PositionMoved and the whole pass is
read again from the stored positions (nothing of the failed batch was kept). A file that
cannot be read on is named in the summary's `failed`; the lines read before the break go
in the batch like any others (ingest/sources/files.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO

import numpy as np

import warehouse
from ingest.pipelines.line_files import resume_from
from ingest.pipelines.loading import IngestSummary, Position, PositionMoved, read_positions
from ingest.sources import files

PATTERNS = ("*.jsonl", "*.jsonl.gz")
# Measured on 100 MB of transcripts (bench_adapters): 64 MB batches cost about a third
# less CPU than 32 MB ones (fewer commits and cross-batch lookups) for ~60 MiB more RSS;
# one batch is parsed while the previous one commits, so two are in memory at once.
BATCH_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileChunk:
    """Whole lines of one file, the position they start at and the one they reach."""

    source: str
    expected: Position | None  # the stored position the load must still find
    reached: Position
    data: bytes  # whole lines
    first_line_no: int
    start_offset: int

    @property
    def size(self) -> int:
        return self.reached.byte_offset - self.start_offset


def moves(batch: list[FileChunk]) -> list[tuple[str, Position | None, Position]]:
    """(source, expected, reached) per file of the batch, for advance_positions(): a file
    with several chunks in one batch moves once, from its first chunk's start to its
    last chunk's end."""
    first: dict[str, Position | None] = {}
    last: dict[str, Position] = {}
    for chunk in batch:
        first.setdefault(chunk.source, chunk.expected)
        last[chunk.source] = chunk.reached
    return [(source, first[source], last[source]) for source in last]


# A pipeline's load: parses a batch now and returns the step that commits it. Commits run
# one at a time on a writer thread while the next batch is parsed (DuckDB releases the
# GIL while it writes), in the order the batches were read. Meanwhile DuckDB runs each
# statement on one thread: a batch's statements gain little from a second one, which the
# parse would otherwise share (1 GB of Claude Code transcripts: ~1 s less CPU, same time).
Commit = Callable[[], IngestSummary]
LoadBatch = Callable[[list[FileChunk]], Commit]


@dataclass
class Recognition:
    """Which files read from their start turned out to be in the expected format: a run
    where none did was pointed at the wrong folder (a one-line error), and each file that
    did not is named in the summary's errors."""

    what: str  # "Claude Code", "Codex"
    read_from_start: set[str] = field(default_factory=set)
    recognized: set[str] = field(default_factory=set)

    def note(self, batch: list[FileChunk], recognized: set[str]) -> None:
        # Line 1 first: a file's first chunk starts after its byte-order mark, if any.
        self.read_from_start.update(c.source for c in batch if c.first_line_no == 1)
        self.recognized.update(recognized)

    def check(self, summary: IngestSummary, paths: list[str]) -> IngestSummary:
        strangers = sorted(self.read_from_start - self.recognized)
        if strangers and len(strangers) == len(self.read_from_start) and not summary.accepted:
            raise files.SourceError(
                f"not a {self.what} log folder (no {self.what} lines in its *.jsonl files): "
                + " ".join(paths)
            )
        summary.errors.extend(f"not a {self.what} log: {path}" for path in strangers)
        return summary


def find_logs(
    paths: list[str], what: str, failed: list[files.FailedFile] | None = None
) -> list[files.LogFile]:
    """The transcripts under `paths`; a path without any is a one-line SourceError. What
    the folders hold that cannot be read goes to `failed` (files.find_files)."""
    logs = files.find_files(paths, PATTERNS, failed=failed)
    if not logs and not failed:
        raise files.SourceError(f"not a {what} log folder (no *.jsonl files): {' '.join(paths)}")
    return logs


def read_batches(
    logs: list[files.LogFile],
    source_kind: str,
    batch_bytes: int = BATCH_BYTES,
    failed: list[files.FailedFile] | None = None,
) -> Iterator[list[FileChunk]]:
    """Every file's new whole lines, in batches of about `batch_bytes`; a file that cannot
    be read on ends at its break, and is named in `failed`."""
    stored = read_positions(source_kind)
    pending: list[FileChunk] = []
    size = 0
    for log in logs:
        source = str(log.path)
        expected = stored.get(source)
        position = resume_from(log, expected)
        if position == expected and not log.compressed and position.byte_offset >= log.size:
            continue  # nothing new since the last pass
        chunks = files.readable(files.read_chunks(log, position.byte_offset, batch_bytes))
        for chunk in chunks:
            lines = _count_lines(chunk.data)
            reached = Position(log.file_key, chunk.end_offset, position.line_no + lines)
            pending.append(
                FileChunk(
                    source, expected, reached, chunk.data, position.line_no + 1, chunk.start_offset
                )
            )
            size += len(chunk.data)
            expected = position = reached
            if size >= batch_bytes:
                yield pending
                pending, size = [], 0
        if chunks.failed is not None and failed is not None:
            failed.append(chunks.failed)
    if pending:
        yield pending


def _count_lines(data: bytes) -> int:
    # numpy compares 16 or 32 bytes at a time; bytes.count(b"\n") looks at one (0.4 s of
    # CPU per GB of transcripts against 0.2, measured).
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


def ingest_logs(
    logs: list[files.LogFile],
    source_kind: str,
    load: LoadBatch,
    progress: IO[str] | None = None,
    batch_bytes: int = BATCH_BYTES,
    failed: list[files.FailedFile] | None = None,
) -> IngestSummary:
    """Read every file from its position and load the batches; retried as a whole pass
    when another process loaded some of the same lines first. `failed`: what finding the
    files could not read (find_logs), named in the summary with what reading could not."""
    while True:
        try:
            return _ingest_pass(logs, source_kind, load, progress, batch_bytes, failed or [])
        except PositionMoved:
            continue


def _ingest_pass(
    logs: list[files.LogFile],
    source_kind: str,
    load: LoadBatch,
    progress: IO[str] | None,
    batch_bytes: int,
    found_failed: list[files.FailedFile],
) -> IngestSummary:
    summary = IngestSummary(files=len(logs), failed=list(found_failed))
    reached: dict[str, Position] = {}

    def committed(batch: list[FileChunk], result: IngestSummary) -> None:
        summary.add(result)
        for chunk in batch:
            reached[chunk.source] = chunk.reached
        if progress is not None:
            progress.write(
                f"{source_kind}: {summary.bytes:,} bytes read: {summary.accepted} accepted, "
                f"{summary.quarantined} quarantined, {summary.duplicates} duplicates\n"
            )

    with (
        warehouse.single_threaded(),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="warehouse-writer") as writer,
    ):
        in_flight: tuple[list[FileChunk], Future[IngestSummary]] | None = None
        try:
            for batch in read_batches(logs, source_kind, batch_bytes, summary.failed):
                commit = load(batch)
                if in_flight is not None:
                    committed(in_flight[0], in_flight[1].result())
                in_flight = (batch, writer.submit(commit))
            if in_flight is not None:
                committed(in_flight[0], in_flight[1].result())
                in_flight = None
        finally:
            if in_flight is not None:
                in_flight[1].cancel()
    broken = {f.file for f in summary.failed}
    readable_logs = [log for log in logs if str(log.path) not in broken]
    summary.pending_bytes = pending_bytes(readable_logs, reached, read_positions(source_kind))
    return summary


def pending_bytes(
    logs: list[files.LogFile], reached: dict[str, Position], stored: dict[str, Position]
) -> int:
    """Bytes after the last complete line of each file (a line still being written)."""
    pending = 0
    for log in logs:
        if log.compressed:
            continue
        position = reached.get(str(log.path)) or stored.get(str(log.path))
        try:
            current = files.describe(log.path)
        except files.SourceError:
            continue  # gone since it was read

        if position is None or position.file_key != current.file_key:
            pending += current.size
        else:
            pending += max(current.size - position.byte_offset, 0)
    return pending
