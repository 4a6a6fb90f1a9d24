"""The time range of a page and of the chart JSON it loads: `last=1h` (relative to now,
so auto-refresh moves it), `last=all` (the data's own range) or explicit `start`/`end`
(the form's datetime-local fields, in UTC), read through lib.window as every endpoint
reads them (so `from`/`to` are accepted too). Builds the context templates/partials/
timerange.html expects, with the presets and refresh intervals the pages share (the run
page keeps its own in dashboard/pages/run_window.py: it counts back from the run's last
event). Parsing only; every datetime is UTC-aware.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from lib import window as request_window
from lib.durations import format_duration, parse_duration

PRESETS = ("15m", "1h", "6h", "24h", "7d", "30d")
REFRESH_OPTIONS = ("0", "15", "30", "60")


@dataclass(frozen=True)
class PageWindow:
    start: datetime | None
    end: datetime | None
    last: str | None
    bucket_s: int | None
    refresh: str

    def query(self, **extra: str | None) -> str:
        """The query string that makes a chart URL answer for this same window."""
        params: dict[str, str] = {}
        if self.last:
            params["last"] = self.last
        else:
            if self.start:
                params["start"] = self.start.isoformat().replace("+00:00", "Z")
            if self.end:
                params["end"] = self.end.isoformat().replace("+00:00", "Z")
        if self.bucket_s:
            params["bucket"] = format_duration(self.bucket_s)
        params.update({k: v for k, v in extra.items() if v})
        return urlencode(params)

    def context(self, keep: dict[str, str] | None = None) -> dict[str, Any]:
        def local(value: datetime | None) -> str:
            return value.strftime("%Y-%m-%dT%H:%M") if value and not self.last else ""

        return {
            "start_local": local(self.start),
            "end_local": local(self.end),
            "presets": PRESETS,
            "last": self.last or "",
            "keep": keep or {},
            "refresh_options": REFRESH_OPTIONS,
            "refresh": self.refresh,
        }


def read_window(request: HttpRequest, default_last: str = "1h") -> PageWindow:
    """ParameterError for a bad duration or time (the view answers 422)."""
    get = request.GET
    refresh = get.get("refresh", "0")
    if refresh not in REFRESH_OPTIONS:
        refresh = "0"
    asked = request_window.read_window(get)
    bucket_s = asked.bucket_seconds()
    start, end = asked.start_time(), asked.end_time()
    last = get.get("last") or (None if (start or end) else default_last)
    if last == "all":
        return PageWindow(None, None, "all", bucket_s, refresh)
    if last:
        span = parse_duration(last, name="last")
        now = datetime.now(UTC)
        return PageWindow(now - span, now, last, bucket_s, refresh)
    if end is None and start is not None:
        end = datetime.now(UTC)
    if start is None and end is not None:
        start = end - timedelta(hours=1)
    return PageWindow(start, end, None, bucket_s, refresh)
