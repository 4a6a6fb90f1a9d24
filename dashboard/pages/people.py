"""The People pages: a table of the people who send telemetry (per person: team,
sessions, active time, cost, tokens, commits, lines added and removed, edit acceptance),
a team filter kept in the URL (`?team=`), and a person's page with their days and their
sessions, each a link to its run. The people table is a CSV too
(`?format=csv&table=people`, dashboard.tables' convention), with the page's filters.

Views only: every figure comes from analytics.people.figures over what the user sees
(`seen_of`); no SQL here. The window is the shared picker's (dashboard.pages.time_window),
`all` by default: the telemetry's own range.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

from analytics.people.figures import Person, read_people, read_person
from dashboard.pages.time_window import range_problem, read_window
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import seen_of
from lib.errors import NotFoundError, ParameterError
from lib.window import TimeRange

# What the empty page tells a developer to set (README, "Send telemetry", has the rest).
CLAUDE_CODE_SETTINGS = (
    "CLAUDE_CODE_ENABLE_TELEMETRY=1",
    "OTEL_METRICS_EXPORTER=otlp",
    "OTEL_LOGS_EXPORTER=otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
    "OTEL_EXPORTER_OTLP_ENDPOINT={origin}",
    'OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer <an ingest token>"',
    "OTEL_RESOURCE_ATTRIBUTES=team.id=<your team>",
)


def _settings_lines(request: HttpRequest) -> list[str]:
    origin = request.build_absolute_uri("/").rstrip("/")
    return [line.format(origin=origin) for line in CLAUDE_CODE_SETTINGS]


PEOPLE_HEADER = (
    "person",
    "team",
    "sessions",
    "active_seconds",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "commits",
    "lines_added",
    "lines_removed",
    "edits_accepted",
    "edits_rejected",
)


def _people_rows(rows: list[Person]) -> list[tuple[object, ...]]:
    return [
        (
            p.person,
            p.team or "",
            p.sessions,
            p.active_seconds,
            p.cost_usd,
            p.input_tokens,
            p.output_tokens,
            p.commits,
            p.lines_added,
            p.lines_removed,
            p.edits_accepted,
            p.edits_rejected,
        )
        for p in rows
    ]


@login_required
def people_page(request: HttpRequest) -> HttpResponseBase:
    team = request.GET.get("team") or None
    keep = {"team": team} if team else {}
    try:
        page = read_window(request, default_last="all")
        people = read_people(TimeRange(page.start, page.end), seen_of(request))
    except ParameterError as exc:
        return range_problem(request, exc, title="People", nav="people", keep=keep)
    rows = [p for p in people.people if team is None or p.team == team]
    teams = [t.team for t in people.teams if t.team is not None]
    if wants_csv(request) is not None:
        return table_csv(
            request, "people", {"people": CsvTable(PEOPLE_HEADER, lambda: _people_rows(rows))}
        )
    return render(
        request,
        "people/people.html",
        {
            "nav": "people",
            "people": rows,
            "any_people": bool(people.people),
            "teams": teams,
            "team": team,
            "range": page.context(keep),
            "settings_lines": _settings_lines(request) if not people.people else [],
        },
    )


@login_required
def person_page(request: HttpRequest, person: str) -> HttpResponse:
    try:
        page = read_window(request, default_last="all")
        detail = read_person(person, TimeRange(page.start, page.end), seen_of(request))
    except ParameterError as exc:
        return range_problem(request, exc, title=person, nav="people")
    except NotFoundError as exc:
        raise Http404(str(exc)) from None
    return render(
        request,
        "people/person.html",
        {"nav": "people", "detail": detail, "person": detail.person, "range": page.context()},
    )
