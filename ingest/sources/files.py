"""Log files on disk: finding them, knowing them again, and reading whole lines from a
byte offset. Reads bytes and nothing else: no parsing, no warehouse.

A file is known by its path plus its device and inode (`file_key`), so a file replaced by
a new one at the same path (log rotation) is read from its start again. Offsets count
decompressed bytes for `.gz` files. Where a file cannot be read on, the whole lines
before the break are yielded, then UnreadableFile is raised (failures.py); a line's
layout (a byte-order mark, CR-only endings) is line_layout.py's.
"""

from __future__ import annotations

import fnmatch
import gzip
import os
import re
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

from ingest.sources.failures import (
    READ_ERRORS,
    FailedFile,
    Readable,
    SourceError,
    UnreadableFile,
    readable,
    unreadable,
)
from ingest.sources.line_layout import Layout, gzip_head, plain_layout

DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024
PATTERNS = ("*.jsonl", "*.jsonl.gz")
# failures.py's names, re-exported: the pipelines read files through this module.
__all__ = [
    "FailedFile",
    "Readable",
    "SourceError",
    "UnreadableFile",
    "readable",
]


@dataclass(frozen=True)
class LogFile:
    path: Path
    file_key: str
    size: int  # on disk (compressed for .gz)

    @property
    def compressed(self) -> bool:
        return self.path.name.endswith(".gz")


@dataclass(frozen=True)
class Chunk:
    """Whole lines: `data` ends with a newline (or is the unterminated end of a .gz file)."""

    data: bytes
    start_offset: int
    end_offset: int


def find_files(
    paths: list[str],
    patterns: tuple[str, ...] = PATTERNS,
    *,
    failed: list[FailedFile] | None = None,
) -> list[LogFile]:
    """Files named directly, and files matching `patterns` under folders, recursively
    (symlinked folders are not followed, symlinked files are). What a folder holds that
    cannot be read (a folder that cannot be listed, a matching name that is not a regular
    file, a dangling symlink) is skipped, and named in `failed` when it is given; a path
    named directly that does not exist is a SourceError (nothing is read)."""
    found: dict[Path, LogFile] = {}
    skipped = failed if failed is not None else []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise SourceError(f"no such file or folder: {raw}")
        if path.is_dir():
            found.update(_walk(path, patterns, skipped))
        elif path.is_file():
            resolved = path.resolve()
            found[resolved] = describe(resolved)
        else:
            raise SourceError(f"not a regular file or folder: {raw}")
    return sorted(found.values(), key=lambda f: str(f.path))


def _walk(
    folder: Path, patterns: tuple[str, ...], failed: list[FailedFile]
) -> Iterator[tuple[Path, LogFile]]:
    """The regular files under `folder` whose names match `patterns`, by resolved path.

    One scandir pass: a folder of thousands of transcripts cost ~1 s of CPU per GB when
    globbed once per pattern and resolved component by component. The folders walked are
    real (symlinked ones are not entered), so a name joined to its resolved folder is
    already resolved; only a symlinked file is resolved on its own.
    """
    matchers = [re.compile(fnmatch.translate(pattern)).match for pattern in patterns]
    pending = [Path(os.path.realpath(folder))]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            failed.append(FailedFile(str(current), f"cannot list folder: {exc.strerror}"))
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(current / entry.name)
            elif any(match(entry.name) for match in matchers):
                try:
                    stat = entry.stat()
                except OSError as exc:
                    failed.append(FailedFile(entry.path, f"cannot stat: {exc.strerror}"))
                    continue
                if not S_ISREG(stat.st_mode):
                    failed.append(FailedFile(entry.path, "not a regular file"))
                    continue
                if entry.is_symlink():
                    resolved = Path(entry.path).resolve()
                    yield resolved, describe(resolved)
                else:
                    resolved = current / entry.name
                    yield resolved, _log_file(resolved, stat)


def describe(path: Path) -> LogFile:
    try:
        stat = path.stat()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror}") from exc
    return _log_file(path, stat)


def _log_file(path: Path, stat: os.stat_result) -> LogFile:
    """A file is known by its device and inode: a rotated log at the same path is new."""
    return LogFile(path=path, file_key=f"{stat.st_dev}:{stat.st_ino}", size=stat.st_size)


def _open(log: LogFile) -> BinaryIO:
    try:
        if log.compressed:
            return gzip.open(log.path, "rb")  # type: ignore[return-value]
        return open(log.path, "rb")
    except OSError as exc:
        raise unreadable(log.path, exc) from exc


