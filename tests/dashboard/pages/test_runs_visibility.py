"""The runs pages and Overview show each user their teams' runs and instances only; every
page of a run walked as an outsider (tests/analytics/runs/teams_world.py says who is who)."""

import re
from pathlib import Path

import orjson
import pytest
from django.test import Client

from tests.analytics.runs.teams_world import RUNS, World, build_world, run_routes

SEES = {
    "ann": {"team-a-1"},
    "ben": {"team-b-1"},
    "ivy": {"other-1"},
    "nel": set(),
    "tia": set(RUNS),
    "ada": set(RUNS),
}
NO_TEAM = "You are in no team yet"
RUN_LINK = re.compile(r'href="/runs/([^"/]+)/"')
PAGE_ROUTES = run_routes("runs/")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


@pytest.fixture
def world(lake: Path, db: None, tmp_path: Path) -> World:
    return build_world(tmp_path)


def _client(world: World, name: str) -> Client:
    client = Client()
    client.force_login(world.people[name])
    return client


def _page(content: bytes) -> str:
    """The page's text without its per-response CSRF token."""
    return CSRF.sub("", content.decode())


def _linked_runs(client: Client, path: str) -> set[str]:
    response = client.get(path)
    assert response.status_code == 200
    return set(RUN_LINK.findall(response.content.decode()))


def test_the_runs_list_and_its_table_show_each_user_their_teams_runs(world: World) -> None:
    for name, runs in SEES.items():
        client = _client(world, name)
        assert _linked_runs(client, "/") == runs, name
        assert _linked_runs(client, "/?fragment=table") == runs, name


def test_a_user_in_no_team_is_told_to_ask_an_admin(world: World) -> None:
    html = _client(world, "nel").get("/").content.decode()
    assert NO_TEAM in html and "/settings/" in html and "No runs yet" not in html
    table = _client(world, "nel").get("/?fragment=table").content.decode()
    assert NO_TEAM in table
    overview = _client(world, "nel").get("/overview/")
    assert overview.status_code == 200 and NO_TEAM in overview.content.decode()
    # a user who sees everything, with no team, is not told so
    assert NO_TEAM not in _client(world, "ada").get("/").content.decode()


def test_the_walk_finds_every_page_of_a_run() -> None:
    assert "/runs/{run}/" in PAGE_ROUTES
    assert "/runs/{run}/charts/commit-rate.json" in PAGE_ROUTES
    assert "/runs/{run}/charts/error-rate.json" in PAGE_ROUTES


def test_every_page_of_another_teams_run_is_the_404_of_a_missing_run(world: World) -> None:
    ann = _client(world, "ann")
    for route in PAGE_ROUTES:
        hidden = ann.get(route.format(run="team-b-1"))
        missing = ann.get(route.format(run="team-b-404"))
        assert (hidden.status_code, missing.status_code) == (404, 404), route
        assert _page(hidden.content) == _page(missing.content).replace("team-b-404", "team-b-1"), (
            route
        )
        assert ann.get(route.format(run="team-a-1")).status_code == 200, route
        for fragment in ("summary", "tree"):
            path = route.format(run="team-b-1") + f"?fragment={fragment}"
            assert ann.get(path).status_code == 404, path


def test_every_page_of_a_run_opens_for_those_who_see_it_only(world: World) -> None:
    clients = {name: _client(world, name) for name in SEES}
    for route in PAGE_ROUTES:
        for run in RUNS:
            path = route.format(run=run)
            reached = {n for n, c in clients.items() if c.get(path).status_code == 200}
            assert reached == {n for n, runs in SEES.items() if run in runs}, path


def test_overview_offers_only_the_users_runs_and_instances(world: World) -> None:
    ann = _client(world, "ann")
    html = ann.get("/overview/").content.decode()
    options = set(re.findall(r'<option value="([^"]*)"', html))
    assert {"team-a-1"} <= options and not options & {"team-b-1", "other-1"}
    assert re.search(r'Serving instances</div><div class="value">1<', html)
    assert ann.get("/overview/?run=team-b-1").status_code == 404
    assert ann.get("/overview/?run=team-a-1").status_code == 200
    tia_html = _client(world, "tia").get("/overview/").content.decode()
    assert re.search(r'Serving instances</div><div class="value">2<', tia_html)


def test_overview_chart_draws_only_the_users_instances_and_hides_other_runs(
    world: World,
) -> None:
    ann = _client(world, "ann")
    hidden = ann.get("/overview/chart.json?run=team-b-1")
    assert (hidden.status_code, hidden.json()) == (404, {"detail": "unknown run 'team-b-1'"})
    figure = orjson.loads(ann.get("/overview/chart.json?run=team-a-1&bucket=1m").content)
    names = {trace["name"] for trace in figure["data"]}
    assert "commits" in names
    assert any(n.startswith("gpu-a") for n in names)
    assert not any("gpu-b" in n for n in names)
    everyone = orjson.loads(
        _client(world, "tia").get("/overview/chart.json?run=team-a-1&bucket=1m").content
    )
    assert any(trace["name"].startswith("gpu-b") for trace in everyone["data"])
