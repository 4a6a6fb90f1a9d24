"""How a log file's lines are laid out, judged from its first bytes: where the first line
starts (after a UTF-8 byte-order mark, which is not part of it) and what ends a line (LF,
or a lone CR as classic Mac OS wrote them, read as LF: the same length, so offsets hold).
Reads a file's head and nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark, as Windows editors write one
# How far a file's start is searched for its first line ending, which says how its
# lines end.
HEAD_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Layout:
    """How a file's lines are laid out: where the first starts (after a byte-order mark)
    and the byte that ends them (b"\\r" when they end in a lone CR; read as b"\\n")."""

    first: int
    newline: bytes

    def start(self, offset: int) -> int:
        return offset or self.first

    def last_end(self, block: bytes, end: int | None = None) -> int:
        """The index after the last line ending in block[:end], or -1 if there is none."""
        cut = block.rfind(b"\n", 0, end)
        if self.newline != b"\n":
            cut = max(cut, block.rfind(self.newline, 0, end))
        return cut + 1 if cut >= 0 else -1

    def first_end(self, block: bytes) -> int:
        """The index after the first line ending in `block`, or -1 if there is none."""
        cut = block.find(b"\n")
        if self.newline != b"\n":
            other = block.find(self.newline)
            cut = other if cut < 0 or 0 <= other < cut else cut
        return cut + 1 if cut >= 0 else -1

    def lines(self, data: bytes) -> bytes:
        """Whole lines as every reader splits them: ended by b"\\n" (same length)."""
        return data if self.newline == b"\n" else data.replace(self.newline, b"\n")


def layout_of(head: bytes, whole: bool) -> Layout:
    """The layout of a file starting with `head` (`whole`: the file holds nothing more):
    its lines end in a lone CR when its first line ending is a CR not followed by LF. A CR
    ending `head` is taken for the start of a CRLF still being written, unless the file
    ends there."""
    first = len(BOM) if head.startswith(BOM) else 0
    cr, lf = head.find(b"\r"), head.find(b"\n")
    lone_cr = cr >= 0 and (lf < 0 or cr < lf) and head[cr + 1 : cr + 2] != b"\n"
    if cr == len(head) - 1 and not whole:
        lone_cr = False
    return Layout(first, b"\r" if lone_cr else b"\n")


def _has_line_end(head: bytes) -> bool:
    return b"\n" in head or b"\r" in head[:-1]


def plain_layout(fd: int) -> Layout:
    """A plain file's layout, from its first bytes up to its first line ending (or
    HEAD_BYTES)."""
    head = b""
    while len(head) < HEAD_BYTES and not _has_line_end(head):
        block = os.pread(fd, 64 * 1024, len(head))
        if not block:
            return layout_of(head, whole=True)
        head += block
    return layout_of(head, whole=False)


def gzip_head(handle: BinaryIO) -> tuple[bytes, Layout]:
    """A .gz file's first decompressed bytes, up to its first line ending (or HEAD_BYTES),
    read from the handle (which is then past them), and its layout."""
    pieces: list[bytes] = []
    size = 0
    while size < HEAD_BYTES:
        piece = handle.read1(HEAD_BYTES - size)  # type: ignore[attr-defined]
        if not piece:
            head = b"".join(pieces)
            return head, layout_of(head, whole=True)
        pieces.append(piece)
        size += len(piece)
        if _has_line_end(piece if len(pieces) == 1 else b"".join(pieces)):
            break
    head = b"".join(pieces)
    return head, layout_of(head, whole=False)
