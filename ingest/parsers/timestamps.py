"""What a valid timestamp is, for every parser: an RFC 3339 time with a zone (a request
log's may leave the zone out: UTC), or a number of Unix seconds where the format allows
one, inside the years its source's times may fall in.

Pure: text and numbers in, aware UTC datetimes out; the agent-event statements take the
pattern and the window as SQL (agent_events_typed.py, agent_events_exact.py).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from lib.bounds import EVENT_YEARS, REQUEST_SECONDS_YEARS, Years

__all__ = [
    "EVENT_YEARS",
    "REQUEST_SECONDS_YEARS",
    "RFC3339",
    "Years",
    "from_unix_seconds",
    "parse_rfc3339",
]

# Strict RFC 3339: a date, `T` or space, a time, and a zone (`Z` or an offset).
_DATE_TIME = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?"
_ZONE = r"([Zz]|[+-]\d{2}:\d{2})"
RFC3339 = rf"^{_DATE_TIME}{_ZONE}$"
# ASCII digits, as DuckDB's and Arrow's regular expressions (RE2) read \d.
_ZONED = re.compile(RFC3339, re.ASCII)
_ZONE_OPTIONAL = re.compile(rf"^{_DATE_TIME}{_ZONE}?$", re.ASCII)


def parse_rfc3339(text: str, *, zone_required: bool = True) -> datetime | None:
    """`text` as an aware UTC datetime, or None when it is not an RFC 3339 time (without
    `zone_required`, a time without a zone is taken as UTC, the product's only zone)."""
    if not (_ZONED if zone_required else _ZONE_OPTIONAL).match(text):
        return None
    # DuckDB, which stores a transcript's text as written, reads a `T` and a `Z` only:
    # the agent-event statements reject a lower-case one too ("ts is not a valid time").
    if "t" in text or "z" in text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:  # a month 13, a second 60, an offset of 24 hours or more
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def from_unix_seconds(value: float, years: Years) -> datetime | None:
    """Unix seconds (fractional or not) as an aware UTC datetime, or None outside `years`."""
    if not math.isfinite(value) or not years.first_seconds <= value < years.end_seconds:
        return None
    return datetime.fromtimestamp(value, UTC)
