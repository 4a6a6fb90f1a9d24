"""GET /api/runs/{run}/replay: its shape, paging by `next`, 404 for a run not seen, a
one-line 422 for a bad cursor or limit, and a run name that ends in /replay."""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from dashboard.models import ApiToken
from ingest.pipelines.claude_code import run_claude_code
from lib.access import Scope
from tests.analytics.runs.replay_world import SESSION, TOP_LEVEL, write_session


@pytest.fixture
def session(lake: Path, tmp_path: Path) -> str:
    write_session(tmp_path)
    run_claude_code([str(tmp_path)])
    return SESSION


def _get(client: Client, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.get(path, headers=headers)
    return response.status_code, response.json()


def test_the_replay_answers_turns_next_and_captured(
    client: Client, session: str, auth_headers: dict[str, str]
) -> None:
    status, body = _get(client, f"/api/runs/{session}/replay?limit=5", auth_headers)
    assert status == 200
    assert set(body) == {
        "run",
        "origin",
        "captured",
        "agents",
        "label",
        "turns",
        "next",
        "previous",
    }
    assert (body["captured"], body["origin"], body["previous"]) == (True, "transcript", None)
    assert body["label"]["project"] == "shop"
    first = body["turns"][0]
    assert first["ts"] == "2026-03-01T10:00:00Z"
    assert (first["kind"], first["agent"], first["truncated"], first["result"]) == (
        "prompt", "main", False, None
    )  # fmt: skip
    call = body["turns"][3]
    assert (call["tool"], call["tool_use_id"], call["result"]["is_error"]) == ("Bash", "t1", True)
    status, rest = _get(
        client, f"/api/runs/{session}/replay?limit=5&cursor={body['next']}", auth_headers
    )
    assert status == 200
    assert len(body["turns"]) + len(rest["turns"]) == TOP_LEVEL
    assert rest["next"] is None


def test_an_agent_filter(client: Client, session: str, auth_headers: dict[str, str]) -> None:
    _, body = _get(client, f"/api/runs/{session}/replay?agent=agent-b0b", auth_headers)
    assert [t["kind"] for t in body["turns"]] == ["prompt", "tool_call"]


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("cursor=zzz", "cursor is not one this list gave"),
        ("limit=0", "limit must be between 1 and 1000"),
    ],
)
def test_bad_parameters_are_one_line_422s(
    client: Client, session: str, auth_headers: dict[str, str], query: str, detail: str
) -> None:
    assert _get(client, f"/api/runs/{session}/replay?{query}", auth_headers) == (
        422, {"detail": detail}
    )  # fmt: skip


def test_unknown_and_unseen_runs_are_404(
    client: Client, session: str, auth_headers: dict[str, str], db: None
) -> None:
    assert _get(client, "/api/runs/nope/replay", auth_headers) == (
        404, {"detail": "unknown run 'nope'"}
    )  # fmt: skip
    outsider = User.objects.create_user("olga", "olga@example.com", "x")  # in no team
    _, token = ApiToken.issue(outsider, "t", scope=Scope.READ)
    status, _ = _get(client, f"/api/runs/{session}/replay", {"Authorization": f"Bearer {token}"})
    assert status == 404
    assert client.get(f"/api/runs/{session}/replay").status_code == 401


def test_the_replay_path_is_never_read_as_part_of_a_run_name(
    client: Client, session: str, auth_headers: dict[str, str]
) -> None:
    # The runs router's /{path:run}/... routes would take "<run>/replay" as a run name
    # if they came first: the replay router is mounted before them.
    status, body = _get(client, f"/api/runs/{session}/replay", auth_headers)
    assert (status, body["run"]) == (200, session)
    status, _ = _get(client, f"/api/runs/{session}/agents", auth_headers)
    assert status == 200
