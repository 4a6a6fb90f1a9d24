"""Parallel texts for the token tax: `{"id", "language", "text"}` per line -> typed rows.

The same `id` in several languages is the same content (contract/requests.md). Pure: no
files, no Django, no warehouse; a bad line becomes a `Rejected` with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ingest.parsers.json_lines import (
    InvalidRecord,
    RawLine,
    Rejected,
    json_type,
    parse_json_lines,
    read_language,
    read_request_id,
)

SOURCE_KIND = "parallel"


@dataclass(frozen=True)
class ParallelText:
    id: str
    language: str
    text: str
    line_no: int


@dataclass
class ParsedTexts:
    texts: list[ParallelText]
    rejected: list[Rejected]


def parse_lines(lines: Iterable[RawLine]) -> ParsedTexts:
    return ParsedTexts(*parse_json_lines(lines, parse_object))


def parse_object(obj: Any, line_no: int) -> ParallelText:
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {json_type(obj)}")
    language = read_language(obj.get("language"))
    if language is None:
        raise InvalidRecord("language is required")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidRecord(f"text: expected a non-empty string, got {json_type(text)}")
    return ParallelText(read_request_id(obj.get("id"), "id"), language, text, line_no)
