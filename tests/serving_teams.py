"""Two teams' serving instances and the people who look at them, for the serving
visibility tests: team alpha's target gpu-a, team beta's gpu-b, and `oneoff`, scraped once
but registered by no team (only all-teams users see it); alpha also has a registered
target, gpu-a-new, not scraped yet.

Each instance is scraped twice, a minute apart, from one engine, with exact values:

| instance | model       | KV usage      | preemptions | running |
|----------|-------------|---------------|-------------|---------|
| gpu-a    | org/model-a | 0.25 then 0.75| 0 then 2    | 1 then 3|
| gpu-b    | org/model-b | 0.125, 0.375  | 0 then 4    | 5, 5    |
| oneoff   | org/model-x | 1.0, 1.0      | 0 then 8    | 10, 10  |
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import Client

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.people import grant
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# One bucket holding both scrapes of every instance.
RANGE = "start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z&bucket=1h"
EVERY_INSTANCE = ["gpu-a", "gpu-b", "oneoff"]

_SCRAPES = {
    "gpu-a": ("org/model-a", [(0.25, 0, 1), (0.75, 2, 3)]),
    "gpu-b": ("org/model-b", [(0.125, 0, 5), (0.375, 4, 5)]),
    "oneoff": ("org/model-x", [(1.0, 0, 10), (1.0, 8, 10)]),
}


@dataclass(frozen=True)
class People:
    """Signed-in clients: a viewer of alpha, an editor of alpha, a viewer of beta, a
    viewer in no team, a viewer with the all-teams flag, and an admin (in no team)."""

    alpha: Client
    alpha_editor: Client
    beta: Client
    no_team: Client
    all_teams: Client
    admin: Client


def load_two_teams() -> People:
    """Teams, targets, scrapes and people as the module docstring says (needs `lake`, db)."""
    from django.contrib.auth.models import User

    from analytics.costs.models import Team
    from analytics.serving.models import ScrapeTarget

    alpha = Team.objects.create(name="alpha")
    beta = Team.objects.create(name="beta")
    ScrapeTarget.objects.create(name="gpu-a", url="http://127.0.0.1:9/metrics", team=alpha)
    ScrapeTarget.objects.create(name="gpu-a-new", url="http://127.0.0.1:9/new", team=alpha)
    ScrapeTarget.objects.create(name="gpu-b", url="http://127.0.0.1:9/b", team=beta)
    load_scrapes(
        [
            PendingScrape(
                instance,
                T0 + timedelta(minutes=i),
                scrape=parse_scrape(
                    v1_text({"0": EngineState(kv, preemptions=pre, running=running)}, model=model)
                ),
            )
            for instance, (model, states) in _SCRAPES.items()
            for i, (kv, pre, running) in enumerate(states)
        ]
    )

    def person(
        name: str, role: str, teams: tuple[Any, ...] = (), all_teams: bool = False
    ) -> Client:
        user = grant(
            User.objects.create_user(name, f"{name}@example.com", "correct-horse-battery"),
            role=role,
            teams=teams,
            all_teams=all_teams,
        )
        client = Client()
        client.force_login(user)
        return client

    return People(
        alpha=person("ann", "viewer", (alpha,)),
        alpha_editor=person("abe", "editor", (alpha,)),
        beta=person("bob", "viewer", (beta,)),
        no_team=person("nia", "viewer"),
        all_teams=person("otto", "viewer", all_teams=True),
        admin=person("ada", "admin"),
    )
