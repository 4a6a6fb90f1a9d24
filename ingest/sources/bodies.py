"""An HTTP request body read as a stream, in bounded memory: blocks of whole lines (JSON
Lines), or the elements of a JSON array one at a time. Reads bytes and nothing else: what
a line or an element means is the parsers' business, storing it the pipelines'.

The body never has to be whole in memory: a block holds BLOCK_BYTES of lines (more only
when one line is longer), an array element at most MAX_ELEMENT_BYTES.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# A block of lines the pipelines parse and load at once: their memory is a small multiple
# of it, not of the body (python -m bench http_bodies measures the peak).
BLOCK_BYTES = 8 * 1024 * 1024
# One element of a JSON array body: larger ones are refused rather than held.
MAX_ELEMENT_BYTES = 64 * 1024 * 1024
_WHITESPACE = " \t\r\n"


class BodyError(ValueError):
    """A body that is neither JSON Lines nor a JSON array; the message is one line."""


@dataclass(frozen=True)
class Block:
    """Whole lines of the body (ending with a newline), the first one numbered `first_line_no`
    (1-based) at byte `start_offset` of the body."""

    data: bytes
    first_line_no: int
    start_offset: int


@dataclass(frozen=True)
class Element:
    """One element of a JSON array body: its value, its index (0-based) and the length of
    its JSON text."""

    value: Any
    index: int
    chars: int


class Body:
    """A body as its chunks arrive (`request.read(n)` in a loop): `is_array` tells the two
    shapes apart from the first byte that is not whitespace, then `blocks()` or
    `elements()` reads the rest once."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._head = b""
        while not self._head.strip():
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._head += chunk
        self.is_array = self._head.lstrip().startswith(b"[")
        self.is_empty = not self._head.strip()

    def _all_chunks(self) -> Iterator[bytes]:
        if self._head:
            yield self._head
            self._head = b""
        yield from self._chunks

    def blocks(self, block_bytes: int | None = None) -> Iterator[Block]:
        """The body as blocks of whole lines of about `block_bytes` (BLOCK_BYTES); a last
        line without its newline is a line (the body is complete) and gets one."""
        block_bytes = block_bytes or BLOCK_BYTES
        pending = bytearray()
        line_no, offset = 1, 0
        for chunk in self._all_chunks():
            pending += chunk
            if len(pending) < block_bytes:
                continue
            cut = pending.rfind(b"\n") + 1
            if cut:
                data = bytes(pending[:cut])
                del pending[:cut]
                yield Block(data, line_no, offset)
                line_no += data.count(b"\n")
                offset += len(data)
        if pending:
            if not pending.endswith(b"\n"):
                pending += b"\n"
            yield Block(bytes(pending), line_no, offset)

    def elements(self) -> Iterator[Element]:
        """The elements of a JSON array body, parsed one at a time; BodyError when the body
        is not one valid JSON array (elements before the fault have been yielded)."""
        return _ArrayReader(self._all_chunks()).elements()

    def element_batches(self, batch_chars: int | None = None) -> Iterator[list[Element]]:
        """The elements in batches of about `batch_chars` (BLOCK_BYTES) characters of JSON
        text."""
        batch_chars = batch_chars or BLOCK_BYTES
        batch: list[Element] = []
        size = 0
        for element in self.elements():
            batch.append(element)
            size += element.chars
            if size >= batch_chars:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch


def _refuse_constant(name: str) -> Any:
    raise BodyError(f"body holds {name}, which is not JSON")


def _integer_as_orjson_reads_it(text: str) -> int | float:
    """An integer as orjson, which reads the JSON-lines bodies, reads it: past 64 bits
    (below -2^63 or from 2^64) a float, so an element holds nothing orjson cannot write
    back and the parsers judge both kinds of body alike."""
    value = int(text)
    return value if -(2**63) <= value < 2**64 else float(value)


class _ArrayReader:
    """A JSON array read element by element from text decoded as it arrives."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._decode = codecs.getincrementaldecoder("utf-8")().decode
        self._decoder = json.JSONDecoder(
            parse_constant=_refuse_constant, parse_int=_integer_as_orjson_reads_it
        )
        self._text = ""
        self._at = 0  # the read position in _text
        self._base = 0  # characters dropped before _text
        self._done = False

    def _more(self) -> bool:
        """Append the next chunk's text; False when the body is exhausted."""
        if self._done:
            return False
        chunk = next(self._chunks, None)
        try:
            if chunk is None:
                self._done = True
                self._text += self._decode(b"", final=True)
                return False
            self._text += self._decode(chunk)
        except UnicodeDecodeError:
            raise BodyError("body is not UTF-8") from None
        return True

    def _skip_whitespace(self) -> str:
        """The next character that is not whitespace ("" at the end of the body)."""
        while True:
            while self._at < len(self._text) and self._text[self._at] in _WHITESPACE:
                self._at += 1
            if self._at < len(self._text):
                return self._text[self._at]
            if not self._more():
                return ""

    def _fault(self, what: str) -> BodyError:
        return BodyError(
            f"body is not a valid JSON array at character {self._base + self._at}: {what}"
        )

    def _value(self) -> tuple[Any, int]:
        """The JSON value at the read position, reading more text while it is incomplete
        (at least doubling what is held each time, so a long element is parsed a few
        times, not once per chunk)."""
        while True:
            try:
                value, end = self._decoder.raw_decode(self._text, self._at)
            except json.JSONDecodeError as exc:
                held = len(self._text) - self._at
                if held > MAX_ELEMENT_BYTES:
                    raise BodyError(
                        f"an array element is larger than {MAX_ELEMENT_BYTES >> 20} MiB"
                    ) from None
                grown = False
                while len(self._text) - self._at < 2 * held + 1 and self._more():
                    grown = True
                if not grown:
                    raise self._fault(exc.msg) from None
                continue
            if end == len(self._text) and self._more():
                continue  # a number may go on in the next chunk: parse it again
            chars, self._at = end - self._at, end
            return value, chars

    def _drop_read(self) -> None:
        if self._at > BLOCK_BYTES:
            self._base += self._at
            self._text = self._text[self._at :]
            self._at = 0

    def elements(self) -> Iterator[Element]:
        if self._skip_whitespace() != "[":
            raise self._fault("expected '['")
        self._at += 1
        if self._skip_whitespace() == "]":
            self._at += 1
        else:
            index = 0
            while True:
                value, chars = self._value()
                yield Element(value, index, chars)
                index += 1
                self._drop_read()
                after = self._skip_whitespace()
                self._at += 1
                if after == "]":
                    break
                if after != ",":
                    self._at -= 1
                    raise self._fault("expected ',' or ']'")
                self._skip_whitespace()
        if self._skip_whitespace() != "":
            raise self._fault("data after the array")
