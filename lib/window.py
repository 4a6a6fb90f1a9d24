"""The time window of a request, as the API contract names it (docs/api.md): `start` and
`end` (RFC 3339) and `bucket` (a duration: `30s`, `5m`, `1h`, `1d`).

One ninja `Schema` that every endpoint takes as `Query[WindowQuery]`, and one reader for
the pages, which take the same names (and `from`/`to`, the run page's first spelling, as
aliases). Parsing only: a bad value is a ParameterError with one line naming it (422 on the
API, the form kept on a page); every datetime is UTC-aware.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ninja import Schema

from lib.durations import parse_bucket_seconds, parse_time
from lib.errors import ParameterError

# Spellings a page accepts for the window's ends, the first one wins.
START_NAMES = ("start", "from")
END_NAMES = ("end", "to")


@dataclass(frozen=True)
class TimeRange:
    """[start, end), either end open; start before end when both are given."""

    start: datetime | None = None
    end: datetime | None = None

    def __post_init__(self) -> None:
        if self.start and self.end and self.start >= self.end:
            raise ParameterError("start must be before end")

    def params(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end}


class WindowQuery(Schema):
    """`?start=&end=&bucket=`: the parameters every windowed endpoint takes."""

    start: str | None = None
    end: str | None = None
    bucket: str | None = None

    def time_range(self) -> TimeRange:
        return TimeRange(self.start_time(), self.end_time())

    def start_time(self) -> datetime | None:
        return parse_time(self.start, name="start")

    def end_time(self) -> datetime | None:
        return parse_time(self.end, name="end")

    def bucket_seconds(self, default: str | None = None) -> int | None:
        """The bucket in whole seconds (`default` when none was asked for, None when
        neither: the endpoint picks one from the range)."""
        bucket = self.bucket or default
        return parse_bucket_seconds(bucket) if bucket else None


def read_window(params: Mapping[str, str]) -> WindowQuery:
    """A page's window from its query string: `start`/`end` (or `from`/`to`), `bucket`."""

    def first(names: tuple[str, ...]) -> str | None:
        return next((params[n] for n in names if params.get(n)), None)

    return WindowQuery(start=first(START_NAMES), end=first(END_NAMES), bucket=params.get("bucket"))
