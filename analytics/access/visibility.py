"""The one place that decides what a user, or a team, may see (lib.access.Seen).

A user sees the data of their teams: the runs their teams' run patterns match, whose
events came from a file their source patterns match or carry the team's name (telemetry
from its members: the events' `team` column), and the scrape targets assigned to those
teams. Admins, Django superusers and users with the all-teams flag see everything
(including data of no team); a user in no team sees no team's data. Alert rules and cost
reports of a team see what a member of only that team would.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from analytics.access.models import Access
from analytics.costs.models import Team
from analytics.people.queries import team_runs
from analytics.runs.queries import run_names, run_sources
from analytics.serving.models import ScrapeTarget
from analytics.tokens.queries import request_run_names
from lib.access import Role, Seen


def _access_of(user: Any) -> tuple[Role | None, bool]:
    """A user's role and all-teams flag, in one read: (None, False) for anonymous or
    inactive users; superusers are admins; a user without an Access row a viewer."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return None, False
    if getattr(user, "is_superuser", False):
        return Role.ADMIN, True
    access = Access.objects.filter(user=user).only("role", "all_teams").first()
    if access is None:
        return Role.VIEWER, False
    role = Role(access.role)
    return role, role is Role.ADMIN or access.all_teams


def role_for_user(user: Any) -> Role | None:
    """A signed-in user's role (superusers are admins); None for anonymous users."""
    return _access_of(user)[0]


def sees_all_teams(user: Any) -> bool:
    """Admins, superusers and users with the all-teams flag see every team."""
    return _access_of(user)[1]


def teams_of(user: Any) -> list[Team]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Team.objects.filter(members__user=user).order_by("name"))


def filter_teams(user: Any) -> list[Team]:
    """The teams a user may filter a page by: every team for one who sees them all, their
    own otherwise."""
    if sees_all_teams(user):
        return list(Team.objects.order_by("name"))
    return teams_of(user)


def team_seen_for_user(user: Any, name: str) -> Seen | None:
    """What the team named `name` covers (seen_for_team), when `user` may filter by it."""
    team = next((t for t in filter_teams(user) if t.name == name), None)
    return None if team is None else seen_for_team(team)


def seen_for_user(user: Any) -> Seen:
    role, all_teams = _access_of(user)
    if role is None:
        return Seen.nothing()
    if all_teams:
        return Seen.all()
    return seen_for_teams(teams_of(user))


def seen_for_team(team: Team | None) -> Seen:
    """What a rule or report of `team` covers: that team's data, or everything for None."""
    return Seen.all() if team is None else seen_for_teams([team])


def seen_for_teams(teams: Iterable[Team]) -> Seen:
    teams = list(teams)
    if not teams:
        return Seen.nothing()
    run_patterns = tuple(sorted({p for t in teams for p in (t.run_patterns or [])}))
    source_patterns = sorted({p for t in teams for p in (t.source_patterns or [])})
    # Runs known from events and from request records (a request may name a run that
    # logged no events).
    known = set(run_names()) | set(request_run_names())
    runs = {r for r in known if any(fnmatch.fnmatchcase(r, p) for p in run_patterns)}
    if source_patterns:
        runs |= {
            run
            for run, source in run_sources()
            if any(fnmatch.fnmatchcase(source, p) for p in source_patterns)
        }
    runs |= set(team_runs(t.name for t in teams))
    instances = set(ScrapeTarget.objects.filter(team__in=teams).values_list("name", flat=True))
    return Seen(
        everything=False,
        runs=frozenset(runs),
        run_patterns=run_patterns,
        instances=frozenset(instances),
        team_ids=frozenset(t.pk for t in teams),
        team_names=frozenset(t.name for t in teams),
    )
