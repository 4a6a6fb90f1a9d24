"""A page's team filter, `?team=<name>`: the team the reader asked for, the teams they
may pick from, and the Seen the page's figures are read over (the reader's own, or that
team's). What belongs to a team (its run patterns, source patterns, its members' events,
its scrape targets) is decided by analytics.access.visibility.seen_for_team, never here;
the teams a reader may pick are analytics.costs.report.visible_teams'. A team the reader
may not see and a team that does not exist get the same refusal (`read_team_filter`
raises ForbiddenError, `team_refused` answers it with a 403 page), so a name never leaks.

Shared by every page with a team filter (Costs, Overview; the Runs list may use it too).
Parsing and deciding only: pages put `params()` in their links and chart URLs.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from analytics.access.visibility import seen_for_team
from analytics.costs.report import visible_teams
from lib.access import Seen, seen_of
from lib.errors import ForbiddenError

PARAM = "team"


@dataclass(frozen=True)
class TeamFilter:
    team: str | None  # None: every team the reader sees
    seen: Seen  # what the page shows: the chosen team's data, or all the reader sees
    teams: list[str]  # the names the reader may pick, sorted

    def params(self) -> dict[str, str]:
        """The filter as query parameters, for every link and chart URL of the page."""
        return {PARAM: self.team} if self.team else {}


def read_team_filter(request: HttpRequest) -> TeamFilter:
    """The request's team filter; ForbiddenError for a team the reader may not see (or
    that does not exist: the same words)."""
    reader = seen_of(request)
    teams = visible_teams(reader)
    names = [t.name for t in teams]
    wanted = request.GET.get(PARAM) or None
    if wanted is None:
        return TeamFilter(None, reader, names)
    for team in teams:
        if team.name == wanted:
            # A team the reader sees is one of theirs (or they see all): its data is
            # within theirs.
            return TeamFilter(team.name, seen_for_team(team), names)
    raise ForbiddenError(f"you see no team named {wanted!r}")


def team_refused(
    request: HttpRequest, exc: ForbiddenError, *, title: str, nav: str
) -> HttpResponse:
    """403: the page's heading and why its team cannot be shown, with the way back."""
    return render(
        request,
        "partials/team_refused.html",
        {"nav": nav, "title": title, "problem": str(exc), "back": request.path},
        status=403,
    )
