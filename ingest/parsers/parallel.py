"""Parallel texts for the token tax: `{"id", "language", "text"}` per line -> typed rows.

The same `id` in several languages is the same content (contract/requests.md). Pure: no
files, no Django, no warehouse; a bad line becomes a `Rejected` with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ingest.parsers.json_lines import (
    InvalidRecord,
    RawLine,
    Rejected,
    json_type,
    read_language,
    read_request_id,
    reject,
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
    parsed = ParsedTexts([], [])
    for line in lines:
        if not line.data.strip():
            continue
        try:
            parsed.texts.append(parse_object(orjson.loads(line.data), line.line_no))
        except orjson.JSONDecodeError as exc:
            parsed.rejected.append(reject(line, f"not JSON: {exc}"))
        except InvalidRecord as exc:
            parsed.rejected.append(reject(line, str(exc)))
    return parsed


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