def read_chunks(
    log: LogFile, offset: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES
) -> Generator[Chunk, None, None]:
    """Whole lines from `offset` on, about `chunk_bytes` at a time.

    A last line without its newline is still being written: it is left for the next
    pass (not yielded). In a .gz file, which is only ever read whole, the end of the
    stream ends the last line. Where the file cannot be read on (a .gz file truncated or
    corrupt, an I/O error), the whole lines before the break are yielded, then
    UnreadableFile is raised.
    """
    position = offset
    try:
        with _open(log) as handle:
            if log.compressed:
                yield from _gzip_chunks(log.path, handle, offset, chunk_bytes)
                return
            if not _unread(handle, offset):
                return  # nothing new: the usual file of a tailed folder
            layout = plain_layout(handle.fileno())
            position = layout.start(offset)
            handle.seek(position)
            carry = b""
            while True:
                want = _unread(handle, position + len(carry))
                block = handle.read(min(want, chunk_bytes)) if want else b""
                if not block:
                    break
                block = carry + block
                cut = layout.last_end(block)
                if cut < 0:
                    carry = block
                    continue
                carry, lines = block[cut:], layout.lines(block[:cut])
                del block  # not held while the caller has the chunk
                yield Chunk(lines, position, position + cut)
                position += cut
    except READ_ERRORS as exc:
        raise unreadable(log.path, exc, position) from exc


def _gzip_chunks(path: Path, handle: BinaryIO, offset: int, chunk_bytes: int) -> Iterator[Chunk]:
    """read_chunks() of a .gz file. It is read in the pieces one decompression step gives
    (read1), gathered up to chunk_bytes: where the stream breaks, what came before it is
    still in hand, so its whole lines are yielded before the error is raised (a re-run
    then finds them loaded, and the same break)."""
    head, layout = gzip_head(handle)
    position = layout.start(offset)
    if position <= len(head):
        carry = head[position:]
    else:
        _skip(path, handle, position - len(head))
        carry = b""
    broken: BaseException | None = None
    ended = False
    while not ended:
        pieces, size = [carry], len(carry)
        goal = size + chunk_bytes
        while size < goal:
            try:
                piece = handle.read1(goal - size)  # type: ignore[attr-defined]
            except READ_ERRORS as exc:
                broken = exc
                piece = b""
            if not piece:
                ended = True  # the end of the stream, or where it breaks
                break
            pieces.append(piece)
            size += len(piece)
        block = b"".join(pieces)
        del pieces
        cut = layout.last_end(block)
        if cut < 0:
            carry = block
            continue
        carry, lines = block[cut:], layout.lines(block[:cut])
        del block
        yield Chunk(lines, position, position + cut)
        position += cut
    if broken is not None:
        raise unreadable(path, broken, position)
    if carry:
        yield Chunk(layout.lines(carry) + b"\n", position, position + len(carry))


@dataclass(frozen=True)
class ChunkRef:
    """Whole lines [start_offset, end_offset) of a log, read by `read()`, or into a
    buffer the caller reuses by `read_into()`: the thread that parses them reads them, so
    reading is shared out too. Readable inside the chunk_refs() block that made it."""

    start_offset: int
    end_offset: int
    read: Callable[[], bytes]
    read_into: Callable[[bytearray], memoryview]


@contextmanager
def chunk_refs(
    log: LogFile, offset: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES
) -> Iterator[Iterator[ChunkRef]]:
    """The lines read_chunks() yields, in chunks located but not yet read, readable until
    the block ends. An uncompressed file is cut at newlines found by reading a few bytes
    around each cut (_located); a .gz file can only be read in order, so its chunks are
    read as they are located, as read_chunks() reads them. Locating or reading a chunk
    raises UnreadableFile where the file cannot be read."""
    if log.compressed:
        chunks = read_chunks(log, offset, chunk_bytes)
        try:
            yield (
                ChunkRef(
                    c.start_offset,
                    c.end_offset,
                    partial(_given, c.data),
                    partial(_given_view, c.data),
                )
                for c in chunks
            )
        finally:
            chunks.close()
        return
    with _open(log) as handle:
        yield _located(log.path, handle.fileno(), offset, chunk_bytes)


def _located(path: Path, fd: int, offset: int, chunk_bytes: int) -> Iterator[ChunkRef]:
    """Chunk k ends at the last newline before offset + k * chunk_bytes (its target), so
    cuts do not drift: each chunk is within a line of chunk_bytes, the last one too."""
    start = offset
    try:
        size = os.fstat(fd).st_size  # lines written after this wait for the next pass
        if start >= size:
            return
        layout = plain_layout(fd)
        start = target = layout.start(offset)
        while start < size:
            target += chunk_bytes
            if target <= start:  # a line longer than a chunk ended past the target
                target = start + chunk_bytes
            end = _line_end(fd, layout, start, min(target, size), size)
            if end is None:
                return  # an unterminated last line: left for the next pass
            yield ChunkRef(
                start,
                end,
                partial(_read_exactly, path, fd, start, end, layout),
                partial(_read_exactly_into, path, fd, start, end, layout),
            )
            start = end
    except READ_ERRORS as exc:
        raise unreadable(path, exc, start) from exc


