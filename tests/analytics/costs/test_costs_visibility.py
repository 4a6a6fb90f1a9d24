"""Costs cover only what the caller sees: GET /api/costs/daily for a member of team A, of
team B, of both, of no team and for an all-teams user, to the cent (the figures are worked
out in tests/analytics/costs/two_teams.py's docstring); a team's report recipients get only
that team's report; `cost_report --team`; and only editors may add prices."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import orjson
import pytest
from django.core.management import CommandError, call_command
from django.test import Client, RequestFactory

from analytics.access.visibility import seen_for_team
from analytics.costs.api import PriceIn
from analytics.costs.api import save as save_prices
from analytics.costs.models import ModelPrice, RecipientKind, ReportDelivery, ReportRecipient
from analytics.costs.report import build_daily_report
from analytics.costs.report_delivery import deliver_report
from dashboard.models import ApiToken
from lib.access import Role, Scope, Seen
from lib.errors import ForbiddenError
from tests.analytics.costs.two_teams import (
    DAY,
    TwoTeams,
    load_two_teams,
    make_user,
    webhook_receiver,
)

pytestmark = pytest.mark.usefixtures("lake")


@pytest.fixture
def teams(db: None) -> TwoTeams:
    return load_two_teams()


def daily_for(user: Any) -> dict[str, Any]:
    client = Client()
    client.force_login(user)
    response = client.get(f"/api/costs/daily?date={DAY}")
    assert response.status_code == 200
    return response.json()


def runs(answer: dict[str, Any]) -> list[tuple[str, float]]:
    return [(r["run"], r["usd"]) for r in answer["by_run"]]


def test_a_member_of_team_a_sees_only_team_a_spend_and_gpus(teams, django_user_model) -> None:
    answer = daily_for(make_user(django_user_model, "ann", teams=(teams.a,)))
    # $2.25 + $0.50 of API calls, $48 for gpu-a's day; the day before alpha-1 cost $1.00.
    assert (answer["api_usd"], answer["gpu_usd"], answer["total_usd"]) == (2.75, 48.0, 50.75)
    assert answer["calls"] == 2
    assert runs(answer) == [("alpha-1", 2.25), ("alpha-2", 0.5)]
    [model] = answer["by_model"]
    assert (model["model"], model["calls"], model["input_tokens"], model["output_tokens"]) == (
        "gpt-5",
        2,
        1_400_000,
        100_000,
    )
    assert answer["by_team"] == [{"team": "A", "usd": 2.75, "daily_budget_usd": 5.0}]
    assert [g["target"] for g in answer["gpu"]] == ["gpu-a"]
    assert (answer["previous_day_usd"], answer["change_usd"], answer["change_pct"]) == (
        1.0,
        1.75,
        175.0,
    )
    assert answer["trend"][-1] == {"date": "2026-01-13", "usd": 1.0}
    assert answer["mean_7d_usd"] == pytest.approx(1 / 7, abs=1e-8)


def test_a_member_of_team_b_sees_only_team_b_spend(teams, django_user_model) -> None:
    answer = daily_for(make_user(django_user_model, "bob", teams=(teams.b,)))
    # $4.50 of API calls, 2 GPUs x $0.50 x 24 h = $24; the day before $2.00.
    assert (answer["api_usd"], answer["gpu_usd"], answer["total_usd"]) == (4.5, 24.0, 28.5)
    assert runs(answer) == [("beta-1", 4.5)]
    assert answer["by_team"] == [{"team": "B", "usd": 4.5, "daily_budget_usd": None}]
    assert [g["target"] for g in answer["gpu"]] == ["gpu-b"]
    assert (answer["previous_day_usd"], answer["change_pct"]) == (2.0, 125.0)


def test_a_member_of_both_teams_sees_both_but_not_the_run_of_no_team(
    teams, django_user_model
) -> None:
    answer = daily_for(make_user(django_user_model, "cat", teams=(teams.a, teams.b)))
    assert (answer["api_usd"], answer["gpu_usd"], answer["total_usd"]) == (7.25, 72.0, 79.25)
    assert runs(answer) == [("beta-1", 4.5), ("alpha-1", 2.25), ("alpha-2", 0.5)]
    assert [t["team"] for t in answer["by_team"]] == ["A", "B"]


def test_a_user_in_no_team_sees_no_spend_at_all(teams, django_user_model) -> None:
    answer = daily_for(make_user(django_user_model, "nia"))
    assert (answer["api_usd"], answer["gpu_usd"], answer["total_usd"], answer["calls"]) == (
        0.0,
        0.0,
        0.0,
        0,
    )
    assert (answer["by_model"], answer["by_run"], answer["by_team"], answer["gpu"]) == (
        [],
        [],
        [],
        [],
    )
    assert (answer["previous_day_usd"], answer["change_pct"], answer["mean_7d_usd"]) == (
        0.0,
        None,
        0.0,
    )
    assert {p["usd"] for p in answer["trend"]} == {0.0}


def test_an_all_teams_user_sees_every_team_and_the_run_of_no_team(teams, django_user_model) -> None:
    answer = daily_for(make_user(django_user_model, "val", all_teams=True))
    # $2.25 + $0.50 + $4.50 + $0.10; GPUs $48 + $24; the day before $1.00 + $2.00.
    assert (answer["api_usd"], answer["gpu_usd"], answer["total_usd"]) == (7.35, 72.0, 79.35)
    assert runs(answer) == [("beta-1", 4.5), ("alpha-1", 2.25), ("alpha-2", 0.5), ("solo", 0.1)]
    assert answer["by_team"] == [
        {"team": "A", "usd": 2.75, "daily_budget_usd": 5.0},
        {"team": "B", "usd": 4.5, "daily_budget_usd": None},
    ]
    assert (answer["previous_day_usd"], answer["change_pct"]) == (3.0, 145.0)


def test_a_token_answers_for_its_users_teams(teams, django_user_model) -> None:
    _, raw = ApiToken.issue(make_user(django_user_model, "bob", teams=(teams.b,)), "t", Scope.READ)
    answer = Client().get(f"/api/costs/daily?date={DAY}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert runs(answer.json()) == [("beta-1", 4.5)]


def test_a_teams_report_recipient_gets_only_that_teams_report(teams, mailoutbox) -> None:
    ReportRecipient.objects.create(kind=RecipientKind.EMAIL, target="b@example.com", team=teams.b)
    ReportRecipient.objects.create(kind=RecipientKind.EMAIL, target="ops@example.com")
    with webhook_receiver() as (url, bodies):
        ReportRecipient.objects.create(kind=RecipientKind.WEBHOOK, target=url, team=teams.a)
        outcome = deliver_report(DAY, seen_for_team=seen_for_team)
    assert (outcome.sent, outcome.failed) == (3, 0)
    [body] = bodies
    text = orjson.loads(body)["text"]
    assert text.startswith(
        "Fleetscope costs of team A for 2026-01-14 (UTC): $50.75 (API $2.75, GPUs $48.00)"
    )
    assert "run alpha-1: $2.25" in text and "run alpha-2: $0.50" in text
    assert "beta" not in text and "solo" not in text
    by_address = {m.to[0]: m for m in mailoutbox}
    team_b = by_address["b@example.com"]
    assert team_b.subject == "Fleetscope cost report of team B 2026-01-14: $28.50"
    assert team_b.body.startswith("Fleetscope costs of team B for 2026-01-14 (UTC): $28.50")
    [(name, csv_text, _)] = team_b.attachments
    assert name == "fleetscope-costs-2026-01-14.csv"
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert [r[1] for r in rows if r[0] == "run"] == ["beta-1"]
    assert [r[1] for r in rows if r[0] == "team"] == ["B"]
    assert [r[1] for r in rows if r[0] == "gpu"] == ["gpu-b"]
    assert "alpha" not in csv_text and "solo" not in csv_text
    assert "alpha" not in team_b.alternatives[0][0]
    fleet = by_address["ops@example.com"]
    assert fleet.subject == "Fleetscope cost report 2026-01-14: $79.35"
    assert ReportDelivery.objects.filter(ok=True).count() == 3


def test_a_team_report_equals_what_a_member_of_only_that_team_sees(
    teams, django_user_model
) -> None:
    report = build_daily_report(DAY, seen=seen_for_team(teams.a))
    member = daily_for(make_user(django_user_model, "ann", teams=(teams.a,)))
    assert (report.total_usd, [(r.run, r.usd) for r in report.by_run]) == (
        member["total_usd"],
        runs(member),
    )


def test_the_cost_report_command_prints_the_fleet_or_one_team(teams) -> None:
    fleet, team_a = io.StringIO(), io.StringIO()
    call_command("cost_report", "--date", str(DAY), stdout=fleet)
    call_command("cost_report", "--date", str(DAY), "--team", "A", stdout=team_a)
    assert orjson.loads(fleet.getvalue())["total_usd"] == 79.35
    answer = orjson.loads(team_a.getvalue())
    assert (answer["total_usd"], runs(answer)) == (50.75, [("alpha-1", 2.25), ("alpha-2", 0.5)])
    with pytest.raises(CommandError, match="no team named 'Nope'"):
        call_command("cost_report", "--date", str(DAY), "--team", "Nope")


PRICE = [{"model": "acme-1", "input_per_mtok": 2, "output_per_mtok": 8, "valid_from": "2026-01-01"}]


def post_prices(client: Client, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post(
        "/api/prices", orjson.dumps(PRICE), content_type="application/json", headers=headers
    )


def test_a_viewer_may_not_add_prices_by_session_or_token(teams, django_user_model) -> None:
    viewer = make_user(django_user_model, "vic", role="viewer", all_teams=True)
    before = ModelPrice.objects.count()
    session = Client()
    session.force_login(viewer)
    by_session = post_prices(session)
    _, raw = ApiToken.issue(viewer, "t", Scope.ADMIN)
    by_token = post_prices(Client(), raw)
    for answer in (by_session, by_token):
        assert answer.status_code == 403
        assert answer["Content-Type"].startswith("application/json")
        assert answer.json() == {
            "detail": "your role is viewer: it may read, not change or send data"
        }
    assert ModelPrice.objects.count() == before
    assert not ModelPrice.objects.filter(model="acme-1").exists()


def test_an_editor_adds_prices_but_not_with_a_read_token(teams, django_user_model) -> None:
    editor = make_user(django_user_model, "eve", role="editor", teams=(teams.a,))
    _, read = ApiToken.issue(editor, "r", Scope.READ)
    refused = post_prices(Client(), read)
    assert refused.status_code == 403 and not ModelPrice.objects.filter(model="acme-1").exists()
    session = Client()
    session.force_login(editor)
    answer = post_prices(session)
    assert (answer.status_code, answer.json()) == (200, {"saved": 1})
    [price] = ModelPrice.objects.filter(model="acme-1")
    assert (price.input_per_mtok, price.output_per_mtok) == (Decimal(2), Decimal(8))


class Viewer:
    seen = Seen.all()
    role = Role.VIEWER


def test_the_prices_handler_itself_refuses_a_viewer(teams) -> None:
    request = RequestFactory().post("/api/prices")
    request.access = Viewer()  # type: ignore[attr-defined]
    with pytest.raises(ForbiddenError, match="this needs the editor role"):
        save_prices(request, [PriceIn.model_validate(PRICE[0])])
    assert not ModelPrice.objects.filter(model="acme-1").exists()
