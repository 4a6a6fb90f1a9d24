"""JSON lines as the Python-side parsers see them: the raw line and rejection types they
share, and readers of JSON fields that raise `InvalidRecord` with one-line reasons in the
contracts' terms ("usage.prompt_tokens: expected an integer, got a string").

Pure: no files, no Django, no warehouse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import orjson

from ingest.parsers.timestamps import (
    REQUEST_SECONDS_YEARS,
    TimeProblem,
    from_unix_seconds,
    read_rfc3339,
)
from lib.bounds import COUNT_LIMIT, name_problem

T = TypeVar("T")

RAW_TEXT_LIMIT = 64 * 1024  # quarantined lines keep at most 64 KiB of their raw text
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, which some editors write first

_ISO_639_1 = re.compile(r"^[a-z]{2}$")


class InvalidRecord(ValueError):
    """The line cannot become a request record; the message is the quarantine reason."""


@dataclass(frozen=True)
class RawLine:
    """One line of input, where it came from, and its bytes without the newline."""

    line_no: int
    byte_offset: int
    data: bytes


@dataclass(frozen=True)
class Rejected:
    line_no: int
    byte_offset: int | None
    reason: str
    raw: str


def reject(line: RawLine, reason: str) -> Rejected:
    raw = line.data[:RAW_TEXT_LIMIT].decode("utf-8", "replace")
    return Rejected(line.line_no, line.byte_offset, reason, raw)


def parse_json_lines(
    lines: Iterable[RawLine], parse: Callable[[Any, int], T]
) -> tuple[list[T], list[Rejected]]:
    """Each non-blank line's JSON through `parse(obj, line_no)`: a row, or a rejection with
    its reason (not JSON, or the InvalidRecord `parse` raised). Blank lines are skipped, and
    a byte order mark before the first line is not part of it."""
    rows: list[T] = []
    rejected: list[Rejected] = []
    for line in lines:
        data = line.data[len(BOM) :] if line.line_no == 1 and line.data[:3] == BOM else line.data
        if not data.strip():
            continue
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            rejected.append(reject(line, f"not JSON: {exc}"))
            continue
        try:
            rows.append(parse(obj, line.line_no))
        except InvalidRecord as exc:
            rejected.append(reject(line, str(exc)))
    return rows, rejected


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def read_request_id(value: Any, name: str) -> str:
    """A required identifier: a non-empty string."""
    if isinstance(value, str) and value.strip():
        return value
    if value is None:
        raise InvalidRecord(f"{name} is required")
    if isinstance(value, str):
        raise InvalidRecord(f"{name}: must not be empty")
    raise InvalidRecord(f"{name}: expected a non-empty string, got {json_type(value)}")


def read_timestamp(value: Any, name: str) -> datetime:
    if value is None:
        raise InvalidRecord(f"{name} is required")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidRecord(
            f"{name}: expected an RFC 3339 string or Unix seconds, got {json_type(value)}"
        )
    if isinstance(value, str):
        try:
            return read_rfc3339(value)
        except TimeProblem as exc:
            raise InvalidRecord(f"{name}: {exc}: {value[:64]!r}") from None
    when = from_unix_seconds(value, REQUEST_SECONDS_YEARS)
    if when is None:
        years = REQUEST_SECONDS_YEARS
        raise InvalidRecord(
            f"{name}: {value} is not Unix seconds between {years.first} and {years.end}"
        )
    return when


def read_string(obj: dict[str, Any], key: str, prefix: str = "") -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InvalidRecord(f"{prefix}{key}: expected a string, got {json_type(value)}")


def read_name(obj: dict[str, Any], key: str, prefix: str = "") -> str | None:
    """An optional name (run, agent, model, instance): 1-200 characters without control
    characters (lib.bounds.name_problem)."""
    value = read_string(obj, key, prefix)
    problem = None if value is None else name_problem(value, f"{prefix}{key}")
    if problem is not None:
        raise InvalidRecord(problem)
    return value


def read_object(obj: dict[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise InvalidRecord(f"{prefix}{key}: expected an object, got {json_type(value)}")


def read_count(obj: dict[str, Any], key: str, prefix: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRecord(f"{prefix}{key}: expected an integer, got {json_type(value)}")
    if value < 0:
        raise InvalidRecord(f"{prefix}{key}: must not be negative, got {value}")
    if value >= COUNT_LIMIT:
        raise InvalidRecord(f"{prefix}{key}: must be below 10^18, got {value}")
    return value


def read_duration(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRecord(f"{key}: expected a number, got {json_type(value)}")
    if not math.isfinite(value) or value < 0:
        raise InvalidRecord(f"{key}: must be a non-negative number, got {value}")
    return float(value)


def read_language(value: Any) -> str | None:
    """ISO 639-1, lower-cased; a region or script subtag ("pt-BR", "zh_Hans") is dropped."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRecord(f"language: expected a string, got {json_type(value)}")
    code = re.split(r"[-_]", value.strip().lower(), maxsplit=1)[0]
    if not _ISO_639_1.match(code):
        raise InvalidRecord(f"language: expected an ISO 639-1 code, got {value[:32]!r}")
    return code
