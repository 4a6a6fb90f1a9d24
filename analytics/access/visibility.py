"""The one place that decides what a user, or a team, may see (lib.access.Seen).

A user sees the data of their teams: the runs their teams' run patterns match or whose
events came from a file their source patterns match, and the scrape targets assigned to
those teams. Admins, Django superusers and users with the all-teams flag see everything
(including data of no team); a user in no team sees no team's data. Alert rules and cost
reports of a team see what a member of only that team would.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from analytics.access.models import Access
from analytics.costs.models import Team
from analytics.runs.queries import run_names, run_sources
from analytics.serving.models import ScrapeTarget
from analytics.tokens.queries import request_run_names
from lib.access import Role, Seen


def role_for_user(user: Any) -> Role | None:
    """A signed-in user's role (superusers are admins); None for anonymous users."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return None
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    access = Access.objects.filter(user=user).only("role").first()
    return Role(access.role) if access is not None else Role.VIEWER


def sees_all_teams(user: Any) -> bool:
    role = role_for_user(user)
    if role is None:
        return False
    if role is Role.ADMIN:
        return True
    return Access.objects.filter(user=user, all_teams=True).exists()


def teams_of(user: Any) -> list[Team]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Team.objects.filter(members__user=user).order_by("name"))


def seen_for_user(user: Any) -> Seen:
    if role_for_user(user) is None:
        return Seen.nothing()
    if sees_all_teams(user):
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
    instances = set(ScrapeTarget.objects.filter(team__in=teams).values_list("name", flat=True))
    return Seen(
        everything=False,
        runs=frozenset(runs),
        run_patterns=run_patterns,
        instances=frozenset(instances),
        team_ids=frozenset(t.pk for t in teams),
        team_names=frozenset(t.name for t in teams),
    )
