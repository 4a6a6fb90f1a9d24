"""Who may see and change what: the one value every query, page and endpoint asks.

`Seen` is what one user (or one team, for alert rules and cost reports) may see, already
resolved to names: the runs, the serving instances and the team ids. `Role` is what a user
may change. Both are attached to each request by dashboard.access (`request.access`, its
`seen` and `role`; `request.scope` for the token's scope) and read here, so read-side code that
must not import the web layer asks `seen_of(request)` and `require_role(request, ...)`.
A request with nothing attached sees nothing and may change nothing (fail closed).

SQL filters bind the visible names as a list parameter: `VISIBLE_RUN_SQL` with
`seen.params()`; all-seeing users bind NULL, which passes every row.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from lib.errors import ForbiddenError, ParameterError


class Role(StrEnum):
    """viewer reads; editor also changes alert rules, channels, silences, scrape targets
    and prices; admin also manages users, teams, tokens and settings."""

    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


_RANKS = {Role.VIEWER: 0, Role.EDITOR: 1, Role.ADMIN: 2}


class Scope(StrEnum):
    """What an API token may do (a session may do all its user's role allows)."""

    INGEST = "ingest"  # send data; read nothing
    READ = "read"  # read (GET and the read-only POSTs); change nothing
    ADMIN = "admin"  # everything its user's role allows


@dataclass(frozen=True)
class Seen:
    """What one user or team may see. `everything` (all-teams users, admins, superusers,
    and the system itself) sees every team's data and the data of no team."""

    everything: bool
    runs: frozenset[str] = frozenset()
    run_patterns: tuple[str, ...] = ()
    instances: frozenset[str] = frozenset()
    team_ids: frozenset[int] = frozenset()
    team_names: frozenset[str] = field(default=frozenset())

    @classmethod
    def all(cls) -> Seen:
        return cls(everything=True)

    @classmethod
    def nothing(cls) -> Seen:
        return cls(everything=False)

    def sees_run(self, run: str) -> bool:
        return (
            self.everything
            or run in self.runs
            or any(fnmatch.fnmatchcase(run, p) for p in self.run_patterns)
        )

    def sees_instance(self, instance: str) -> bool:
        return self.everything or instance in self.instances

    def sees_team(self, team_id: int | None) -> bool:
        """An object of no team (team_id None) is seen only by all-seeing users."""
        return self.everything or (team_id is not None and team_id in self.team_ids)

    def sees_team_name(self, name: str) -> bool:
        return self.everything or name in self.team_names

    def run_list(self) -> list[str] | None:
        """The visible run names for a SQL list parameter; None means every run."""
        return None if self.everything else sorted(self.runs)

    def instance_list(self) -> list[str] | None:
        return None if self.everything else sorted(self.instances)

    def params(self) -> dict[str, Any]:
        """Bind these with VISIBLE_RUN_SQL / VISIBLE_INSTANCE_SQL (named parameters)."""
        return {"seen_runs": self.run_list(), "seen_instances": self.instance_list()}


def visible_run_sql(column: str = "run") -> str:
    """A predicate over `column` for named-parameter queries bound with Seen.params()."""
    return f"($seen_runs::VARCHAR[] IS NULL OR list_contains($seen_runs, {column}))"


def visible_instance_sql(column: str = "instance") -> str:
    return f"($seen_instances::VARCHAR[] IS NULL OR list_contains($seen_instances, {column}))"


VISIBLE_RUN_SQL = visible_run_sql()
VISIBLE_INSTANCE_SQL = visible_instance_sql()


class RequestAccess(Protocol):
    """What dashboard.access attaches to each request as `request.access`."""

    @property
    def seen(self) -> Seen: ...

    @property
    def role(self) -> Role | None: ...

    def team(self, name: str) -> Seen | None:
        """What the team named `name` covers, when the user may filter by it."""


def seen_of(request: object) -> Seen:
    """What the request's user may see (nothing when no user was resolved)."""
    access: RequestAccess | None = getattr(request, "access", None)
    return access.seen if access is not None else Seen.nothing()


def team_seen_of(request: object, name: str) -> Seen:
    """What the team named `name` covers, as a filter of what the request's user sees: a
    team they may not see is answered as one that does not exist (ParameterError)."""
    access: RequestAccess | None = getattr(request, "access", None)
    team = access.team(name) if access is not None else None
    if team is None:
        # Not echoed: the walk of tests/dashboard/test_outsider_walk.py reads another team's
        # name in an answer as a leak, whoever typed it.
        raise ParameterError("team is not one you may filter by")
    return team


def role_of(request: object) -> Role | None:
    access: RequestAccess | None = getattr(request, "access", None)
    return access.role if access is not None else None


def require_role(request: object, needed: Role) -> None:
    """Raise ForbiddenError (403) unless the request's user has at least `needed`."""
    role = role_of(request)
    if role is None or not role.allows(needed):
        raise ForbiddenError(f"this needs the {needed} role")
