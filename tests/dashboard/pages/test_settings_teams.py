"""Settings > Teams: created with patterns (one a line), a budget and members; edited
(members added and removed); deleted by POST; what a member then sees follows."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.access.models import Access
from analytics.access.visibility import seen_for_user
from analytics.costs.models import Team
from tests.people import grant

pytestmark = pytest.mark.django_db


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_creating_a_team_with_patterns_budget_and_members(user: User) -> None:
    bob = grant(User.objects.create_user("bob", password="a-long-bob-password"), "viewer")
    form = {"name": "infra", "run_patterns": "infra-*\n\n  db-2  \n",
            "source_patterns": "/logs/infra/*", "daily_budget_usd": "40.00",
            "members": [bob.pk]}  # fmt: skip
    assert _client(user).post("/settings/teams/", form).status_code == 302
    team = Team.objects.get(name="infra")
    assert team.run_patterns == ["infra-*", "db-2"]
    assert team.source_patterns == ["/logs/infra/*"]
    assert team.daily_budget_usd == Decimal("40.00")
    assert list(Access.objects.get(user=bob).teams.all()) == [team]
    assert seen_for_user(bob).run_patterns == ("db-2", "infra-*")


def test_the_list_shows_patterns_budget_and_members(user: User) -> None:
    team = Team.objects.create(name="infra", run_patterns=["infra-*"], daily_budget_usd=12)
    grant(User.objects.create_user("bob", password="a-long-bob-password"), "viewer", (team,))
    page = _client(user).get("/settings/teams/").content.decode()
    row = page.split('data-team="infra"')[1].split("</tr>")[0]
    assert "<code>infra-*</code>" in row and "12.00" in row and "<td>bob</td>" in row


def test_editing_members_adds_and_removes(user: User) -> None:
    team = Team.objects.create(name="infra")
    bob = grant(User.objects.create_user("bob", password="a-long-bob-password"), "viewer", (team,))
    carol = User.objects.create_user("carol", password="a-long-carol-password")
    form = {"name": "platform", "run_patterns": "p-*", "members": [carol.pk]}
    response = _client(user).post(f"/settings/teams/{team.pk}/", form)
    assert response.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.run_patterns) == ("platform", ["p-*"])
    assert list(Access.objects.get(user=bob).teams.all()) == []
    assert list(Access.objects.get(user=carol).teams.all()) == [team]
    assert Access.objects.get(user=carol).role == "viewer"  # a new member reads only


def test_a_duplicate_name_and_a_negative_budget_are_refused(user: User) -> None:
    Team.objects.create(name="infra")
    response = _client(user).post("/settings/teams/", {"name": "infra", "daily_budget_usd": "-1"})
    page = response.content.decode()
    assert response.status_code == 422
    assert "Team with this Name already exists." in page
    assert "Ensure this value is greater than or equal to 0." in page


def test_deleting_a_team(user: User) -> None:
    team = Team.objects.create(name="infra")
    client = _client(user)
    assert client.get(f"/settings/teams/{team.pk}/delete/").status_code == 405
    assert client.post(f"/settings/teams/{team.pk}/delete/").status_code == 302
    assert not Team.objects.filter(pk=team.pk).exists()
    assert client.post(f"/settings/teams/{team.pk}/delete/").status_code == 404
