"""What a valid timestamp is, for every parser: an RFC 3339 time with a zone (`T`, `Z`
and the separator in either case, an offset within +-24 h), or a number of Unix seconds
where the format allows one, inside the years its source's times may fall in.

Pure: text and numbers in, aware UTC datetimes (or a one-line reason) out; the
agent-event statements take the pattern and the window as SQL (agent_events_typed.py,
agent_events_exact.py), and upper-case the text before DuckDB reads it.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from lib.bounds import EVENT_YEARS, MAX_OFFSET_MINUTES, REQUEST_SECONDS_YEARS, Years

__all__ = [
    "EVENT_YEARS",
    "REQUEST_SECONDS_YEARS",
    "RFC3339",
    "TimeProblem",
    "Years",
    "from_unix_seconds",
    "normalize_rfc3339",
    "parse_rfc3339",
    "read_rfc3339",
]

# Strict RFC 3339: a date, `T` or space, a time (hours 00-23: DuckDB would read 24:00 as
# the next day), and a zone (`Z` or an offset within +-24 h, so hours 00-23 again).
_DATE_TIME = r"\d{4}-\d{2}-\d{2}[Tt ](?:[01]\d|2[0-3]):[0-5]\d:\d{2}(?:\.\d+)?"
_ZONE = r"(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
RFC3339 = rf"^{_DATE_TIME}{_ZONE}$"
# The shape alone, zone optional, offsets of any two digits: to word the reason.
_SHAPE = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?$",
    re.ASCII,  # ASCII digits, as DuckDB's and Arrow's regular expressions (RE2) read \d
)


class TimeProblem(ValueError):
    """Why a text is not a valid time; the message is a one-line reason ("has no time
    zone"), to follow the field's name."""


def normalize_rfc3339(text: str) -> str:
    """The text DuckDB reads: it takes only an upper-case `T` and `Z` (RFC 3339 allows
    both cases), and upper-casing changes nothing else in an RFC 3339 time."""
    return text.upper()


def read_rfc3339(text: str, years: Years = EVENT_YEARS) -> datetime:
    """`text` as an aware UTC datetime inside `years`; TimeProblem otherwise."""
    match = _SHAPE.match(text)
    if match is None:
        raise TimeProblem("is not an RFC 3339 time")
    zone = match["zone"]
    if zone is None:
        raise TimeProblem("has no time zone")
    if zone not in "Zz":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if minutes > 59 or hours * 60 + minutes > MAX_OFFSET_MINUTES:
            raise TimeProblem("has an offset beyond +-24h")
    try:
        parsed = datetime.fromisoformat(normalize_rfc3339(text)).astimezone(UTC)
    except ValueError:  # a month 13, an hour 24, a second 60
        raise TimeProblem("is not an RFC 3339 time") from None
    except OverflowError:  # 9999-12-31T23:59:59-05:00 is in the year 10000 in UTC
        raise TimeProblem(f"is {years.reason()}") from None
    if not years.holds(parsed):
        raise TimeProblem(f"is {years.reason()}")
    return parsed


def parse_rfc3339(text: str, years: Years = EVENT_YEARS) -> datetime | None:
    """`text` as an aware UTC datetime, or None when it is not an RFC 3339 time with a
    zone inside `years` (read_rfc3339 says why)."""
    try:
        return read_rfc3339(text, years)
    except TimeProblem:
        return None


def from_unix_seconds(value: float, years: Years) -> datetime | None:
    """Unix seconds (fractional or not) as an aware UTC datetime, or None outside `years`."""
    if not math.isfinite(value) or not years.first_seconds <= value < years.end_seconds:
        return None
    return datetime.fromtimestamp(value, UTC)
