"""The bounds every door applies, in one place: files, HTTP bodies, OTLP, adapters, prices
and query parameters all check what comes in against these, so nothing that passes can
break a query or a page (docs/api.md, "Bounds").

Pure: numbers and text in, a reason (one line) or None out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

# Run, agent, model, tool and target names: 1-200 characters, no control characters.
NAME_LENGTH = 200
# Counts (tokens, files, lines, bytes): integers 0 <= n < COUNT_LIMIT, which fit BIGINT
# with room for their sums (HUGEINT) and for a price times a count.
COUNT_LIMIT = 10**18
# A request body on any ingest endpoint, and Django's own cap (settings.py reads this).
MAX_BODY_BYTES = 256 * 1024 * 1024
# A UTC offset is within +-24 h (RFC 3339's hours are 00-23).
MAX_OFFSET_MINUTES = 24 * 60 - 1

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


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

    def holds_date(self, day: date) -> bool:
        return self.first <= day.year < self.end

    def reason(self) -> str:
        return f"outside {self.first}-{self.end - 1}"

    def outside_sql(self, column: str) -> str:
        """The SQL condition that `column` (a TIMESTAMPTZ) falls outside these years."""
        return (
            f"{column} < TIMESTAMPTZ '{self.first}-01-01 00:00:00+00' "
            f"OR {column} >= TIMESTAMPTZ '{self.end}-01-01 00:00:00+00'"
        )


# Any stored time (an event's ts, a request's, a scrape's, a query's range): since the
# epoch, up to where a time in milliseconds read as seconds would land.
EVENT_YEARS = Years(1970, 2200)
# A request log's Unix seconds: outside these, almost surely milliseconds or junk.
REQUEST_SECONDS_YEARS = Years(2000, 2100)


def name_problem(value: str, what: str = "name") -> str | None:
    """Why `value` is not a valid name (one line), or None."""
    if not value:
        return f"{what} is empty"
    if len(value) > NAME_LENGTH:
        return f"{what} is longer than {NAME_LENGTH} characters"
    if _CONTROL.search(value):
        return f"{what} holds a control character"
    return None


def count_problem(value: object, what: str = "count") -> str | None:
    """Why `value` is not a valid count (an integer 0 <= n < COUNT_LIMIT), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{what} is not an integer"
    if value < 0:
        return f"{what} is negative"
    if value >= COUNT_LIMIT:
        return f"{what} is 10^18 or more"
    return None
