"""Runs are seen by their teams: the runs questions asked with a Seen, and every runs
endpoint of the API walked as insiders and outsiders (tests/analytics/runs/teams_world.py
says who is who)."""

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.runs import quarantine, queries, status
from analytics.runs.paging import Paging
from lib.access import Scope, Seen
from lib.errors import NotFoundError
from tests.analytics.runs.teams_world import RUNS, World, build_world, run_routes

# Latest first, as the list sorts: other-1 ends 12:10, team-b-1 11:30, team-a-1 10:20.
EVERY_RUN = ["other-1", "team-b-1", "team-a-1"]
SEES = {
    "ann": ["team-a-1"],
    "ben": ["team-b-1"],
    "ivy": ["other-1"],  # by the infra team's source pattern
    "nel": [],
    "tia": EVERY_RUN,
    "ada": EVERY_RUN,
}
ONLY_A = Seen(everything=False, runs=frozenset({"team-a-1"}), run_patterns=("team-a-*",))


@pytest.fixture
def world(lake: Path, db: None, tmp_path: Path) -> World:
    return build_world(tmp_path)


def _client(world: World, name: str) -> Client:
    client = Client()
    client.force_login(world.people[name])
    return client


def _get(client: Client, path: str) -> Any:
    response = client.get(path)
    return response.status_code, response.json()


# --- the questions, asked with a Seen ----------------------------------------------------


@pytest.mark.usefixtures("world")
def test_the_runs_list_holds_only_the_runs_a_seen_sees() -> None:
    assert [r.run for r in queries.list_runs(ONLY_A)] == ["team-a-1"]
    assert [r.run for r in queries.list_runs(Seen.nothing())] == []
    assert [r.run for r in queries.list_runs(Seen.all())] == EVERY_RUN


@pytest.mark.usefixtures("world")
def test_statuses_are_worked_out_only_for_seen_runs() -> None:
    assert list(status.run_statuses(seen=ONLY_A)) == ["team-a-1"]
    assert status.run_statuses(run="team-b-1", seen=ONLY_A) == {}
    assert sorted(status.run_statuses(seen=Seen.all())) == sorted(EVERY_RUN)


@pytest.mark.usefixtures("world")
def test_an_unseen_run_is_not_found_like_a_missing_one() -> None:
    with pytest.raises(NotFoundError, match=r"^unknown run 'team-b-1'$"):
        queries.agents("team-b-1", seen=ONLY_A)
    with pytest.raises(NotFoundError, match=r"^unknown run 'team-b-1'$"):
        quarantine.run_quarantine("team-b-1", Paging(10, 0), seen=ONLY_A)
    # the pattern alone finds nothing that was never logged
    with pytest.raises(NotFoundError, match=r"^unknown run 'team-a-9'$"):
        queries.ensure_run("team-a-9", ONLY_A)
    assert [a.agent for a in queries.agents("team-a-1", seen=ONLY_A)] == ["root", "w"]


# --- the list endpoint ---------------------------------------------------------------------


def test_each_user_lists_exactly_their_teams_runs(world: World) -> None:
    listed = {name: [r["run"] for r in _get(_client(world, name), "/api/runs")[1]] for name in SEES}
    assert listed == SEES


def test_a_members_read_token_lists_only_their_teams_runs(world: World) -> None:
    from dashboard.models import ApiToken

    _, raw = ApiToken.issue(world.people["ann"], "ann's script", scope=Scope.READ)
    response = Client().get("/api/runs", headers={"Authorization": f"Bearer {raw}"})
    (run,) = response.json()
    # team-a-1: root and w, one commit, the failed tool call an error
    assert (run["run"], run["agents"], run["events"], run["commits"], run["errors"]) == (
        "team-a-1",
        2,
        4,
        1,
        1,
    )


# --- every endpoint of a run ---------------------------------------------------------------


API_ROUTES = run_routes("api/")


def test_the_walk_finds_every_runs_endpoint() -> None:
    # The walk reads the URL map; these are among the endpoints docs/api.md names today.
    for known in ("commit-rate", "stalls", "error-rate", "agents", "quarantine", "sources"):
        assert f"/api/runs/{{run}}/{known}" in API_ROUTES


def test_another_teams_run_is_answered_as_one_that_does_not_exist(world: World) -> None:
    ann = _client(world, "ann")
    for route in API_ROUTES:
        hidden, missing = route.format(run="team-b-1"), route.format(run="team-b-404")
        assert _get(ann, hidden) == (404, {"detail": "unknown run 'team-b-1'"}), hidden
        assert _get(ann, missing) == (404, {"detail": "unknown run 'team-b-404'"}), missing
        assert ann.get(route.format(run="team-a-1")).status_code == 200, route


def test_members_and_all_teams_users_reach_their_runs_and_no_one_else_does(
    world: World,
) -> None:
    clients = {name: _client(world, name) for name in SEES}
    for route in API_ROUTES:
        for run in RUNS:
            path = route.format(run=run)
            reached = sorted(n for n, c in clients.items() if c.get(path).status_code == 200)
            seers = sorted(n for n, runs in SEES.items() if run in runs)
            assert reached == seers, path


def test_a_source_pattern_team_sees_the_agents_of_its_files_runs(world: World) -> None:
    code, agents = _get(_client(world, "ivy"), "/api/runs/other-1/agents")
    assert code == 200
    assert [(a["agent"], a["parent"], a["events"], a["commits"]) for a in agents] == [
        ("root", None, 1, 0),
        ("w", "root", 2, 1),
    ]


# --- quarantined lines by source -----------------------------------------------------------


def _raws(body: dict[str, Any]) -> list[str]:
    return sorted(line["raw"] for line in body["lines"])


NOT_JSON_A = "this line of a is not json"
NOT_JSON_B = "this line of b is not json"
NAMES_B = '{"ts":"yesterday","run":"team-b-1","agent":"w","event":"spawn"}'


def test_the_quarantine_by_source_lists_only_lines_of_runs_the_user_sees(world: World) -> None:
    expected = {
        "ann": [NOT_JSON_A],  # not the line naming team-b-1, though it is in a's file
        "ben": [NOT_JSON_B, NAMES_B],
        "ivy": [],  # infra's file quarantined nothing
        "nel": [],
        "tia": [NOT_JSON_A, NOT_JSON_B, NAMES_B],
        "ada": [NOT_JSON_A, NOT_JSON_B, NAMES_B],
    }
    listed = {}
    for name in expected:
        code, body = _get(_client(world, name), "/api/quarantine")
        assert code == 200 and body["total"] == len(body["lines"])
        listed[name] = _raws(body)
    assert listed == expected


def test_a_source_of_another_team_has_no_lines_for_an_outsider(world: World) -> None:
    ann, ben = _client(world, "ann"), _client(world, "ben")
    b_file, a_file = world.file("b"), world.file("a")
    assert _get(ann, f"/api/quarantine?source={b_file}")[1]["total"] == 0
    assert _raws(_get(ann, f"/api/quarantine?source={a_file}")[1]) == [NOT_JSON_A]
    assert _raws(_get(ben, f"/api/quarantine?source={a_file}")[1]) == [NAMES_B]
    assert _raws(_get(ben, "/api/runs/team-b-1/quarantine")[1]) == [NOT_JSON_B, NAMES_B]
