"""Parallel texts for the token tax: `{"id", "language", "text"}` per line -> typed rows.

The same `id` in several languages is the same content (contract/requests.md). Pure: no
files, no Django, no warehouse; a bad line becomes a `Rejected` with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ingest.parsers.json_lines import RawLine, Rejected, reject

SOURCE_KIND = "parallel"

_ISO_639_1 = re.compile(r"^[a-z]{2}$")


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
        except ValueError as exc:
            parsed.rejected.append(reject(line, str(exc)))
    return parsed


def parse_object(obj: Any, line_no: int) -> ParallelText:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    id_, language, text = obj.get("id"), obj.get("language"), obj.get("text")
    if not isinstance(id_, str) or not id_.strip():
        raise ValueError("id: expected a non-empty string")
    if not isinstance(language, str) or not _ISO_639_1.match(language.strip().lower()):
        raise ValueError("language: expected an ISO 639-1 code")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text: expected a non-empty string")
    return ParallelText(id_, language.strip().lower(), text, line_no)
