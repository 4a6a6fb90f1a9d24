"""Settings > Users and the admin-only guard: editors and viewers get the 403 page on every
admin section (and cannot POST to them), the list shows role, teams and flags, a user is
created with each password problem shown, edited, and the last admin cannot demote or
deactivate themselves."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.access.models import Access
from analytics.costs.models import Team
from tests.people import grant

pytestmark = pytest.mark.django_db
ADMIN_PAGES = ["/settings/users/", "/settings/teams/", "/settings/audit/"]


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("role", ["editor", "viewer"])
def test_admin_sections_are_403_for_others(role: str) -> None:
    other = grant(User.objects.create_user("eve", password="a-long-eve-password"), role)
    client = _client(other)
    for path in ADMIN_PAGES:
        response = client.get(path)
        assert response.status_code == 403, path
        assert "This settings page is for admins." in response.content.decode()
    team = Team.objects.create(name="infra")
    assert client.post("/settings/teams/", {"name": "mine"}).status_code == 403
    assert client.post(f"/settings/teams/{team.pk}/delete/").status_code == 403
    assert client.post(f"/settings/users/{other.pk}/", {"role": "admin"}).status_code == 403
    assert Team.objects.filter(name="mine").count() == 0 and Team.objects.count() == 1
    assert Access.objects.get(user=other).role == role


def test_the_settings_nav_shows_what_the_role_reaches(user: User) -> None:
    editor = grant(User.objects.create_user("ed", password="a-long-editor-password"), "editor")
    ed_page = _client(editor).get("/settings/tokens/").content.decode()
    assert '<a href="/settings/" class="active">Settings</a>' in ed_page
    assert "/settings/users/" not in ed_page
    admin_page = _client(user).get("/settings/tokens/").content.decode()
    for path in ADMIN_PAGES:
        assert f'href="{path}"' in admin_page
    assert Client().get("/settings/tokens/").status_code == 302  # to the login


def test_the_list_shows_roles_teams_and_flags(user: User) -> None:
    infra = Team.objects.create(name="infra")
    web = Team.objects.create(name="web")
    grant(User.objects.create_user("bob", password="a-long-bob-password"), "editor", (web, infra))
    carol = User.objects.create_user("carol", password="a-long-carol-password", is_active=False)
    grant(carol, "viewer", all_teams=True)
    page = _client(user).get("/settings/users/").content.decode()
    bob_row = page.split('data-user="bob"')[1].split("</tr>")[0]
    assert "<td>editor</td>" in bob_row and "<td>infra, web</td>" in bob_row
    assert "<td>no</td>" in bob_row and "never" in bob_row
    carol_row = page.split('data-user="carol"')[1].split("</tr>")[0]
    assert (
        "<td>viewer</td>" in carol_row and "inactive" in carol_row and "<td>yes</td>" in carol_row
    )


def test_creating_a_user_with_a_role_and_teams(user: User) -> None:
    infra = Team.objects.create(name="infra")
    form = {"username": "dora", "email": "dora@example.com", "password": "tangerine-kite-42",
            "role": "editor", "teams": [infra.pk]}  # fmt: skip
    assert _client(user).post("/settings/users/", form).status_code == 302
    dora = User.objects.get(username="dora")
    assert dora.check_password("tangerine-kite-42") and dora.email == "dora@example.com"
    access = Access.objects.get(user=dora)
    assert (access.role, access.all_teams, list(access.teams.all())) == ("editor", False, [infra])


def test_each_password_problem_is_shown(user: User, settings: object) -> None:
    settings.AUTH_PASSWORD_VALIDATORS = [  # type: ignore[attr-defined]
        {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
        {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    ]
    form = {"username": "dora", "password": "1234", "role": "viewer"}
    response = _client(user).post("/settings/users/", form)
    page = response.content.decode()
    assert response.status_code == 422
    assert "This password is too short. It must contain at least 8 characters." in page
    assert "This password is entirely numeric." in page
    assert "<li>Your password must contain at least 8 characters.</li>" in page  # the rules
    assert not User.objects.filter(username="dora").exists()


def test_a_taken_username_is_refused(user: User) -> None:
    form = {"username": "Alice", "password": "tangerine-kite-42", "role": "viewer"}
    response = _client(user).post("/settings/users/", form)
    assert (
        response.status_code == 422
        and "a user named Alice already exists" in response.content.decode()
    )


def test_editing_role_teams_flag_and_active(user: User) -> None:
    infra = Team.objects.create(name="infra")
    bob = grant(User.objects.create_user("bob", password="a-long-bob-password"), "viewer")
    form = {"email": "bob@example.com", "role": "editor", "teams": [infra.pk], "all_teams": "on"}
    assert _client(user).post(f"/settings/users/{bob.pk}/", form).status_code == 302
    bob.refresh_from_db()
    access = Access.objects.get(user=bob)
    assert (bob.email, bob.is_active) == ("bob@example.com", False)  # "Active" left unticked
    assert (access.role, access.all_teams, list(access.teams.all())) == ("editor", True, [infra])


def test_the_last_admin_cannot_demote_or_deactivate_themselves(user: User) -> None:
    client = _client(user)
    for form in ({"role": "editor", "is_active": "on"}, {"role": "admin"}):
        response = client.post(f"/settings/users/{user.pk}/", form)
        assert response.status_code == 422
        assert (
            "alice is the last active admin: make another admin first" in response.content.decode()
        )
    assert Access.objects.get(user=user).role == "admin"
    user.refresh_from_db()
    assert user.is_active
    grant(User.objects.create_user("root2", password="a-long-root2-password"), "admin")
    ok = client.post(f"/settings/users/{user.pk}/", {"role": "editor", "is_active": "on"})
    assert ok.status_code == 302 and Access.objects.get(user=user).role == "editor"


def test_an_unknown_user_is_404(user: User) -> None:
    assert _client(user).get("/settings/users/9999/").status_code == 404
