"""The read loop of the JSONL pipelines that parse in Python (requests, parallel texts):
find the files, resume each after its last committed chunk, cut chunks into numbered
lines, and hand each chunk to the pipeline's loader with the position it reaches.

The loader commits the rows and the position in one transaction (ingest/pipelines/
loading.py); when another process committed first, the file is resumed from there. A
last line without its newline is left for the next run, as for agent events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from ingest.parsers.json_lines import RawLine
from ingest.pipelines.loading import IngestSummary, Position, PositionMoved, read_position
from ingest.sources import files

PATTERNS = ("*.jsonl", "*.jsonl.gz", "*.ndjson")

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


def _resume_from(log: files.LogFile, stored: Position | None) -> Position:
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
    logs = files.find_files(paths, PATTERNS)
    summary.files = len(logs)
    for log in logs:
        summary.add(_ingest_file(log, source_kind, load, progress))
        summary.pending_bytes += _pending(log, source_kind)
    return summary


def _ingest_file(
    log: files.LogFile, source_kind: str, load: LoadChunk, progress: IO[str] | None
) -> IngestSummary:
    summary = IngestSummary()
    source = str(log.path)
    while True:
        stored = read_position(source_kind, source)
        position = _resume_from(log, stored)
        try:
            for chunk in files.read_chunks(log, position.byte_offset):
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
            return summary
        except PositionMoved:
            continue  # another process loaded this chunk first; resume from its position


def _pending(log: files.LogFile, source_kind: str) -> int:
    """Bytes of an unterminated last line, waiting for its newline."""
    if log.compressed:
        return 0
    stored = read_position(source_kind, str(log.path))
    current = files.describe(log.path)
    if stored is None or stored.file_key != current.file_key:
        return current.size
    return max(current.size - stored.byte_offset, 0)
