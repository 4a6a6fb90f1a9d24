"""The Costs page, its CSV and its charts as members of different teams see them: a member
of team A sees only A's runs, budget, GPU target and deliveries; a user in no team sees
empty tables and why; an all-teams user sees every team (the figures are worked out in
tests/analytics/costs/two_teams.py)."""

from __future__ import annotations

import csv
import io
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.costs.models import RecipientKind, ReportDelivery, ReportRecipient
from tests.analytics.costs.two_teams import DAY, TwoTeams, load_two_teams, make_user

pytestmark = pytest.mark.usefixtures("lake")


@pytest.fixture
def teams(db: None) -> TwoTeams:
    return load_two_teams()


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_a_members_csv_has_no_run_of_team_b(teams, django_user_model) -> None:
    ann = client_of(make_user(django_user_model, "ann", teams=(teams.a,)))
    text = ann.get(f"/costs/report.csv?date={DAY}").content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert [(r[1], r[7]) for r in rows if r[0] == "run"] == [
        ("alpha-1", "2.250000"),
        ("alpha-2", "0.500000"),
    ]
    assert [r[1] for r in rows if r[0] in ("team", "gpu")] == ["A", "gpu-a"]
    assert ["total", "all", "", "", "", "", "", "50.750000", ""] in rows
    assert "beta" not in text and "solo" not in text and "gpu-b" not in text


def test_an_a_members_charts_stack_only_team_a_runs(teams, django_user_model) -> None:
    ann = client_of(make_user(django_user_model, "ann", teams=(teams.a,)))
    by_run = orjson.loads(ann.get(f"/costs/charts/run.json?date={DAY}").content)
    assert sorted(t["name"] for t in by_run["data"]) == ["alpha-1", "alpha-2"]
    [model] = orjson.loads(ann.get(f"/costs/charts/model.json?date={DAY}").content)["data"]
    # gpt-5 on the 13th: alpha-1's $1.00; on the 14th: $2.25 + $0.50.
    assert model["y"][-2:] == [pytest.approx(1.0), pytest.approx(2.75)]


def test_an_a_member_sees_team_a_on_the_page_and_its_deliveries_only(
    teams, django_user_model
) -> None:
    for kind, target, team in (
        (RecipientKind.EMAIL, "a@example.com", teams.a),
        (RecipientKind.EMAIL, "b@example.com", teams.b),
        (RecipientKind.WEBHOOK, "https://hooks.example/fleet", None),
    ):
        ReportRecipient.objects.create(kind=kind, target=target, team=team)
        ReportDelivery.objects.create(report_date=DAY, kind=kind, target=target, ok=True)
    ann = client_of(make_user(django_user_model, "ann", teams=(teams.a,)))
    answer = ann.get(f"/costs/?date={DAY}")
    html = answer.content.decode()
    assert answer.context["report"].total_usd == 50.75
    assert "$50.75" in html and "alpha-1" in html and "gpu-a" in html
    assert "beta-1" not in html and "solo" not in html and "gpu-b" not in html
    # Team A's $2.75 of its $5.00 budget: 55%.
    assert "55.0%" in html
    assert [d.target for d in answer.context["deliveries"]] == ["a@example.com"]
    assert "b@example.com" not in html and "hooks.example" not in html
    assert "You are in no team" not in html


def test_a_user_in_no_team_sees_empty_tables_and_why(teams, django_user_model) -> None:
    nia = client_of(make_user(django_user_model, "nia"))
    ReportDelivery.objects.create(
        report_date=DAY, kind=RecipientKind.EMAIL, target="ops@example.com", ok=True
    )
    answer = nia.get(f"/costs/?date={DAY}")
    html = answer.content.decode()
    assert answer.status_code == 200
    assert "You are in no team, so no team's spend is shown here." in html
    assert "No model calls on this day." in html and "No runs on this day." in html
    assert "alpha" not in html and "beta" not in html and "gpu-a" not in html
    assert "ops@example.com" not in html and "No report sent yet." in html
    text = nia.get(f"/costs/report.csv?date={DAY}").content.decode()
    assert [r[0] for r in csv.reader(io.StringIO(text))][1:] == ["total"] * 4
    assert orjson.loads(nia.get(f"/costs/charts/run.json?date={DAY}").content)["data"] == []


def test_without_a_day_an_a_member_opens_on_team_as_latest_spend(teams, django_user_model) -> None:
    from ingest.pipelines.agent_events import ingest_body

    late = {
        "ts": "2026-01-16T09:00:00Z",
        "run": "beta-1",
        "agent": "w",
        "event": "llm_call",
        "model": "gpt-5",
        "usage": {"input_tokens": 8_000, "output_tokens": 0},
    }
    ingest_body(orjson.dumps(late) + b"\n")
    ann = client_of(make_user(django_user_model, "ann", teams=(teams.a,)))
    bob = client_of(make_user(django_user_model, "bob", teams=(teams.b,)))
    assert ann.get("/costs/").context["report"].date == "2026-01-14"
    assert bob.get("/costs/").context["report"].date == "2026-01-16"


def test_an_all_teams_user_sees_every_team_and_every_delivery(teams, django_user_model) -> None:
    ReportDelivery.objects.create(
        report_date=DAY, kind=RecipientKind.EMAIL, target="ops@example.com", ok=True
    )
    val = client_of(make_user(django_user_model, "val", all_teams=True))
    answer = val.get(f"/costs/?date={DAY}")
    html = answer.content.decode()
    assert answer.context["report"].total_usd == 79.35
    assert all(name in html for name in ("alpha-1", "alpha-2", "beta-1", "solo", "gpu-b"))
    assert [t.team for t in answer.context["report"].by_team] == ["A", "B"]
    assert "ops@example.com" in html
