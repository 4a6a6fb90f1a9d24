"""The Tokens page as members of different teams see it: traffic and mismatches of their
own requests only, an empty state that says why for a user in no team, and the same
parallel-text tax for everyone (the requests are tests/analytics/tokens'
team_traffic.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.analytics.costs.two_teams import TwoTeams, make_user
from tests.analytics.tokens.team_traffic import load_team_traffic

pytestmark = pytest.mark.usefixtures("lake")


@pytest.fixture
def traffic(db: None) -> TwoTeams:
    return load_team_traffic()


def page_of(user: Any, path: str = "/tokens/?corpus=shipped") -> Any:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response


def test_a_member_of_team_b_sees_its_mismatch_and_not_team_as_requests(
    traffic: TwoTeams,
    django_user_model: Any,
) -> None:
    response = page_of(make_user(django_user_model, "bob", teams=(traffic.b,)))
    html = response.content.decode()
    assert response.context["traffic"].requests == 1
    assert [r["language"] for r in response.context["traffic_rows"]] == ["en"]
    assert (response.context["compared"], response.context["mismatched"]) == (1, 1)
    assert [m.request_id for m in response.context["mismatches"]] == ["b-run"]
    assert "b-run" in html and "a-run" not in html and "a-instance" not in html


def test_a_member_of_team_a_sees_two_requests_and_no_mismatch(
    traffic: TwoTeams,
    django_user_model: Any,
) -> None:
    response = page_of(make_user(django_user_model, "ann", teams=(traffic.a,)))
    assert response.context["traffic"].requests == 2
    assert sorted(r["language"] for r in response.context["traffic_rows"]) == ["en", "ta"]
    assert response.context["mismatches"] == []
    assert "b-run" not in response.content.decode()


def test_a_user_in_no_team_sees_the_tax_but_no_traffic_and_why(
    traffic: TwoTeams,
    django_user_model: Any,
) -> None:
    nobody = page_of(make_user(django_user_model, "nia"))
    everyone = page_of(make_user(django_user_model, "val", all_teams=True))
    html = nobody.content.decode()
    assert nobody.context["traffic"].requests == 0
    assert "You are in no team, so no team's requests are shown here" in html
    assert nobody.context["tax_rows"] == everyone.context["tax_rows"] != []
    assert everyone.context["traffic"].requests == 4
    assert "You are in no team" not in everyone.content.decode()


def test_the_traffic_chart_draws_only_the_users_requests(
    traffic: TwoTeams,
    django_user_model: Any,
) -> None:
    bob = make_user(django_user_model, "bob", teams=(traffic.b,))
    figure = page_of(bob, "/tokens/charts/traffic.json").json()
    assert [trace["x"] for trace in figure["data"]] == [["English"]] * 3
