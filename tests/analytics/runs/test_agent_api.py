"""GET /api/runs/{run}/agents/{agent}: the answer's figures for the hand-made run of
agent_world.py, 404 for an unknown agent and for a run not seen, 401 without
credentials, and run names and agent ids that hold `/`."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.costs.models import ModelPrice
from dashboard.models import ApiToken
from ingest.pipelines.agent_events import ingest_body
from lib.access import Scope
from tests.analytics.runs.agent_world import GPT5_ROW, RUN, load_crew


@pytest.fixture
def crew(lake: Path, db: None) -> str:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(**GPT5_ROW)
    load_crew()
    return RUN


def _get(client: Client, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.get(path, headers=headers)
    return response.status_code, response.json()


def test_an_agent_answers_its_place_figures_usd_and_gaps(
    client: Client, crew: str, auth_headers: dict[str, str]
) -> None:
    status, body = _get(client, f"/api/runs/{crew}/agents/w1", auth_headers)
    assert status == 200
    assert (body["run"], body["agent"], body["role"]) == ("crew", "w1", "worker")
    assert (body["parent"], body["children"]) == ({"agent": "p1", "role": "planner"}, [])
    assert (body["events"], body["commits"], body["attempts"], body["errors"]) == (10, 1, 7, 2)
    assert body["error_rate"] == pytest.approx(2 / 7)
    assert (body["tokens"], body["llm_calls"], body["unpriced_calls"]) == (1670, 3, 1)
    assert body["usd"] == pytest.approx(0.50225)
    assert (body["first_ts"], body["last_ts"]) == ("2026-01-14T10:01:00Z", "2026-01-14T11:00:00Z")
    assert body["bucket_seconds"] is None
    assert body["timeline"][3] == {
        "t": "2026-01-14T10:07:00Z", "lane": "error", "events": 1, "label": "cargo build"
    }  # fmt: skip
    assert body["gaps"][0] == {
        "start": "2026-01-14T10:10:30Z", "end": "2026-01-14T10:40:00Z", "seconds": 1770.0
    }  # fmt: skip


def test_a_planner_lists_its_children(
    client: Client, crew: str, auth_headers: dict[str, str]
) -> None:
    _, body = _get(client, f"/api/runs/{crew}/agents/p1", auth_headers)
    assert [c["agent"] for c in body["children"]] == ["<b>x</b>", "w1", "w2"]
    assert body["parent"] == {"agent": "root", "role": "root_planner"}


def test_unknown_agents_and_unseen_runs_are_404(
    client: Client, crew: str, auth_headers: dict[str, str]
) -> None:
    assert _get(client, f"/api/runs/{crew}/agents/nobody", auth_headers) == (
        404, {"detail": "run 'crew' has no agent 'nobody'"}
    )  # fmt: skip
    assert _get(client, "/api/runs/nope/agents/w1", auth_headers) == (
        404, {"detail": "unknown run 'nope'"}
    )  # fmt: skip
    outsider = User.objects.create_user("olga", "olga@example.com", "x")  # in no team
    _, token = ApiToken.issue(outsider, "t", scope=Scope.READ)
    status, _ = _get(client, f"/api/runs/{crew}/agents/w1", {"Authorization": f"Bearer {token}"})
    assert status == 404
    assert client.get(f"/api/runs/{crew}/agents/w1").status_code == 401


def test_run_names_and_agent_ids_may_hold_slashes(
    client: Client, lake: Path, db: None, auth_headers: dict[str, str]
) -> None:
    lines = [
        {"ts": "2026-01-14T10:00:00Z", "run": "team/run-1", "agent": "lead", "event": "spawn",
         "role": "planner"},
        {"ts": "2026-01-14T10:01:00Z", "run": "team/run-1", "agent": "sub/w-1", "event": "spawn",
         "role": "worker", "parent": "lead"},
        {"ts": "2026-01-14T10:02:00Z", "run": "team/run-1", "agent": "sub/w-1",
         "event": "tool_call", "tool": "rg", "ok": True},
    ]  # fmt: skip
    assert ingest_body(b"".join(orjson.dumps(line) + b"\n" for line in lines)).accepted == 3
    status, body = _get(client, "/api/runs/team/run-1/agents/sub/w-1", auth_headers)
    assert status == 200
    assert (body["run"], body["agent"], body["events"]) == ("team/run-1", "sub/w-1", 2)
    assert body["parent"] == {"agent": "lead", "role": "planner"}
    # The run's agent list is still the runs router's.
    status, agents = _get(client, "/api/runs/team/run-1/agents", auth_headers)
    assert (status, sorted(a["agent"] for a in agents)) == (200, ["lead", "sub/w-1"])
