"""What cannot be read, one rule for every file pipeline: a file (or folder) that cannot
be opened, decompressed or read is a FailedFile (its path, and why, on one line), raised
as UnreadableFile once the whole lines before the break are yielded; `readable()` turns
that into the end of the file's chunks, so the pipeline commits those lines, names the
file in its summary and goes on with the next one. Knows no format and no warehouse.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

# What reading a file can raise: OSError (permissions, I/O, gzip.BadGzipFile: not gzip,
# a CRC or length check failed), EOFError (a .gz cut short), zlib.error (corrupt data).
READ_ERRORS = (OSError, EOFError, zlib.error)


class SourceError(RuntimeError):
    """A path that cannot be read as a log source; the message is one line for users."""


@dataclass(frozen=True)
class FailedFile:
    """A file or folder that could not be read (or read to its end): its path and why,
    each on one line."""

    file: str
    reason: str

    @property
    def line(self) -> str:
        return f"{self.file}: {self.reason}"


class UnreadableFile(SourceError):
    """A file that cannot be read from some point on (`failed.reason` says where)."""

    def __init__(self, failed: FailedFile) -> None:
        super().__init__(failed.line)
        self.failed = failed


def unreadable(path: Path, exc: BaseException, at: int = 0) -> UnreadableFile:
    """The UnreadableFile for `exc` raised reading `path`, after `at` bytes of whole lines
    (decompressed for .gz) were read."""
    if isinstance(exc, UnreadableFile):
        return exc
    if isinstance(exc, EOFError):
        detail = f"truncated: {exc}"
    elif isinstance(exc, zlib.error):
        detail = f"corrupt compressed data: {exc}"
    elif isinstance(exc, OSError) and exc.strerror:
        detail = exc.strerror
    else:
        detail = (str(exc).splitlines() or [type(exc).__name__])[0]
    reason = f"{detail} (after byte {at}: the lines before it are read)" if at else detail
    return UnreadableFile(FailedFile(str(path), reason))


T = TypeVar("T")


class Readable(Generic[T]):
    """A file's chunks (or anything made from them) until the file cannot be read further:
    then the iteration ends, and `failed` says why (None when it read to the end)."""

    def __init__(self, items: Iterator[T]) -> None:
        self._items = items
        self.failed: FailedFile | None = None

    def __iter__(self) -> Readable[T]:
        return self

    def __next__(self) -> T:
        if self.failed is not None:
            raise StopIteration
        try:
            return next(self._items)
        except UnreadableFile as exc:
            self.failed = exc.failed
            raise StopIteration from None


def readable(items: Iterator[T]) -> Readable[T]:
    return Readable(items)
