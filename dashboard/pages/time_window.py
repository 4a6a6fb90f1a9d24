"""The time range of a page and of the chart JSON it loads: `last=1h` (relative to now,
so auto-refresh moves it), `last=all` (the data's own range) or explicit `start`/`end`
(the form's datetime-local fields, in UTC) and `bucket` (`auto` or a duration), read
through lib.window as every endpoint reads them (so `from`/`to` are accepted too).

Builds the context templates/partials/timerange.html expects: the presets, buckets and
refresh intervals every page shares (the run page keeps its own presets in
dashboard/pages/run_window.py: it counts back from the run's last event), the absolute
range the page shows, and, for a range that cannot be read, the values as typed with the
reason (`range_problem` answers 422 with the form kept). Parsing only; every datetime is
UTC-aware.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from lib import window as request_window
from lib.durations import format_duration, format_time, parse_duration
from lib.errors import ParameterError

PRESETS = ("15m", "1h", "6h", "24h", "7d", "30d")
# `auto` lets the page pick the bucket from the range; the rest are what the API takes.
BUCKETS = ("auto", "1m", "5m", "15m", "1h", "6h", "1d")
# Auto-refresh intervals in seconds, "0" for off: the same choices on every page.
REFRESH_OPTIONS = ("0", "10", "30", "60")


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

    def context(
        self,
        keep: dict[str, str] | None = None,
        *,
        shown: tuple[datetime, datetime, int] | None = None,
    ) -> dict[str, Any]:
        """`shown`: the range and bucket the page resolved (a preset from now, `all` from
        the data), printed next to the controls."""

        def local(value: datetime | None) -> str:
            return form_time(value) if value and not self.last else ""

        return {
            "start_local": local(self.start),
            "end_local": local(self.end),
            "bucket": format_duration(self.bucket_s) if self.bucket_s else "auto",
            **_choices(self.last or "", self.refresh, keep),
            **(shown_range(*shown) if shown else {}),
        }


def form_time(value: datetime) -> str:
    """The form's datetime-local spelling, in UTC (seconds kept only when set)."""
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S" if value.second else "%Y-%m-%dT%H:%M")


def _choices(last: str, refresh: str, keep: dict[str, str] | None) -> dict[str, Any]:
    return {
        "presets": PRESETS,
        "buckets": BUCKETS,
        "refresh_options": REFRESH_OPTIONS,
        "last": last,
        "refresh": refresh,
        "keep": keep or {},
    }


def shown_range(start: datetime, end: datetime, bucket_s: int) -> dict[str, str]:
    """The absolute range a page shows, for the picker: RFC 3339 for `<time datetime>`
    and the words the page prints (`2026-01-14 10:00`, bucket `15m`)."""

    def words(value: datetime) -> str:
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")

    return {
        "shown_start": format_time(start) or "",
        "shown_end": format_time(end) or "",
        "shown_start_text": words(start),
        "shown_end_text": words(end),
        "shown_bucket": format_duration(bucket_s),
    }


def read_refresh(params: Mapping[str, str]) -> str:
    """The auto-refresh interval asked for; off for anything not offered."""
    refresh = params.get("refresh", "0")
    return refresh if refresh in REFRESH_OPTIONS else "0"


def read_window(request: HttpRequest, default_last: str = "1h") -> PageWindow:
    """ParameterError for a bad duration or time (the view answers with range_problem)."""
    get = request.GET
    refresh = read_refresh(get)
    asked = request_window.read_window(get)
    bucket_s = None if asked.bucket == "auto" else asked.bucket_seconds()
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
    request_window.TimeRange(start, end)  # start before end, or a ParameterError
    return PageWindow(start, end, None, bucket_s, refresh)


def typed_context(
    params: Mapping[str, str], problem: str, keep: dict[str, str] | None = None
) -> dict[str, Any]:
    """The picker as the user filled it in (every value as typed, none parsed) with the
    reason it could not be used."""
    first = request_window.read_window(params)
    last = params.get("last", "")
    return {
        "start_local": first.start or "",
        "end_local": first.end or "",
        # A value the date picker cannot hold (it would show it blank) is shown as text.
        "start_input": _input_type(first.start),
        "end_input": _input_type(first.end),
        "bucket": first.bucket or "auto",
        **_choices(last if not (first.start or first.end) else "", read_refresh(params), keep),
        "problem": problem,
    }


def _input_type(typed: str | None) -> str:
    try:
        datetime.fromisoformat(typed or "2000-01-01T00:00")
    except ValueError:
        return "text"
    return "datetime-local"


def range_problem(
    request: HttpRequest,
    problem: ParameterError,
    *,
    title: str,
    nav: str,
    keep: dict[str, str] | None = None,
) -> HttpResponse:
    """422: the page's heading and its time picker holding what was typed, with why it
    cannot be drawn; nothing else is drawn from a range that does not exist."""
    return render(
        request,
        "partials/range_problem.html",
        {"nav": nav, "title": title, "range": typed_context(request.GET, str(problem), keep)},
        status=422,
    )
