"""The runs list (`/`): the runs its user sees, searched, filtered, sorted and paged as
`GET /api/runs` does (analytics/runs/list_request.py reads the query string for both,
analytics/runs/listing.py answers), every choice kept in the URL; its table as CSV
(`?format=csv&table=runs`, the current filter's every run, streamed).

A view only: no SQL, no access rule of its own (the request's Seen, lib.access.seen_of;
a team filter is lib.access.team_seen_of's, the teams offered visibility.filter_teams').
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import render

from analytics.access.visibility import filter_teams
from analytics.runs.list_request import (
    PAGE_LIMIT,
    RunListRequest,
    decode_cursor,
    read_request,
)
from analytics.runs.listing import ListedRun, list_runs_page, source_kinds
from analytics.runs.paging import MAX_LIMIT
from analytics.runs.status import RunState
from dashboard.export import csv_response
from dashboard.pages.run_window import REFRESH_OPTIONS
from dashboard.pages.runs import BADGES, in_no_team
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Seen, seen_of, team_seen_of
from lib.errors import ParameterError

INGEST_COMMAND = "python manage.py ingest agent-events PATH..."
# The query-string names the filter bar keeps (the sort and page ride along as links).
FILTERS = ("q", "status", "source", "team", "model", "start", "end")
# The table's columns: (sort name or None, heading, numeric, largest first on first click).
COLUMNS = (
    ("name", "Run", False),
    (None, "Status", False),
    ("source", "Source", False),
    ("first_seen", "First event", False),
    ("last_seen", "Last event", False),
    ("agents", "Agents", True),
    ("events", "Events", True),
    ("commits", "Commits", True),
    ("errors", "Errors", True),
    (None, "Error rate", True),
    ("tokens", "Tokens", True),
)
CSV_HEADER = (
    "run", "label", "status", "source_kind", "first_ts", "last_ts", "agents", "events",
    "commits", "errors", "attempts", "input_tokens", "output_tokens", "project", "branch",
    "cwd", "first_prompt",
)  # fmt: skip


@dataclass(frozen=True)
class RunListRow:
    """A line of the runs list: the run's stored totals and label, and where it stands
    (idle, with no attempts, for a run whose status is not known yet)."""

    totals: ListedRun

    @property
    def attempts(self) -> int:
        return self.totals.status.attempts if self.totals.status else 0

    @property
    def error_rate(self) -> float | None:
        return self.totals.errors / self.attempts if self.attempts else None

    @property
    def tokens(self) -> int:
        return self.totals.tokens

    @property
    def state(self) -> str:
        return str(self.totals.status.state) if self.totals.status else str(RunState.IDLE)

    @property
    def badge(self) -> str:
        return BADGES[self.state]

    @property
    def stalled_minutes(self) -> float | None:
        return self.totals.status.stalled_minutes if self.totals.status else None


def _url(query: QueryDict, **changes: str | None) -> str:
    """This page's URL with `changes` (None drops a name), without `fragment` unless
    given."""
    changed = query.copy()
    for name in ("fragment", *changes):
        changed.pop(name, None)
    for name, value in changes.items():
        if value:
            changed[name] = value
    encoded = changed.urlencode()
    return "/?" + encoded if encoded else "/"


def _headers(query: QueryDict, asked: RunListRequest) -> list[dict[str, Any]]:
    """Each column's heading, its sort link (the other direction when it is the sort,
    else its natural first direction) and its aria-sort."""
    headers = []
    for sort, title, numeric in COLUMNS:
        head: dict[str, Any] = {"title": title, "numeric": numeric, "href": None, "aria": None}
        if sort is not None:
            current = sort == asked.sort
            first_descending = numeric or sort in ("first_seen", "last_seen")
            descending = not asked.descending if current else first_descending
            head["href"] = _url(query, sort=("-" if descending else "") + sort, cursor=None)
            if current:
                head["aria"] = "descending" if asked.descending else "ascending"
        headers.append(head)
    return headers


def _team(request: HttpRequest, asked: RunListRequest) -> Seen | None:
    return team_seen_of(request, asked.team) if asked.team else None


def _csv_rows(request: HttpRequest, asked: RunListRequest, seen: Seen) -> Iterator[list[Any]]:
    """Every run of the filter, a page of MAX_LIMIT at a time (keyset, as the list)."""
    team = _team(request, asked)
    page_request = replace(asked, limit=MAX_LIMIT, after=None)
    while True:
        page = list_runs_page(page_request, seen, team=team)
        for run in page.runs:
            row = RunListRow(run)
            name = run.name
            yield [
                run.run, run.label, row.state, run.source_kind, run.first_ts, run.last_ts,
                run.agents, run.events, run.commits, run.errors, row.attempts,
                run.input_tokens, run.output_tokens, name and name.project,
                name and name.branch, name and name.cwd, name and name.first_prompt,
            ]  # fmt: skip
        if page.next is None:
            return
        page_request = replace(page_request, after=decode_cursor(page.next, asked.sort_token))


def _bad_parameter(request: HttpRequest, exc: ParameterError) -> HttpResponse:
    return render(request, "runs/bad_parameter.html", {"message": str(exc)}, status=422)


@login_required
def runs_list(request: HttpRequest) -> HttpResponseBase:
    seen = seen_of(request)
    query = request.GET
    try:
        asked = read_request(query, default_limit=PAGE_LIMIT)
        if wants_csv(request) == "runs":
            return csv_response("runs.csv", CSV_HEADER, _csv_rows(request, asked, seen))
        page = list_runs_page(asked, seen, team=_team(request, asked))
    except ParameterError as exc:
        return _bad_parameter(request, exc)
    context = {
        "nav": "runs",
        "rows": [RunListRow(run) for run in page.runs],
        "no_team": in_no_team(seen),
        "ingest_command": INGEST_COMMAND,
        "filtered": asked.filtered,
        "headers": _headers(query, asked),
        "next_url": _url(query, cursor=page.next) if page.next else None,
        "first_url": _url(query, cursor=None) if asked.after else None,
        "clear_url": _url(QueryDict(), sort=query.get("sort")),
    }
    if query.get("fragment") == "table":
        return render(request, "runs/partials/runs_table.html", context)
    refresh = query.get("refresh", "0")
    context.update(
        filters={name: query.get(name, "") for name in FILTERS},
        sort=asked.sort_token,
        statuses=[s.value for s in RunState],
        sources=source_kinds(seen),
        teams=[t.name for t in filter_teams(request.user)],
        refresh=refresh if refresh in REFRESH_OPTIONS else "0",
        refresh_options=REFRESH_OPTIONS,
        fragment_url=_url(query, fragment="table"),
    )
    return render(request, "runs/runs.html", context)
