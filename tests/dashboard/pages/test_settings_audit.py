"""Settings > Audit log: newest first, 50 a page with a link to older ones, filtered by kind
and by user (the system's changes under "system"), each with when (a timetag), who, what
and its fields old -> new; a secret as "changed"."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.access.models import AuditEntry

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _entries(page: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-entry="(\d+)"', page)]


@pytest.fixture
def log(user: User) -> list[AuditEntry]:
    """60 entries a minute apart from T0 (the oldest), alternately by alice on alert rules
    and by the system on teams."""
    AuditEntry.objects.all().delete()
    return [
        AuditEntry.objects.create(
            at=T0 + timedelta(minutes=n),
            user=user if n % 2 == 0 else None,
            username="alice" if n % 2 == 0 else "",
            action="changed",
            kind="alert rule" if n % 2 == 0 else "team",
            object_id=str(n),
            object_repr=f"object {n}",
            changes={"threshold": [n, n + 1]},
        )
        for n in range(60)
    ]


def test_newest_first_fifty_a_page_then_older(user: User, log: list[AuditEntry]) -> None:
    client = _client(user)
    first = client.get("/settings/audit/").content.decode()
    newest_first = [e.pk for e in reversed(log)]
    assert _entries(first) == newest_first[:50]
    older = re.search(r'<a href="([^"]+)" id="older">', first)
    assert older is not None
    assert older.group(1) == f"?before={log[10].pk}"
    second = client.get("/settings/audit/" + older.group(1)).content.decode()
    assert _entries(second) == newest_first[50:]
    assert 'id="older"' not in second


def test_filtered_by_kind_and_by_user(user: User, log: list[AuditEntry]) -> None:
    client = _client(user)
    teams = client.get("/settings/audit/", {"kind": "team"}).content.decode()
    assert _entries(teams) == [e.pk for e in reversed(log) if e.kind == "team"]
    system = client.get("/settings/audit/", {"user": "system"}).content.decode()
    assert _entries(system) == [e.pk for e in reversed(log) if e.username == ""]
    alice_teams = client.get("/settings/audit/", {"user": "alice", "kind": "team"})
    assert _entries(alice_teams.content.decode()) == []
    assert "No change recorded for this filter." in alice_teams.content.decode()


def test_an_entry_shows_when_who_what_and_old_to_new(user: User) -> None:
    AuditEntry.objects.all().delete()
    entry = AuditEntry.objects.create(
        at=T0, user=user, username="alice", action="changed", kind="channel",
        object_id="7", object_repr="ops (webhook)",
        changes={"secret": "changed", "target": ["https://a.test/h", "https://b.test/h"],
                 "enabled": [True, False], "teams": [[], ["infra", "web"]]},
    )  # fmt: skip
    page = _client(user).get("/settings/audit/").content.decode()
    row = page.split(f'data-entry="{entry.pk}"')[1].split("</tr>")[0]
    assert (
        '<time datetime="2026-01-14T10:00:00Z" data-precision="second">2026-01-14 10:00:00</time>'
        in row
    )
    assert "<td>alice</td>" in row and "<td>changed</td>" in row and "<td>channel</td>" in row
    assert "ops (webhook)" in row
    assert "<code>secret</code>: <em>changed</em>" in row
    assert (
        '<span class="old">https://a.test/h</span> → <span class="new">https://b.test/h</span>'
        in row
    )
    assert '<span class="old">yes</span> → <span class="new">no</span>' in row
    assert '<span class="old">\u2013</span> → <span class="new">infra, web</span>' in row
    assert "data-zone-label" in page


def test_the_filters_offer_every_kind_and_who_acted(user: User, log: list[AuditEntry]) -> None:
    page = _client(user).get("/settings/audit/").content.decode()
    users = re.findall(r'<option value="(\w+)"', page.split('name="user"')[1].split("</select>")[0])
    assert users == ["alice", "system"]
    assert '<option value="scrape target">' in page and '<option value="api token">' in page
