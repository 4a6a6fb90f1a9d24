"""Headers and sessions: the Content-Security-Policy on every answer, Secure cookies over
HTTPS (or always, when told), sessions that end FLEETSCOPE_SESSION_HOURS after the login,
Django's password validators, and the API docs behind a login or a token."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import password_validation
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.test import Client

from dashboard.models import ApiToken
from lib.access import Scope
from tests.people import grant

PASSWORD = "a-long-enough-password"
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
EMPTY = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
MAPLIBRE = "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o='"
POLICY = (
    "default-src 'self'; script-src 'self'; "
    f"style-src 'self' {EMPTY} {MAPLIBRE}; style-src-elem 'self' {EMPTY} {MAPLIBRE}; "
    "style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'"
)


@pytest.fixture
def erin(db: None, django_user_model: Any) -> Any:
    return grant(django_user_model.objects.create_user("erin", password=PASSWORD), "viewer")


def test_the_empty_style_hash_is_the_sha256_of_nothing() -> None:
    import base64
    import hashlib

    assert base64.b64encode(hashlib.sha256(b"").digest()).decode() == (
        "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    )


@pytest.mark.parametrize(
    "path", ["/accounts/login/", "/", "/api/health", "/api/runs", "/no-such-page/", "/admin/"]
)
def test_every_answer_carries_the_policy(db: None, path: str) -> None:
    assert Client().get(path)["Content-Security-Policy"] == POLICY


def cookie_flags(answer: Any) -> dict[str, bool]:
    names = (django_settings.SESSION_COOKIE_NAME, django_settings.CSRF_COOKIE_NAME)
    return {name: bool(answer.cookies[name]["secure"]) for name in names}


def log_in(client: Client, **extra: Any) -> Any:
    """A login's answer: it sets both cookies (Django rotates the CSRF token on login)."""
    return client.post("/accounts/login/", {"username": "erin", "password": PASSWORD}, **extra)


def test_cookies_are_secure_over_https_and_not_over_http(erin: Any) -> None:
    over_https = log_in(Client(), secure=True)
    assert over_https.status_code == 302
    assert cookie_flags(over_https) == {"sessionid": True, "csrftoken": True}
    over_http = log_in(Client())
    assert over_http.status_code == 302
    assert cookie_flags(over_http) == {"sessionid": False, "csrftoken": False}


def test_secure_cookies_can_be_forced_for_every_answer(erin: Any, settings: Any) -> None:
    settings.FLEETSCOPE_SECURE_COOKIES = True
    assert cookie_flags(log_in(Client())) == {"sessionid": True, "csrftoken": True}


def test_a_trusted_proxys_forwarded_proto_counts_as_https(erin: Any, settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # as settings.py sets
    answer = log_in(Client(), HTTP_X_FORWARDED_PROTO="https")
    assert cookie_flags(answer) == {"sessionid": True, "csrftoken": True}


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    at = Clock(T0)
    with mock.patch("django.utils.timezone.now", at):
        yield at


def test_a_session_ends_twelve_hours_after_the_login(erin: Any, clock: Clock) -> None:
    client = Client()
    assert client.login(username="erin", password=PASSWORD)
    [session] = Session.objects.all()
    assert session.expire_date == datetime(2026, 3, 2, 22, 0, tzinfo=UTC)
    clock.now = T0 + timedelta(hours=11, minutes=59)
    assert client.get("/api/alert-rules").status_code == 200
    assert client.get("/alerts/rules/new/").status_code == 200
    # Using it did not push the end back (SESSION_SAVE_EVERY_REQUEST is off).
    assert Session.objects.get().expire_date == datetime(2026, 3, 2, 22, 0, tzinfo=UTC)
    clock.now = T0 + timedelta(hours=12, seconds=1)
    page = client.get("/alerts/rules/new/")
    assert page.status_code == 302
    assert page["Location"] == "/accounts/login/?next=/alerts/rules/new/"
    api = client.get("/api/alert-rules")
    assert api.status_code == 401 and api.json() == {"detail": "Unauthorized"}


def test_the_session_length_is_read_from_the_environment(monkeypatch: Any) -> None:
    from dashboard.env import read_int

    assert django_settings.SESSION_COOKIE_AGE == 12 * 3600
    assert django_settings.SESSION_SAVE_EVERY_REQUEST is False
    monkeypatch.setenv("FLEETSCOPE_SESSION_HOURS", "0")
    with pytest.raises(
        Exception, match="FLEETSCOPE_SESSION_HOURS must be an integer of at least 1"
    ):
        read_int("FLEETSCOPE_SESSION_HOURS", 12, minimum=1)


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("password", "This password is too short. It must contain at least 12 characters."),
        ("password", "This password is too common."),
        ("12345678", "This password is entirely numeric."),
        ("12345678", "This password is too common."),
        ("123456789012", "This password is entirely numeric."),
        ("erin-example", "The password is too similar to the username."),
    ],
)
def test_weak_passwords_are_refused_with_djangos_reasons(password: str, message: str) -> None:
    from django.contrib.auth.models import User

    with pytest.raises(ValidationError) as refused:
        password_validation.validate_password(password, User(username="erin-example"))
    assert message in refused.value.messages


