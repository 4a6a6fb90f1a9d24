"""ingest/api.py with teams: a sender who does not see every team writes only their teams'
runs and instances; the rest of the body is stored and the refused lines are quarantined
with their position and why. An admin's token writes anything."""

from typing import Any

import orjson
import pytest
from django.test import Client

import warehouse
from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget
from dashboard.models import ApiToken
from lib.access import Scope
from tests.people import grant

EVENTS = "/api/ingest/agent-events"
REQUESTS = "/api/ingest/requests"


def event(run: str, minute: int) -> dict[str, Any]:
    return {
        "ts": f"2026-01-14T10:{minute:02d}:00Z",
        "run": run,
        "agent": "w1",
        "event": "tool_call",
    }


def jsonl(*items: object) -> bytes:
    return b"".join(orjson.dumps(item) + b"\n" for item in items)


@pytest.fixture
def team_a_token(db: None, django_user_model: Any) -> str:
    team = Team.objects.create(name="a", run_patterns=["team-a-*"])
    ScrapeTarget.objects.create(name="gpu-a", url="http://gpu-a:8000/metrics", team=team)
    ScrapeTarget.objects.create(name="gpu-b", url="http://gpu-b:8000/metrics")
    member = grant(django_user_model.objects.create_user("ann"), "editor", teams=(team,))
    return ApiToken.issue(member, "laptop", scope=Scope.INGEST)[1]


def post(client: Client, path: str, body: bytes, token: str) -> Any:
    response = client.post(
        path,
        body,
        content_type="application/x-ndjson",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("events_a", [2, 300])  # inlined in the catalog, and a staged file
def test_a_team_member_stores_their_runs_and_another_teams_lines_are_quarantined(
    client: Client, lake: object, team_a_token: str, events_a: int
) -> None:
    mine = [event("team-a-1", m % 60) | {"id": f"e{m}"} for m in range(events_a)]
    body = jsonl(*mine[:1], event("team-b-1", 5), *mine[1:], event("solo", 7))
    assert post(client, EVENTS, body, team_a_token) == {
        "accepted": events_a,
        "quarantined": 2,
        "duplicates": 0,
    }
    assert warehouse.fetch_all("SELECT DISTINCT run FROM events") == [{"run": "team-a-1"}]
    line_2 = len(jsonl(mine[0]))
    rows = warehouse.fetch_all(
        "SELECT line_no, byte_offset, reason, raw FROM quarantine ORDER BY line_no"
    )
    raw = rows[0].pop("raw")
    assert rows[0] == {
        "line_no": 2,
        "byte_offset": line_2,
        "reason": "run team-b-1 is not one of your teams' runs",
    }
    # The line as sent, with the content key an id-less event is given (content_keys.py).
    assert orjson.loads(raw) == event("team-b-1", 5) | {"id": orjson.loads(raw)["id"]}
    assert rows[1]["line_no"] == events_a + 2
    assert rows[1]["reason"] == "run solo is not one of your teams' runs"
    # Sending it again stores nothing twice and quarantines the same two lines again.
    assert post(client, EVENTS, body, team_a_token)["accepted"] == 0


def test_an_admin_token_writes_every_run(client: Client, lake: object, api_token: str) -> None:
    body = jsonl(event("team-a-1", 1), event("team-b-1", 2))
    assert post(client, EVENTS, body, api_token)["accepted"] == 2


def test_request_records_of_another_team_or_of_no_one_are_quarantined(
    client: Client, lake: object, team_a_token: str
) -> None:
    def record(rid: str, **where: str) -> dict[str, Any]:
        return {
            "ts": "2026-01-14T10:00:00Z",
            "request_id": rid,
            "model": "m",
            "prompt": "hi",
            **where,
        }

    body = jsonl(
        record("r1", run="team-a-1"),
        record("r2", instance="gpu-a"),
        record("r3", run="team-b-1"),
        record("r4", instance="gpu-b"),
        record("r5"),
    )
    assert post(client, REQUESTS, body, team_a_token) == {
        "accepted": 2,
        "quarantined": 3,
        "duplicates": 0,
    }
    reasons = warehouse.fetch_all("SELECT line_no, reason FROM quarantine ORDER BY line_no")
    assert reasons == [
        {"line_no": 3, "reason": "run team-b-1 is not one of your teams' runs"},
        {"line_no": 4, "reason": "instance gpu-b is not one of your teams' instances"},
        {"line_no": 5, "reason": "a record with neither run nor instance needs the all-teams view"},
    ]
