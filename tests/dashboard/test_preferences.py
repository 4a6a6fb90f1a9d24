"""The display time zone: stored on the user by a POST with CSRF, read back on every page."""

from typing import Any

import pytest
from django.test import Client

from dashboard.models import DisplayZone, Preference

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in(user: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def csrf(client: Client) -> str:
    client.get("/accounts/login/")
    return str(client.cookies["csrftoken"].value)


def test_choosing_the_browser_zone_is_kept_and_returns_to_the_page(
    client_in: Client, user: Any
) -> None:
    token = csrf(client_in)
    answer = client_in.post(
        "/preferences/time-zone/",
        {"time_zone": "browser", "next": "/runs/tiny/?last=6h", "csrfmiddlewaretoken": token},
    )
    assert answer.status_code == 302
    assert answer["Location"] == "/runs/tiny/?last=6h"
    assert Preference.objects.get(user=user).time_zone == DisplayZone.BROWSER

    client_in.post("/preferences/time-zone/", {"time_zone": "utc", "csrfmiddlewaretoken": token})
    assert list(Preference.objects.values_list("time_zone", flat=True)) == ["utc"]


def test_pages_carry_the_choice_and_the_toggle_shows_it(client_in: Client, user: Any) -> None:
    page = client_in.get("/accounts/login/").content.decode()
    assert '<html lang="en" data-time-zone="utc">' in page
    assert 'value="utc" title="Show times in UTC" aria-pressed="true"' in page
    Preference.objects.create(user=user, time_zone=DisplayZone.BROWSER)
    page = client_in.get("/accounts/login/").content.decode()
    assert '<html lang="en" data-time-zone="browser">' in page
    assert 'aria-pressed="true">Local</button>' in page


def test_without_csrf_or_with_a_bad_choice_nothing_is_stored(client_in: Client) -> None:
    assert client_in.post("/preferences/time-zone/", {"time_zone": "browser"}).status_code == 403
    token = csrf(client_in)
    bad = client_in.post(
        "/preferences/time-zone/", {"time_zone": "Mars/Olympus", "csrfmiddlewaretoken": token}
    )
    assert bad.status_code == 400
    assert bad.content.decode() == "time_zone must be utc or browser, got 'Mars/Olympus'\n"
    assert not Preference.objects.exists()


def test_a_next_elsewhere_goes_home_and_a_get_or_a_stranger_is_refused(
    client_in: Client,
) -> None:
    token = csrf(client_in)
    answer = client_in.post(
        "/preferences/time-zone/",
        {"time_zone": "utc", "next": "https://evil.example/", "csrfmiddlewaretoken": token},
    )
    assert answer["Location"] == "/"
    assert client_in.get("/preferences/time-zone/").status_code == 405
    stranger = Client()
    refused = stranger.post("/preferences/time-zone/", {"time_zone": "utc"})
    assert refused.status_code == 302
    assert refused["Location"].startswith("/accounts/login/")
