"""People endpoints of the JSON API (docs/api.md, docs/otlp.md "People"): GET /api/people
(per person and per team, per UTC day) and GET /api/people/{person} (with their
sessions). Handlers parse (the window as lib.window's WindowQuery, the team as a Query
schema) and answer analytics.people.figures' dataclasses through the Out schemas here,
over what the caller may see (`seen_of`); they never write SQL."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.people.figures import People, PersonDetail, read_people, read_person
from lib.access import seen_of
from lib.bounds import name_problem
from lib.durations import Time
from lib.errors import ParameterError
from lib.window import WindowQuery

router = Router()


class PeopleIn(Schema):
    team: str | None = None  # one team's people (the telemetry's team name)


class _Figures(Schema):
    active_seconds: float
    cost_usd: float
    input_tokens: int
    output_tokens: int
    commits: int
    lines_added: int
    lines_removed: int
    edits_accepted: int
    edits_rejected: int
    edit_acceptance: float | None  # accepted / (accepted + rejected); None: no decision


class FiguresOut(_Figures):
    sessions: int


class DayOut(FiguresOut):
    date: str  # YYYY-MM-DD, UTC


class PersonOut(FiguresOut):
    person: str
    team: str | None
    days: list[DayOut]


class TeamOut(FiguresOut):
    team: str | None
    people: int
    days: list[DayOut]


class PeopleOut(Schema):
    start: Time | None
    end: Time | None
    people: list[PersonOut]
    teams: list[TeamOut]


class SessionOut(Schema):
    session: str  # the run (GET /api/runs/{run}) when it has events
    team: str | None
    first_ts: Time
    last_ts: Time
    events: int  # 0: known only from its metrics
    input_tokens: int
    output_tokens: int
    commits: int
    cost_usd: float


class PersonDetailOut(_Figures):
    """A person's figures with their sessions listed (the list's length is the count)."""

    person: str
    team: str | None
    days: list[DayOut]
    sessions: list[SessionOut]  # latest first


@router.get("", response=PeopleOut, summary="People and teams from telemetry")
def list_people(
    request: HttpRequest, window: Query[WindowQuery], params: Query[PeopleIn]
) -> People:
    problem = None if params.team is None else name_problem(params.team, "team")
    if problem:
        raise ParameterError(problem)
    return read_people(window.time_range(), seen_of(request), team=params.team)


@router.get("/{path:person}", response=PersonDetailOut, summary="One person, with their sessions")
def person_detail(
    request: HttpRequest, person: str, window: Query[WindowQuery]
) -> dict[str, object]:
    detail: PersonDetail = read_person(person, window.time_range(), seen_of(request))
    return {**_person_fields(detail), "sessions": detail.sessions}


def _person_fields(detail: PersonDetail) -> dict[str, object]:
    p = detail.person
    return {name: getattr(p, name) for name in PersonDetailOut.model_fields if name != "sessions"}