_SEARCH_BYTES = 64 * 1024


def _line_end(fd: int, layout: Layout, start: int, nominal: int, size: int) -> int | None:
    """The offset after the last line ending in [start, nominal); if there is none (a line
    longer than a chunk), after the first one in [nominal, size); else None."""
    high = nominal
    while high > start:
        low = max(start, high - _SEARCH_BYTES)
        cut = layout.last_end(os.pread(fd, high - low, low))
        if cut >= 0:
            return low + cut
        high = low
    position = nominal
    while position < size:
        block = os.pread(fd, min(_SEARCH_BYTES, size - position), position)
        if not block:
            break
        cut = layout.first_end(block)
        if cut >= 0:
            return position + cut
        position += len(block)
    return None


def _given(data: bytes) -> bytes:
    return data


def _given_view(data: bytes, buffer: bytearray) -> memoryview:
    return memoryview(data)


def _read_exactly(path: Path, fd: int, start: int, end: int, layout: Layout) -> bytes:
    try:
        data = os.pread(fd, end - start, start)
    except OSError as exc:
        raise unreadable(path, exc, start) from exc
    if len(data) != end - start:
        raise _shrank(path)
    return layout.lines(data)


def _read_exactly_into(
    path: Path, fd: int, start: int, end: int, layout: Layout, buffer: bytearray
) -> memoryview:
    """The bytes [start, end) in `buffer` (grown to fit): a buffer used again is already
    in memory, where a new 32 MiB bytes object costs 8,192 page faults to fill."""
    size = end - start
    if len(buffer) < size:
        buffer.extend(bytes(size - len(buffer)))
    view = memoryview(buffer)[:size]
    try:
        read = os.preadv(fd, [view], start)
    except OSError as exc:
        raise unreadable(path, exc, start) from exc
    if read != size:
        raise _shrank(path)
    if layout.newline != b"\n":
        view[:] = layout.lines(view.tobytes())
    return view


def _shrank(path: Path) -> UnreadableFile:
    return UnreadableFile(
        FailedFile(str(path), "shrank while it was being read (truncated?); read again next time")
    )


def _unread(handle: BinaryIO, consumed: int) -> int:
    """Bytes of a plain file after `consumed`, as it is now (lines may have been written
    since it was opened). A read of n bytes allocates n first: asking each small
    transcript for a whole 64 MB chunk, and once more to find its end, cost more than the
    reading itself."""
    return max(os.fstat(handle.fileno()).st_size - consumed, 0)


def _skip(path: Path, handle: BinaryIO, count: int) -> None:
    remaining = count
    while remaining:
        block = handle.read(min(remaining, 8 * 1024 * 1024))
        if not block:
            raise UnreadableFile(FailedFile(str(path), "shorter than its recorded read position"))
        remaining -= len(block)


def read_final_line(log: LogFile, offset: int, max_bytes: int) -> Chunk | None:
    """The unterminated last line of a plain file after `offset` (whole lines before it
    read already), when there is one of at most `max_bytes`; None otherwise (and for a .gz
    file, whose stream's end already ends its last line)."""
    if log.compressed:
        return None
    start = offset
    try:
        with _open(log) as handle:
            fd = handle.fileno()
            if not _unread(handle, offset):
                return None
            layout = plain_layout(fd)
            start = layout.start(offset)
            rest = os.pread(fd, max_bytes + 1, start)
    except READ_ERRORS as exc:
        raise unreadable(log.path, exc, start) from exc
    if not rest or len(rest) > max_bytes or layout.first_end(rest) >= 0:
        return None
    return Chunk(rest, start, start + len(rest))


def end_offset(log: LogFile) -> int:
    """Where reading ends today, for progress: the size of an uncompressed file."""
    return log.size if not log.compressed else 0


def pending_bytes(log: LogFile, offset: int) -> int:
    """Bytes after `offset` today: an unterminated last line still being written (0 for a
    .gz file, which is read whole, and for a file gone since it was read)."""
    if log.compressed:
        return 0
    try:
        size = log.path.stat().st_size
    except OSError:
        return 0
    return max(size - offset, 0)


def chunk_dir(data_dir: Path) -> Path:
    folder = data_dir / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
