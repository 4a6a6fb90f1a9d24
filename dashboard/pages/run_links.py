"""Where the run page's figures lead: the events explorer's URL for a set of filters
(`explorer_url`, the one place that spells it), bound to a run for the charts
(analytics.runs.charts.Explore), and the links a keyboard reaches without the charts: the
events of the whole range (every one, commits, failed) and of each stall; and `page_link`,
a paged page's links to itself (the explorer's and the replay's next and first pages).

URLs only: no queries, no rendering. The explorer takes kind=, ok=true|false, agent=,
subtree=1, model=, tool=, q=, start=/end= (RFC 3339 UTC, `2026-01-02T03:04:05Z`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import reverse

from analytics.runs.queries import Stall, Stalls
from lib.durations import format_time


def page_link(request: HttpRequest, kept: dict[str, Any]) -> Callable[..., str]:
    """The request's own page with the parameters it keeps (`kept`) and any `extra` ones,
    as link(**extra): a cursor, before=, ..."""

    def link(**extra: str) -> str:
        query = urlencode({**kept, **extra})
        return f"{request.path}?{query}" if query else request.path

    return link


def _spelled(value: str | bool | datetime) -> str:
    """A filter's value as the explorer reads it: times in UTC with `Z`, to the
    microsecond when they have one (a stall's end is exclusive: rounding it would drop or
    add the events of its last millisecond), booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        if value.microsecond % 1000:
            return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        return format_time(value) or ""
    return value


def explorer_url(run: str, **filters: str | bool | datetime | None) -> str:
    """The events explorer of `run` with these filters (None: left out), in this order."""
    params = {name: _spelled(value) for name, value in filters.items() if value is not None}
    page = reverse("run-events", args=[run])
    return f"{page}?{urlencode(params, safe=':')}" if params else page


def explore_of(run: str) -> Callable[..., str]:
    """explorer_url bound to `run`: what the run's figures call for their links."""
    return partial(explorer_url, run)


def range_links(run: str, start: datetime | None, end: datetime | None) -> list[tuple[str, str]]:
    """The events of the page's range: every one, its commits, its failed events."""
    return [
        ("every event", explorer_url(run, start=start, end=end)),
        ("commits", explorer_url(run, kind="commit", start=start, end=end)),
        ("failed events", explorer_url(run, ok=False, start=start, end=end)),
    ]


def stall_rows(run: str, stalls: Stalls) -> list[tuple[Stall, str]]:
    """Each stall with the explorer on the events logged during it."""
    return [(s, explorer_url(run, start=s.start, end=s.end)) for s in stalls.stalls]


def current_stall_link(run: str, stalls: Stalls) -> str | None:
    """The explorer on the events logged since the current stall began, if there is one."""
    return explorer_url(run, start=stalls.current.since) if stalls.current else None
