"""The read loop of the JSONL pipelines that parse in Python (requests, parallel texts):
find the files, resume each after its last committed chunk, cut chunks into numbered
lines, and hand each chunk to the pipeline's loader with the position it reaches.

The loader commits the rows and the position in one transaction (ingest/pipelines/
loading.py); when another process committed first, the file is resumed from there. A
last line without its newline is read when it is complete JSON (a finished file whose
writer left off the final newline) and otherwise left for the next run, as for agent
events (a line still being written). A file that cannot be read on is named in the
summary's `failed` after the lines before the break are loaded (ingest/sources/files.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

import orjson

from ingest.parsers.json_lines import RawLine
from ingest.pipelines.loading import (
    IngestSummary,
    Position,
    PositionMoved,
    read_position,
    read_positions,
)
from ingest.sources import files

PATTERNS = ("*.jsonl", "*.jsonl.gz", "*.ndjson")
MAX_FINAL_LINE_BYTES = 64 << 20

# (numbered lines, source, the stored position to check, the position after these lines)
LoadChunk = Callable[[list[RawLine], str, Position | None, Position], IngestSummary]


def split_lines(chunk: files.Chunk, first_line_no: int) -> list[RawLine]:
    """A chunk of whole lines as numbered lines (1-based), without their line endings."""
    pieces = chunk.data.split(b"\n")
    if chunk.data.endswith(b"\n"):
        pieces.pop()
    lines, offset = [], chunk.start_offset
    for line_no, piece in enumerate(pieces, start=first_line_no + 1):
        lines.append(RawLine(line_no, offset, piece.removesuffix(b"\r")))
        offset += len(piece) + 1
    return lines


def resume_from(log: files.LogFile, stored: Position | None) -> Position:
    """After the stored position, unless the file was replaced or truncated since."""
    if stored is None or stored.file_key != log.file_key:
        return Position(log.file_key, 0, 0)
    if not log.compressed and stored.byte_offset > log.size:
        return Position(log.file_key, 0, 0)
    return stored


def ingest_files(
    paths: list[str], source_kind: str, load: LoadChunk, progress: IO[str] | None = None
) -> IngestSummary:
    summary = IngestSummary()
    logs = files.find_files(paths, PATTERNS, failed=summary.failed)
    summary.files = len(logs)
    positions = read_positions(source_kind)  # one query, however many files
    for log in logs:
        file_summary, reached = _ingest_file(
            log, source_kind, load, progress, positions.get(str(log.path))
        )
        summary.add(file_summary)
        if not file_summary.failed:
            summary.pending_bytes += files.pending_bytes(log, reached.byte_offset)
    return summary


def _ingest_file(
    log: files.LogFile,
    source_kind: str,
    load: LoadChunk,
    progress: IO[str] | None,
    stored: Position | None,
) -> tuple[IngestSummary, Position]:
    """Load what is new in one file; returns the summary and the position reached (where
    the file broke, if it could not be read on: named in the summary's `failed`)."""
    summary = IngestSummary()
    source = str(log.path)
    while True:
        position = resume_from(log, stored)
        chunks = files.readable(_chunks(log, position.byte_offset))
        try:
            for chunk in chunks:
                lines = split_lines(chunk, position.line_no)
                reached = Position(log.file_key, chunk.end_offset, position.line_no + len(lines))
                result = load(lines, source, stored, reached)
                result.bytes = chunk.end_offset - chunk.start_offset
                summary.add(result)
                stored = position = reached
                if progress is not None:
                    progress.write(
                        f"{log.path.name}: line {reached.line_no}: {result.accepted} accepted, "
                        f"{result.quarantined} quarantined, {result.duplicates} duplicates\n"
                    )
            if chunks.failed is not None:
                summary.failed.append(chunks.failed)
            return summary, position
        except PositionMoved:
            # Another process loaded this chunk first: resume from its position.
            stored = read_position(source_kind, source)


def _chunks(log: files.LogFile, offset: int) -> Iterator[files.Chunk]:
    """The file's chunks of whole lines, then its unterminated last line if that is
    complete JSON."""
    end = offset
    for chunk in files.read_chunks(log, offset):
        end = chunk.end_offset
        yield chunk
    final = files.read_final_line(log, end, MAX_FINAL_LINE_BYTES)
    if final is None:
        return
    try:
        orjson.loads(final.data)
    except orjson.JSONDecodeError:
        return  # still being written: wait for its newline
    yield final
