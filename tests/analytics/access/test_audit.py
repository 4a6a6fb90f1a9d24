"""The audit log: every door a change comes in by (the API, a page, the Django admin, a
management command) lands in it, naming who; fields old -> new; secrets as "changed"
without their values; bookkeeping moves are not changes."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import orjson
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from analytics.access.audit import acting_as
from analytics.access.models import AuditEntry
from analytics.alerts.models import AlertRule, Channel
from analytics.costs.models import Team
from dashboard.models import ApiToken, hash_token
from lib.access import Scope
from tests.people import grant

pytestmark = pytest.mark.django_db


def _last(kind: str) -> AuditEntry:
    entry = AuditEntry.objects.filter(kind=kind).order_by("-id").first()
    assert entry is not None, f"no {kind} entry"
    return entry


def test_an_api_post_is_recorded_with_its_user_and_fields(
    user: User, auth_headers: dict[str, str]
) -> None:
    body = {"name": "kv high", "kind": "kv_usage", "threshold": 0.95, "for": "5m"}
    response = Client().post(
        "/api/alert-rules",
        orjson.dumps(body),
        content_type="application/json",
        headers=auth_headers,
    )
    assert response.status_code == 200, response.content
    entry = _last("alert rule")
    rule = AlertRule.objects.get(name="kv high")
    assert (entry.user, entry.username, entry.action) == (user, "alice", "created")
    assert (entry.object_id, entry.object_repr) == (str(rule.pk), "kv high")
    assert entry.changes == {
        "name": [None, "kv high"],
        "kind": [None, "kv_usage"],
        "threshold": [None, 0.95],
        "for_seconds": [None, 300],
        "repeat_seconds": [None, 14400],
        "enabled": [None, True],
        "created_by": [None, "alice"],
    }


def test_a_page_form_is_recorded_as_its_user(user: User) -> None:
    client = Client()
    client.force_login(user)
    form = {"name": "infra", "run_patterns": "infra-*", "source_patterns": ""}
    assert client.post("/settings/teams/", form).status_code == 302
    entry = _last("team")
    team = Team.objects.get(name="infra")
    assert (entry.username, entry.action, entry.team_id) == ("alice", "created", team.pk)
    assert entry.changes == {"name": [None, "infra"], "run_patterns": [None, ["infra-*"]]}


def test_an_admin_change_is_recorded_old_to_new() -> None:
    root = User.objects.create_superuser("root", "root@example.com", "a-long-root-password")
    team = Team.objects.create(name="infra", run_patterns=["infra-*"])
    client = Client()
    client.force_login(root)
    response = client.post(
        f"/admin/analytics/team/{team.pk}/change/",
        {"name": "platform", "run_patterns": '["infra-*", "db-*"]', "source_patterns": "[]",
         "daily_budget_usd": "12.50"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[-2000:]
    entry = _last("team")
    assert (entry.username, entry.action, entry.object_repr) == ("root", "changed", "platform")
    assert entry.changes == {
        "name": ["infra", "platform"],
        "run_patterns": [["infra-*"], ["infra-*", "db-*"]],
        "daily_budget_usd": [None, "12.50"],
    }


def test_a_command_is_named_and_the_raw_token_is_not_recorded(user: User) -> None:
    out = io.StringIO()
    call_command("create_api_token", "alice", "--name", "ci", "--scope", "ingest", stdout=out)
    raw = out.getvalue().strip()
    entry = _last("api token")
    assert (entry.user, entry.username, entry.action) == (None, "create_api_token", "created")
    assert entry.changes["token_hash"] == "changed"
    assert entry.changes["scope"] == [None, "ingest"]
    stored = orjson.dumps(list(AuditEntry.objects.values("changes", "object_repr")))
    assert raw.encode() not in stored and hash_token(raw).encode() not in stored


def test_changes_without_a_request_or_command_are_the_systems() -> None:
    Team.objects.create(name="infra")
    assert _last("team").username == ""


def test_a_secret_is_recorded_as_changed_without_its_value() -> None:
    channel = Channel.objects.create(name="hook", kind="webhook", target="https://x.test/h")
    channel.secret = "s3cret-value"
    channel.save()
    entry = _last("channel")
    assert (entry.action, entry.changes) == ("changed", {"secret": "changed"})
    user = User.objects.create_user("bob", password="first-long-password")
    user.set_password("second-long-password")
    user.save()
    assert _last("user").changes == {"password": "changed"}
    assert b"s3cret-value" not in orjson.dumps(list(AuditEntry.objects.values("changes")))


def test_revoking_a_token_is_recorded_as_revoked(user: User) -> None:
    token, _ = ApiToken.issue(user, "ci", Scope.READ)
    token.revoked_at = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)
    token.save()
    entry = _last("api token")
    assert (entry.action, entry.changes) == (
        "revoked",
        {"revoked_at": [None, "2026-01-14T10:00:00+00:00"]},
    )


def test_bookkeeping_is_not_a_change(user: User) -> None:
    before = AuditEntry.objects.count()
    assert Client().login(username="alice", password="correct-horse-battery")  # last_login
    channel = Channel.objects.create(name="hook", kind="webhook", target="https://x.test/h")
    channel.last_error = "502 from the receiver"
    channel.save()
    assert AuditEntry.objects.count() == before + 1  # the channel's creation only


def test_team_members_and_rule_channels_are_recorded_as_lists(user: User) -> None:
    team = Team.objects.create(name="infra")
    grant(user, role="editor", teams=(team,))
    assert _last("access").changes == {"teams": [[], ["infra"]]}
    rule = AlertRule.objects.create(name="kv high", kind="kv_usage", threshold=0.9)
    channel = Channel.objects.create(name="ops", kind="email", target="ops@example.com")
    rule.channels.add(channel)
    entry = _last("alert rule")
    assert (entry.action, entry.changes) == ("changed", {"channels": [[], ["ops (email)"]]})


def test_a_deletion_is_recorded() -> None:
    team = Team.objects.create(name="infra")
    team_id = team.pk
    with acting_as("cleanup"):
        team.delete()
    entry = _last("team")
    assert (entry.action, entry.username, entry.object_id, entry.object_repr) == (
        "deleted",
        "cleanup",
        str(team_id),
        "infra",
    )
    assert entry.team_id is None
