"""Settings > API tokens: created through the page with a scope and an expiry, the raw value
shown once (a reload does not show it), listed with their state, revoked by POST; revoked
and expired tokens stop authenticating at once; each scope does only its job through the
API; a viewer's tokens only read; the create_api_token command."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from dashboard.models import ApiToken, hash_token
from lib.access import Scope
from tests.people import grant

pytestmark = pytest.mark.django_db
RAW = re.compile(r'<code id="raw-token">(fs_[A-Za-z0-9_-]+)</code>')
EVENT = b'{"ts": "2026-01-14T09:00:00Z", "run": "r1", "agent": "main", "event": "spawn"}\n'


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _create(client: Client, **form: str) -> str:
    response = client.post("/settings/tokens/", {"name": "laptop", "scope": "read", **form})
    assert response.status_code == 200, response.content.decode()[-1500:]
    match = RAW.search(response.content.decode())
    assert match, "the raw token is on the page after creation"
    assert response["Cache-Control"] == "no-store"
    return match.group(1)


def _bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def test_the_raw_token_is_shown_once_and_works(user: User) -> None:
    client = _client(user)
    raw = _create(client)
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert (token.user, token.name, token.scope, token.expires_at) == (user, "laptop", "read", None)
    reloaded = client.get("/settings/tokens/").content.decode()
    assert raw not in reloaded and raw[:10] in reloaded  # the prefix identifies it
    assert Client().get("/api/runs", headers=_bearer(raw)).status_code == 200


def test_an_expiry_in_days_or_on_a_date(user: User) -> None:
    client = _client(user)
    before = timezone.now()
    raw = _create(client, expires_days="30")
    expires = ApiToken.objects.get(token_hash=hash_token(raw)).expires_at
    assert expires is not None
    assert before + timedelta(days=30) <= expires <= timezone.now() + timedelta(days=30)
    raw = _create(client, name="dated", expires_on="2099-03-01")
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert token.expires_at == datetime(2099, 3, 1, tzinfo=UTC)


def test_a_bad_expiry_is_one_clear_error(user: User) -> None:
    client = _client(user)
    both = client.post(
        "/settings/tokens/",
        {"name": "x", "scope": "read", "expires_days": "3", "expires_on": "2099-03-01"},
    )
    assert "give the expiry in days or as a date, not both" in both.content.decode()
    past = client.post(
        "/settings/tokens/", {"name": "x", "scope": "read", "expires_on": "2020-01-01"}
    )
    assert "the date must be after today (UTC)" in past.content.decode()
    assert ApiToken.objects.count() == 0


def test_the_list_shows_each_tokens_state(user: User) -> None:
    now = timezone.now()
    ApiToken.issue(user, "live one", Scope.READ)
    ApiToken.issue(user, "old one", Scope.READ, expires_at=now - timedelta(days=1))
    revoked, _ = ApiToken.issue(user, "gone one", Scope.INGEST)
    ApiToken.objects.filter(pk=revoked.pk).update(revoked_at=now)
    page = _client(user).get("/settings/tokens/").content.decode()
    states = re.findall(r'<span class="badge \w+">(live|expired|revoked)</span>', page)
    assert states == ["revoked", "expired", "live"]  # newest first


def test_revoking_stops_the_token_at_once(user: User) -> None:
    client = _client(user)
    raw = _create(client)
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert Client().get("/api/runs", headers=_bearer(raw)).status_code == 200
    assert client.post("/settings/tokens/", {"revoke": str(token.pk)}).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    response = Client().get("/api/runs", headers=_bearer(raw))
    assert response.status_code == 401 and response["Content-Type"].startswith("application/json")


def test_an_expired_token_is_refused(user: User) -> None:
    _, raw = ApiToken.issue(
        user, "old", Scope.READ, expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert Client().get("/api/runs", headers=_bearer(raw)).status_code == 401


def test_revoking_needs_a_csrf_token(user: User) -> None:
    token, _ = ApiToken.issue(user, "ci", Scope.READ)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post("/settings/tokens/", {"revoke": str(token.pk)}).status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


def test_an_ingest_token_sends_and_reads_nothing(user: User) -> None:
    raw = _create(_client(user), scope="ingest")
    client = Client()
    assert client.get("/api/runs", headers=_bearer(raw)).status_code == 403
    sent = client.post(
        "/api/ingest/agent-events", EVENT, content_type="application/x-ndjson", headers=_bearer(raw)
    )
    assert sent.status_code == 200, sent.content


def test_a_read_token_reads_and_changes_nothing(user: User) -> None:
    raw = _create(_client(user), scope="read")
    client = Client()
    assert client.get("/api/runs", headers=_bearer(raw)).status_code == 200
    sent = client.post(
        "/api/ingest/agent-events", EVENT, content_type="application/x-ndjson", headers=_bearer(raw)
    )
    assert sent.status_code == 403
    assert sent["Content-Type"].startswith("application/json")


def test_a_viewer_makes_read_tokens_only(db: None) -> None:
    viewer = grant(User.objects.create_user("vera", password="a-long-viewer-password"), "viewer")
    client = _client(viewer)
    page = client.get("/settings/tokens/").content.decode()
    assert re.findall(r'name="scope" value="(\w+)"', page) == ["read"]
    raw = _create(client)
    assert ApiToken.objects.get(token_hash=hash_token(raw)).scope == "read"
    refused = client.post("/settings/tokens/", {"name": "x", "scope": "admin"})
    assert refused.status_code == 200 and ApiToken.objects.count() == 1
    assert "Select a valid choice" in refused.content.decode()


def test_users_see_their_own_tokens_and_admins_everyones(user: User) -> None:
    bob = grant(User.objects.create_user("bob", password="a-long-bob-password"), "editor")
    mine, _ = ApiToken.issue(user, "alice's", Scope.READ)
    bobs, _ = ApiToken.issue(bob, "bob's", Scope.READ)
    bob_page = _client(bob).get("/settings/tokens/").content.decode()
    assert f'data-token="{bobs.pk}"' in bob_page and f'data-token="{mine.pk}"' not in bob_page
    admin_page = _client(user).get("/settings/tokens/").content.decode()
    assert f'data-token="{bobs.pk}"' in admin_page and f'data-token="{mine.pk}"' in admin_page
    # bob may not revoke alice's: answered as for a token that does not exist
    assert _client(bob).post("/settings/tokens/", {"revoke": str(mine.pk)}).status_code == 404
    mine.refresh_from_db()
    assert mine.revoked_at is None
    assert _client(user).post("/settings/tokens/", {"revoke": str(bobs.pk)}).status_code == 302


def test_the_command_takes_a_scope_and_an_expiry(user: User) -> None:
    out = io.StringIO()
    call_command("create_api_token", "alice", "--scope", "ingest", "--expires", "7", stdout=out)
    raw = out.getvalue().strip()
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert token.scope == "ingest" and token.expires_at is not None
    assert timedelta(days=7) - (token.expires_at - token.created_at) < timedelta(seconds=5)
    out = io.StringIO()
    call_command("create_api_token", "alice", stdout=out)
    assert ApiToken.objects.get(token_hash=hash_token(out.getvalue().strip())).scope == "read"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody"], "no user named 'nobody'"),
        (["alice", "--scope", "write"], "unknown scope 'write': use ingest, read or admin"),
        (["alice", "--expires", "0"], "--expires must be a whole number of days, 1 to 36500: '0'"),
    ],
)
def test_the_command_says_what_is_wrong_in_one_line(
    user: User, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError) as caught:
        call_command("create_api_token", *args, stdout=io.StringIO())
    assert str(caught.value) == message
