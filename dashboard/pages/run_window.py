"""The run page's view settings, read from its query string: the time range (a preset
counted back from the run's latest event, `all`, or explicit UTC start/end, read through
lib.window as every page reads them, so the run page's first names from/to are accepted
too), the bucket (`auto` picks one from the range) and the stall threshold. The page, its
fragments and its chart JSON read the same parameters, so they always show the same
window; the buckets and refresh choices are every page's (dashboard/pages/time_window.py).

Parsing only; a bad value is a ParameterError (the view answers 422).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.http import HttpRequest

from dashboard.pages.time_window import BUCKETS, REFRESH_OPTIONS, form_time, read_refresh
from lib.durations import format_duration, parse_bucket_seconds, parse_duration
from lib.window import TimeRange, read_window

__all__ = [
    "BUCKETS",
    "MIN_GAPS",
    "PRESETS",
    "REFRESH_OPTIONS",
    "RunWindow",
    "auto_bucket_seconds",
    "read_run_window",
]

PRESETS = ("1h", "6h", "24h", "7d")
MIN_GAPS = ("5m", "10m", "15m", "30m", "1h", "2h")
DEFAULT_MIN_GAP = "30m"
# `auto` takes the narrowest bucket that keeps a chart under this many bars.
AUTO_MAX_BUCKETS = 120


@dataclass(frozen=True)
class RunWindow:
    last: str  # a preset, "all", or "" for an explicit from/to
    start: datetime | None
    end: datetime | None
    bucket: str  # as chosen: "auto" or a duration
    bucket_seconds: int  # as used
    min_gap: str
    refresh: str

    @property
    def time_range(self) -> TimeRange:
        return TimeRange(self.start, self.end)

    @property
    def min_gap_delta(self) -> timedelta:
        return parse_duration(self.min_gap, name="min_gap")

    @property
    def bucket_label(self) -> str:
        return format_duration(self.bucket_seconds)

    def params(self) -> dict[str, str]:
        """The query parameters that reproduce this window (for charts and fragments)."""
        params = {"bucket": self.bucket, "min_gap": self.min_gap}
        if self.last:
            params["last"] = self.last
        else:
            if self.start:
                params["start"] = form_time(self.start)
            if self.end:
                params["end"] = form_time(self.end)
        return params

    def query(self, **extra: str) -> str:
        return urlencode({**self.params(), **extra})

    @property
    def description(self) -> str:
        """The range in words, for the controls: `the whole run`, `the run's last 6h`,
        `2026-01-14 11:00 to 2026-01-14 12:00`."""
        if self.last == "all":
            return "the whole run"
        if self.last:
            return f"the run's last {self.last}"
        start = self.start_local.replace("T", " ") if self.start else "the start"
        end = self.end_local.replace("T", " ") if self.end else "the end"
        return f"{start} to {end}"

    @property
    def start_local(self) -> str:
        return form_time(self.start) if self.start else ""

    @property
    def end_local(self) -> str:
        return form_time(self.end) if self.end else ""


def auto_bucket_seconds(span: timedelta) -> int:
    for option in BUCKETS[1:]:
        seconds = parse_bucket_seconds(option)
        if span.total_seconds() / seconds <= AUTO_MAX_BUCKETS:
            return seconds
    return parse_bucket_seconds(BUCKETS[-1])


def read_run_window(request: HttpRequest, first_ts: datetime, last_ts: datetime) -> RunWindow:
    """The window for a run whose events span [first_ts, last_ts]. Presets end open, so
    events logged after the page was drawn show up on the next refresh."""
    get = request.GET
    refresh = read_refresh(get)
    min_gap = get.get("min_gap") or DEFAULT_MIN_GAP
    parse_duration(min_gap, name="min_gap")
    asked = read_window(get)
    start, end = asked.start_time(), asked.end_time()
    last = get.get("last") or ("" if (start or end) else "all")
    if last == "all":
        start = end = None
    elif last:
        start, end = last_ts - parse_duration(last, name="last"), None
    TimeRange(start, end)  # start before end, or a ParameterError
    bucket = asked.bucket or "auto"
    if bucket == "auto":
        span = (end or last_ts) - (start or first_ts)
        bucket_seconds = auto_bucket_seconds(max(span, timedelta(seconds=1)))
    else:
        bucket_seconds = parse_bucket_seconds(bucket)
    return RunWindow(last, start, end, bucket, bucket_seconds, min_gap, refresh)
