"""Accounts for tests: `grant` gives a user a role (and teams); the shared `user` fixture
and the browser tests' users are admins, who see every team, as every user could before
roles existed."""

from typing import Any


def grant(
    user: Any, role: str = "admin", teams: tuple[Any, ...] = (), all_teams: bool = False
) -> Any:
    from analytics.access.models import Access

    access, _ = Access.objects.update_or_create(
        user=user, defaults={"role": role, "all_teams": all_teams}
    )
    access.teams.set(teams)
    return user
