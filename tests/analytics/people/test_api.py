"""GET /api/people and GET /api/people/{person} through the test client: exact figures
(tests/analytics/people/world.py), 401, 404, 422, and each user seeing only the people and
sessions of their teams (a run belongs to the team its telemetry names)."""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.costs.models import Team
from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB
from tests.people import grant

WINDOW = "start=2026-03-10T00:00:00Z&end=2026-03-12T00:00:00Z"


@pytest.fixture
def clients(settings: Any, tmp_path: Path, lake: Path, db: None) -> dict[str, Client]:
    settings.DATA_DIR = tmp_path
    world.build()
    infra = Team.objects.create(name="infra")
    web = Team.objects.create(name="web")
    users = {
        "ivy": grant(User.objects.create_user("ivy", "ivy@example.com", "pw"), "viewer", (infra,)),
        "wes": grant(User.objects.create_user("wes", "wes@example.com", "pw"), "viewer", (web,)),
        "ada": grant(User.objects.create_user("ada", "ada@example.com", "pw"), "admin"),
    }
    answer = {}
    for name, user in users.items():
        answer[name] = Client()
        answer[name].force_login(user)
    return answer


def _people(client: Client, query: str = WINDOW) -> list[tuple[str, str, int]]:
    response = client.get(f"/api/people?{query}")
    assert response.status_code == 200
    return [(p["person"], p["team"], p["sessions"]) for p in response.json()["people"]]


def test_each_user_sees_the_people_of_their_teams(clients: dict[str, Client]) -> None:
    assert _people(clients["ivy"]) == [(ANN, "infra", 3)]
    assert _people(clients["wes"]) == [(BOB, "web", 1)]
    assert _people(clients["ada"]) == [(ANN, "infra", 3), (BOB, "web", 1)]
    assert _people(clients["ada"], f"{WINDOW}&team=web") == [(BOB, "web", 1)]


def test_a_team_member_sees_their_teams_otlp_sessions_on_the_runs_list(
    clients: dict[str, Client],
) -> None:
    def runs(name: str) -> list[str]:
        return sorted(r["run"] for r in clients[name].get("/api/runs").json())

    assert runs("ivy") == ["s-ann-1", "s-ann-2"]
    assert runs("wes") == ["s-bob-1"]
    assert clients["wes"].get("/api/runs/s-ann-1/agents").status_code == 404


def test_the_people_answer_holds_every_figure(clients: dict[str, Client]) -> None:
    body = clients["ada"].get(f"/api/people?{WINDOW}").json()
    assert (body["start"], body["end"]) == ("2026-03-10T00:00:00Z", "2026-03-12T00:00:00Z")
    bob = body["people"][1]
    assert bob == {
        "person": BOB,
        "team": "web",
        "sessions": 1,
        "active_seconds": 45.0,
        "cost_usd": 0.02,
        "input_tokens": 500,
        "output_tokens": 50,
        "commits": 1,
        "lines_added": 0,
        "lines_removed": 0,
        "edits_accepted": 0,
        "edits_rejected": 0,
        "edit_acceptance": None,
        "days": [
            {
                "date": "2026-03-10",
                "sessions": 1,
                "active_seconds": 45.0,
                "cost_usd": 0.02,
                "input_tokens": 500,
                "output_tokens": 50,
                "commits": 1,
                "lines_added": 0,
                "lines_removed": 0,
                "edits_accepted": 0,
                "edits_rejected": 0,
                "edit_acceptance": None,
            }
        ],
    }
    assert [(t["team"], t["people"], t["cost_usd"]) for t in body["teams"]] == [
        ("infra", 1, 0.0675),
        ("web", 1, 0.02),
    ]


def test_a_persons_page_of_the_api_lists_their_sessions(clients: dict[str, Client]) -> None:
    response = clients["ivy"].get(f"/api/people/{ANN}?{WINDOW}")
    assert response.status_code == 200
    body = response.json()
    assert (body["person"], body["team"], body["edit_acceptance"]) == (ANN, "infra", 0.75)
    assert body["sessions"][2] == {
        "session": "s-ann-1",
        "team": "infra",
        "first_ts": "2026-03-10T09:00:00Z",
        "last_ts": "2026-03-10T09:10:00Z",  # its last event
        "events": 3,
        "input_tokens": 3000,
        "output_tokens": 300,
        "commits": 1,
        "cost_usd": 0.0575,
    }
    assert [s["session"] for s in body["sessions"]] == ["s-ann-3", "s-ann-2", "s-ann-1"]


def test_someone_elses_person_is_not_found(clients: dict[str, Client]) -> None:
    assert clients["ivy"].get(f"/api/people/{BOB}?{WINDOW}").status_code == 404
    assert clients["ada"].get(f"/api/people/nobody@example.com?{WINDOW}").status_code == 404


def test_bad_parameters_and_missing_credentials(clients: dict[str, Client]) -> None:
    assert clients["ada"].get("/api/people?start=yesterday").status_code == 422
    assert clients["ada"].get(f"/api/people?{WINDOW}&team=").status_code == 422
    assert Client().get("/api/people").status_code == 401
