"""The Settings tables as CSV (`?format=csv&table=<name>`, dashboard/tables.py): API tokens,
users, teams and the audit log, each row compared with what was made by hand; only what
the page's reader sees (a viewer's own tokens; the admin pages stay 403 for others), and
never a token's or a password's hash."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.http import StreamingHttpResponse
from django.test import Client

from analytics.access.models import AuditEntry
from analytics.costs.models import Team
from dashboard.models import ApiToken
from lib.access import Scope
from tests.people import grant

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def body(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(bytes(chunk) for chunk in response.streaming_content).decode()


def rows(client: Client, url: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(body(client, url))))


def test_the_tokens_csv_lists_the_readers_tokens_by_prefix_never_a_hash(user: User) -> None:
    viewer = grant(User.objects.create_user("vic", password="a-long-vic-password"), "viewer")
    mine, raw = ApiToken.issue(viewer, "=laptop", Scope.READ, datetime(2100, 1, 1, tzinfo=UTC))
    ApiToken.objects.filter(pk=mine.pk).update(created_at=T0)
    theirs, _ = ApiToken.issue(user, "ci", Scope.INGEST)
    ApiToken.objects.filter(pk=theirs.pk).update(created_at=T0 + timedelta(hours=1), revoked_at=T0)
    url = "/settings/tokens/?format=csv&table=tokens"
    header = [
        "prefix",
        "name",
        "user",
        "scope",
        "created_at",
        "last_used_at",
        "expires_at",
        "state",
    ]
    own = [
        raw[:10],
        "'=laptop",
        "vic",
        "read",
        "2026-01-14T10:00:00+00:00",
        "",
        "2100-01-01T00:00:00+00:00",
        "live",
    ]
    assert rows(_client(viewer), url) == [header, own]
    # An admin sees everyone's, newest first, as the page lists them.
    ci = [theirs.prefix, "ci", "alice", "ingest", "2026-01-14T11:00:00+00:00", "", "", "revoked"]
    assert rows(_client(user), url) == [header, ci, own]
    text = body(_client(user), url)
    assert mine.token_hash not in text and raw not in text


def test_the_users_csv_has_every_user_role_teams_and_flags(user: User) -> None:
    infra, web = Team.objects.create(name="infra"), Team.objects.create(name="web")
    grant(
        User.objects.create_user("bob", "bob@example.com", "a-long-bob-password"),
        "editor",
        (web, infra),
    )
    carol = User.objects.create_user("carol", password="a-long-carol-password", is_active=False)
    grant(carol, "viewer", all_teams=True)
    client = _client(user)  # signing in sets last_login: set it after
    User.objects.filter(username="alice").update(last_login=T0)
    table = rows(client, "/settings/users/?format=csv&table=users")
    assert table == [
        ["username", "email", "role", "teams", "all_teams", "active", "superuser", "last_login"],
        [
            "alice",
            "alice@example.com",
            "admin",
            "",
            "true",
            "true",
            "false",
            "2026-01-14T10:00:00+00:00",
        ],
        ["bob", "bob@example.com", "editor", "infra, web", "false", "true", "false", ""],
        ["carol", "", "viewer", "", "true", "false", "false", ""],
    ]
    hashes = [u.password for u in User.objects.all()]
    text = body(client, "/settings/users/?format=csv&table=users")
    assert not any(h in text for h in hashes)


def test_the_teams_csv_has_patterns_budget_and_members(user: User) -> None:
    infra = Team.objects.create(
        name="infra", run_patterns=["infra-*", "ops"], daily_budget_usd=Decimal("12.50")
    )
    Team.objects.create(name="web", source_patterns=["/logs/web/*"])
    grant(User.objects.create_user("bob", password="a-long-bob-password"), "editor", (infra,))
    grant(User.objects.create_user("ann", password="a-long-ann-password"), "viewer", (infra,))
    assert rows(_client(user), "/settings/teams/?format=csv&table=teams") == [
        ["team", "run_patterns", "source_patterns", "daily_budget_usd", "members"],
        ["infra", "infra-*, ops", "", "12.50", "ann, bob"],
        ["web", "", "/logs/web/*", "", ""],
    ]


def test_the_audit_csv_streams_the_whole_filter_with_secrets_hidden(user: User) -> None:
    team = Team.objects.create(name="infra")
    AuditEntry.objects.all().delete()  # the team's own creation is recorded too
    for n in range(60):
        AuditEntry.objects.create(
            at=T0 + timedelta(minutes=n),
            username="alice" if n % 2 == 0 else "",
            action="changed",
            kind="alert rule" if n % 2 == 0 else "team",
            object_repr=f"object {n}",
            team=team if n == 58 else None,
            changes={"threshold": [n, n + 1], "secret": "changed"},
        )
    table = rows(_client(user), "/settings/audit/?format=csv&table=audit&kind=alert+rule&before=1")
    assert table[0] == ["at", "who", "action", "kind", "object", "team", "changes"]
    # Every alert-rule entry of the filter, newest first (`before`, a page's, is ignored).
    assert [r[4] for r in table[1:]] == [f"object {n}" for n in range(58, -1, -2)]
    assert table[1] == [
        "2026-01-14T10:58:00+00:00",
        "alice",
        "changed",
        "alert rule",
        "object 58",
        "infra",
        "secret: changed; threshold: 58 → 59",
    ]
    system = rows(_client(user), "/settings/audit/?format=csv&table=audit&user=system")
    assert len(system) == 31 and {r[1] for r in system[1:]} == {"system"}


def test_a_table_the_page_has_not_is_404_and_admin_tables_stay_admin_only(user: User) -> None:
    assert _client(user).get("/settings/users/?format=csv&table=teams").status_code == 404
    editor = _client(grant(User.objects.create_user("ed", password="a-long-ed-password"), "editor"))
    for page, table in (("users", "users"), ("teams", "teams"), ("audit", "audit")):
        assert editor.get(f"/settings/{page}/?format=csv&table={table}").status_code == 403


def test_each_settings_table_links_its_csv(user: User) -> None:
    Team.objects.create(name="infra")
    ApiToken.issue(user, "ci")
    AuditEntry.objects.create(
        at=T0, username="alice", action="changed", kind="team", object_repr="x"
    )
    client = _client(user)
    for page, table in (
        ("tokens", "tokens"),
        ("users", "users"),
        ("teams", "teams"),
        ("audit", "audit"),
    ):
        html = client.get(f"/settings/{page}/").content.decode()
        assert f'href="/settings/{page}/?format=csv&amp;table={table}"' in html, page
