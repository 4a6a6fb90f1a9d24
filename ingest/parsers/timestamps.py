"""What a valid timestamp is, for every parser: an RFC 3339 time with a zone (a request
log's may leave the zone out: UTC), or a number of Unix seconds where the format allows
one, inside the years its source's times may fall in.

Pure: text and numbers in, aware UTC datetimes out; the agent-event statements take the
pattern and the window as SQL (agent_events_typed.py, agent_events_exact.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

# Strict RFC 3339: a date, `T` or space, a time, and a zone (`Z` or an offset).
_DATE_TIME = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?"
_ZONE = r"([Zz]|[+-]\d{2}:\d{2})"
RFC3339 = rf"^{_DATE_TIME}{_ZONE}$"
# ASCII digits, as DuckDB's and Arrow's regular expressions (RE2) read \d.
_ZONED = re.compile(RFC3339, re.ASCII)
_ZONE_OPTIONAL = re.compile(rf"^{_DATE_TIME}{_ZONE}?$", re.ASCII)


@dataclass(frozen=True)
class Years:
    """The times a source may give: from January 1st of `first` to before that of `end`."""

    first: int
    end: int

    @property
    def first_seconds(self) -> float:
        return datetime(self.first, 1, 1, tzinfo=UTC).timestamp()

    @property
    def end_seconds(self) -> float:
        return datetime(self.end, 1, 1, tzinfo=UTC).timestamp()

    def holds(self, when: datetime) -> bool:
        return self.first_seconds <= when.timestamp() < self.end_seconds

    def outside_sql(self, column: str) -> str:
        """The SQL condition that `column` (a TIMESTAMPTZ) falls outside these years."""
        return (
            f"{column} < TIMESTAMPTZ '{self.first}-01-01 00:00:00+00' "
            f"OR {column} >= TIMESTAMPTZ '{self.end}-01-01 00:00:00+00'"
        )


# An event's ts (agent events, transcripts): any time since the epoch, up to where a time
# in milliseconds read as seconds would land.
EVENT_YEARS = Years(1970, 2200)
# A request log's Unix seconds: outside these, almost surely milliseconds or junk.
REQUEST_SECONDS_YEARS = Years(2000, 2100)


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