def test_a_long_uncommon_password_passes() -> None:
    from django.contrib.auth.models import User

    password_validation.validate_password("violet staple orbit", User(username="erin"))


def test_the_admin_refuses_a_common_password_for_a_new_user(
    db: None, django_user_model: Any
) -> None:
    root = django_user_model.objects.create_superuser("root", password=PASSWORD)
    client = Client()
    client.force_login(root)
    answer = client.post(
        "/admin/auth/user/add/",
        {
            "username": "frank",
            "password1": "password",
            "password2": "password",
            "usable_password": "true",
        },
    )
    assert answer.status_code == 200
    assert "This password is too common." in answer.content.decode()
    assert not django_user_model.objects.filter(username="frank").exists()


def test_the_api_docs_need_a_login_or_a_token(erin: Any) -> None:
    anonymous = Client()
    docs = anonymous.get("/api/docs")
    assert docs.status_code == 302 and docs["Location"] == "/accounts/login/?next=/api/docs"
    schema = anonymous.get("/api/openapi.json")
    assert schema.status_code == 401 and schema.json() == {"detail": "Unauthorized"}
    assert anonymous.get("/api/openapi.json", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    read = ApiToken.issue(erin, "docs", scope=Scope.READ)[1]
    by_token = anonymous.get("/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {read}")
    assert by_token.status_code == 200 and by_token.json()["info"]["title"] == "Fleetscope API"
    ingest = ApiToken.issue(erin, "push", scope=Scope.INGEST)[1]
    refused = anonymous.get("/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {ingest}")
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("an ingest token may only send data")
    client = Client()
    client.force_login(erin)
    assert client.get("/api/docs").status_code == 200
    assert client.get("/api/openapi.json").status_code == 200


def test_the_maplibre_style_hash_is_that_of_the_installed_plotly_js() -> None:
    """plotly.min.js adds `e.textContent='<css>'` under a fixed id on load: an upgrade
    that changes the text must change MAPLIBRE_STYLE_HASH (dashboard/security.py) too."""
    import base64
    import hashlib

    from dashboard.security import MAPLIBRE_STYLE_HASH
    from dashboard.staticfiles import PLOTLY_BUNDLE

    bundle = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    opening = (
        'e.id="9f215cf04c5486422605d13261cb87401f4e7763b6296af81e98efbc0130da53",e.textContent=\''
    )
    start = bundle.index(opening) + len(opening)
    css = bundle[start : bundle.index("',document.head.appendChild(e)", start)]
    assert "\\" not in css  # no escapes: the literal is the text itself
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert MAPLIBRE_STYLE_HASH == f"'sha256-{digest}'"
