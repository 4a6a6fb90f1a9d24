"""Line-oriented input files: expand paths to files, identify a file across runs, and read
complete lines from a byte offset in bounded batches.

Reads bytes and nothing else: what a line means is the parsers' business, where a read
stopped is the pipelines' (committed with the rows).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.parsers.requests import RawLine

LINE_SUFFIXES = (".jsonl", ".ndjson", ".json")


class SourceError(RuntimeError):
    """A path cannot be read; the message is one line for the user."""


def expand_paths(
    paths: Sequence[str | Path], suffixes: Sequence[str] = LINE_SUFFIXES
) -> list[Path]:
    """Files as given, and every file with one of `suffixes` under folders, sorted."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            files.extend(
                sorted(
                    p for p in path.rglob("*") if p.is_file() and p.name.endswith(tuple(suffixes))
                )
            )
        elif path.is_file():
            files.append(path)
        else:
            raise SourceError(f"no such file or folder: {raw}")
    return files


def file_key(path: Path) -> str:
    """Identity of the file behind a path: a replaced or rotated file gets a new key."""
    stat = path.stat()
    return f"{stat.st_dev}:{stat.st_ino}"


@dataclass(frozen=True)
class LineBatch:
    lines: list[RawLine]
    end_offset: int  # byte offset just past the last line of the batch
    end_line_no: int  # line number of the last line of the batch


def read_batches(
    path: Path, *, start_offset: int = 0, start_line_no: int = 0, max_bytes: int = 32 << 20
) -> Iterator[LineBatch]:
    """Lines from `start_offset`, about `max_bytes` at a time. A last line without a
    newline is read as a line: these are finished files, not ones being written."""
    base, line_no = start_offset, start_line_no  # base: file offset of data[0]
    with open(path, "rb") as handle:
        handle.seek(start_offset)
        tail = b""
        while True:
            chunk = handle.read(max_bytes)
            at_eof = not chunk
            data = tail + chunk
            if not data:
                return
            cut = len(data) if at_eof else data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than max_bytes: keep reading it
                tail = data
                continue
            complete, tail = data[:cut], data[cut:]
            pieces = complete.split(b"\n")
            if complete.endswith(b"\n"):
                pieces.pop()
            lines, offset = [], base
            for piece in pieces:
                line_no += 1
                lines.append(RawLine(line_no, offset, piece.removesuffix(b"\r")))
                offset += len(piece) + 1
            base += len(complete)
            yield LineBatch(lines, base, line_no)
            if at_eof:
                return
