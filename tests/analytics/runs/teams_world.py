"""Two teams and the people around them, for the tests that runs are seen by their teams.

Teams: `a` (run pattern `team-a-*`), `b` (`team-b-*`) and `infra` (no run pattern; the
source pattern `<logs>/infra/*`). Runs, each ingested from its own file under `<logs>`:
`team-a-1` (a/events.jsonl, 2026-01-14 10:00-10:20), `team-b-1` (b/events.jsonl,
11:00-11:30), `other-1` (infra/other.jsonl, 12:00-12:10; no run pattern matches it).
Quarantined lines: a/events.jsonl has one line that is not JSON (a line of no named run,
from a file that fed team-a-1) and one agent event naming team-b-1 with a bad time (a
line of team-b-1, though the file fed team-a-1); b/events.jsonl has one line that is
not JSON. Serving instances: `gpu-a` (team a), `gpu-b` (team b), each scraped 3 times.

People (every password PASSWORD): `ann` viewer in a, `ben` editor in b, `ivy` viewer in
infra, `nel` viewer in no team, `tia` viewer with the all-teams flag, `ada` admin in no
team.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.people import grant
from tests.vllm_text import EngineState, v1_text

PASSWORD = "team-world-passphrase"
RUNS = ("team-a-1", "team-b-1", "other-1")
SCRAPED_AT = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)


def _event(run: str, clock: str, agent: str, event: str, **extra: Any) -> bytes:
    line = {"ts": f"2026-01-14T{clock}Z", "run": run, "agent": agent, "event": event, **extra}
    return orjson.dumps(line)


def _run_lines(run: str, hour: int) -> list[bytes]:
    """The root spawns at :00, its worker w at :00:30, w commits at :10."""
    return [
        _event(run, f"{hour}:00:00", "root", "spawn", role="root_planner"),
        _event(run, f"{hour}:00:30", "w", "spawn", role="worker", parent="root"),
        _event(run, f"{hour}:10:00", "w", "commit", commit={"sha": f"{run}-sha"}),
    ]


@dataclass(frozen=True)
class World:
    logs: Path
    people: dict[str, Any]  # by name
    teams: dict[str, Any]  # by name

    def file(self, team: str) -> str:
        return str(self.logs / {"a": "a/events.jsonl", "b": "b/events.jsonl"}[team])


def _write(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def build_world(tmp_path: Path) -> World:
    from django.contrib.auth.models import User

    from analytics.costs.models import Team
    from analytics.serving.models import ScrapeTarget

    logs = tmp_path / "logs"
    a_lines = [
        *_run_lines("team-a-1", 10),
        _event("team-a-1", "10:20:00", "w", "tool_call", tool="rg", ok=False),
        b"this line of a is not json",
        orjson.dumps({"ts": "yesterday", "run": "team-b-1", "agent": "w", "event": "spawn"}),
    ]
    _write(logs / "a" / "events.jsonl", a_lines)
    b_lines = [
        *_run_lines("team-b-1", 11),
        _event("team-b-1", "11:30:00", "w", "tool_call", tool="rg", ok=True),
        b"this line of b is not json",
    ]
    _write(logs / "b" / "events.jsonl", b_lines)
    _write(logs / "infra" / "other.jsonl", _run_lines("other-1", 12))
    run_agent_events([str(logs)])

    teams = {
        "a": Team.objects.create(name="a", run_patterns=["team-a-*"]),
        "b": Team.objects.create(name="b", run_patterns=["team-b-*"]),
        "infra": Team.objects.create(name="infra", source_patterns=[f"{logs}/infra/*"]),
    }
    for name, team in (("gpu-a", teams["a"]), ("gpu-b", teams["b"])):
        ScrapeTarget.objects.create(name=name, url=f"http://{name}.test/metrics", team=team)
    load_scrapes(
        [
            PendingScrape(
                name,
                SCRAPED_AT + timedelta(minutes=i),
                scrape=parse_scrape(v1_text({"0": EngineState(0.25 * i, preemptions=i)})),
            )
            for name in ("gpu-a", "gpu-b")
            for i in range(3)
        ]
    )

    def person(name: str, role: str, *team_names: str, all_teams: bool = False) -> Any:
        user = User.objects.create_user(name, f"{name}@example.com", PASSWORD)
        return grant(user, role, teams=tuple(teams[t] for t in team_names), all_teams=all_teams)

    people = {
        "ann": person("ann", "viewer", "a"),
        "ben": person("ben", "editor", "b"),
        "ivy": person("ivy", "viewer", "infra"),
        "nel": person("nel", "viewer"),
        "tia": person("tia", "viewer", all_teams=True),
        "ada": person("ada", "admin"),
    }
    return World(logs, people, teams)


def run_routes(prefix: str) -> list[str]:
    """Every route of the URL map under `prefix` that names a run, as a path with `{run}`
    to fill in (read from the URL map, so a route added later is walked too); a route
    naming an agent names `w`, which every run of the world has."""
    from django.urls import URLResolver, get_resolver

    def walk(patterns: list[Any], above: str) -> list[str]:
        found = []
        for pattern in patterns:
            route = above + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                found += walk(pattern.url_patterns, route)
            elif route.startswith(prefix) and "<path:run>" in route:
                found.append(
                    "/" + route.replace("<path:run>", "{run}").replace("<path:agent>", "w")
                )
        return found

    return walk(get_resolver().url_patterns, "")
