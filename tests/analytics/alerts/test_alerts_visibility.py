"""Alerting sees its teams: a team's rule watches only that team's runs and instances, and
the alerting endpoints list, show and change only what the caller's teams own (another
team's rule or channel is a 404, as an unknown one), never a channel's secret; rules
use only their own team's channels; webhooks to private addresses are refused when saved.

People: ann in team A, bob in team B, vic a viewer of team A, root an all-teams editor,
nia in no team. Team A's runs are `a-*`, team B's `b-*`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from django.test.utils import override_settings

from analytics.alerts import engine
from analytics.alerts.models import AlertRule, AlertState, Channel, Notification, Silence
from analytics.costs.models import ModelPrice, Team
from analytics.serving.models import ScrapeTarget
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.rules.findings import ingest_events
from tests.analytics.alerts.scenarios import T0, minutes
from tests.people import grant


@dataclass
class World:
    a: Team
    b: Team
    clients: dict[str, Client]

    def get(self, who: str, path: str) -> tuple[int, Any]:
        response = self.clients[who].get(path)
        return response.status_code, response.json()

    def post(self, who: str, path: str, body: Any) -> tuple[int, Any]:
        response = self.clients[who].post(path, body, content_type="application/json")
        return response.status_code, response.json()


@pytest.fixture
def world(lake: Path, db: None) -> World:
    a = Team.objects.create(name="A", run_patterns=["a-*"])
    b = Team.objects.create(name="B", run_patterns=["b-*"])
    people = {
        "ann": ("editor", (a,), False),
        "bob": ("editor", (b,), False),
        "vic": ("viewer", (a,), False),
        "duo": ("editor", (a, b), False),
        "root": ("editor", (), True),
        "nia": ("editor", (), False),
    }
    clients = {}
    for name, (role, teams, all_teams) in people.items():
        user = grant(User.objects.create_user(name), role=role, teams=teams, all_teams=all_teams)
        client = Client()
        client.force_login(user)
        clients[name] = client
    return World(a, b, clients)


def _hook(name: str, team: Team | None, secret: str = "") -> Channel:
    return Channel.objects.create(
        name=name, kind="webhook", target=f"http://127.0.0.1:9/{name}", secret=secret, team=team
    )


def _stall_rule(name: str, team: Team | None) -> AlertRule:
    rule = AlertRule.objects.create(
        name=name, kind="commit_stall", params={"min_gap": "10m"}, repeat_seconds=0, team=team
    )
    rule.channels.add(_hook(f"{name}-hook", team))
    return rule


def _load(run: str, stalls: bool) -> None:
    gap = timedelta(minutes=20) if stalls else timedelta(0)
    scenarios.load_fleet(run, commit_every_s=10, hours=3, gap_at=timedelta(hours=2), gap=gap)


def _evaluate() -> None:
    for at in minutes(T0 + timedelta(minutes=115), T0 + timedelta(minutes=145)):
        assert engine.evaluate_rules(at).errors == []


def _sent(rule: AlertRule) -> Counter[tuple[str, str]]:
    rows = Notification.objects.filter(alert__rule=rule)
    return Counter((n.payload["subject"], n.kind) for n in rows)


# --- evaluation ---------------------------------------------------------------------------


def test_a_team_rule_of_scope_all_does_not_fire_for_another_teams_stall(
    lake: Path, world: World
) -> None:
    _load("a-1", stalls=False)
    _load("b-1", stalls=True)
    mine, theirs, everyones = (
        _stall_rule("A stall", world.a),
        _stall_rule("B stall", world.b),
        _stall_rule("fleet stall", None),
    )
    _evaluate()
    assert AlertState.objects.filter(rule=mine).count() == 0
    assert _sent(mine) == Counter()
    assert _sent(theirs) == Counter({("b-1", "firing"): 1, ("b-1", "resolved"): 1})
    assert _sent(everyones) == Counter({("b-1", "firing"): 1, ("b-1", "resolved"): 1})


def test_a_team_rule_fires_for_its_own_stall_and_names_only_its_runs(
    lake: Path, world: World
) -> None:
    _load("a-1", stalls=True)
    _load("b-1", stalls=True)
    mine = _stall_rule("A stall", world.a)
    _evaluate()
    assert _sent(mine) == Counter({("a-1", "firing"): 1, ("a-1", "resolved"): 1})
    # The last commit before the gap was at 1:59:50: 10 min later is past 2:09:50, so the
    # 2:10 evaluation fires; the gap's first commit lands at 2:20.
    state = AlertState.objects.get(rule=mine)
    fired = state.transitions.get(to_state="firing")
    resolved = state.transitions.get(to_state="resolved")
    assert (fired.at, resolved.at) == (T0 + timedelta(minutes=130), T0 + timedelta(minutes=140))


def test_a_team_rule_watches_only_the_instances_of_its_teams_targets(
    lake: Path, world: World
) -> None:
    scenarios.load_flapping_kv("gpu-b")
    ScrapeTarget.objects.create(name="gpu-b", url="http://10.0.0.8:8000/metrics", team=world.b)
    for name, team in (("A kv", world.a), ("B kv", world.b)):
        AlertRule.objects.create(
            name=name, kind="kv_usage", threshold=0.95, for_seconds=300, team=team
        )
    for at in minutes(T0 + timedelta(minutes=29), T0 + timedelta(minutes=43)):
        assert engine.evaluate_rules(at).errors == []
    # Above 95% from minute 28 to 42 (scenarios.load_flapping_kv): fired after 5 minutes.
    assert list(AlertState.objects.values_list("rule__name", "subject", "state")) == [
        ("B kv", "gpu-b", "resolved")
    ]
    fired = AlertState.objects.get().transitions.get(to_state="firing")
    assert fired.at == T0 + timedelta(minutes=33)


def test_a_team_rule_of_scope_all_counts_only_its_teams_spend(lake: Path, world: World) -> None:
    ModelPrice.objects.create(
        model="acme-coder",
        input_per_mtok=Decimal(2),
        output_per_mtok=Decimal(8),
        valid_from=date(2026, 1, 1),
    )
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}  # $2 + $0.80 a call
    ingest_events(
        [
            {
                "ts": (T0 + timedelta(hours=h)).isoformat(),
                "run": run,
                "agent": "w",
                "event": "llm_call",
                "model": "acme-coder",
                "usage": usage,
                "id": f"{run}-{h}",
            }
            for h in range(3)
            for run in ("a-1", "b-1")
        ]
    )
    for name, team in (("A spend", world.a), ("fleet spend", None)):
        AlertRule.objects.create(name=name, kind="daily_spend", threshold=5.0, team=team)
    assert engine.evaluate_rules(T0 + timedelta(minutes=150)).errors == []
    spent = dict(AlertState.objects.values_list("rule__name", "value"))
    # a-1's three calls, $2.80 each; the fleet's six.
    assert spent == {"A spend": pytest.approx(8.4), "fleet spend": pytest.approx(16.8)}


def test_a_saved_rules_preview_watches_its_teams_runs(lake: Path, world: World) -> None:
    _load("a-1", stalls=True)
    _load("b-1", stalls=True)
    rule = _stall_rule("A stall", world.a)
    window = f"start={T0 + timedelta(minutes=100):%Y-%m-%dT%H:%M:%SZ}&end={T0 + timedelta(minutes=150):%Y-%m-%dT%H:%M:%SZ}"
    status, body = world.get("ann", f"/api/alert-rules/{rule.pk}/preview?{window}")
    assert status == 200
    assert [i["subject"] for i in body["incidents"]] == ["a-1"]
    status, body = world.post(
        "bob",
        f"/api/alert-rules/preview?{window}",
        {"name": "x", "kind": "commit_stall", "params": {"min_gap": "10m"}},
    )
    assert status == 200
    assert [i["subject"] for i in body["incidents"]] == ["b-1"]


# --- rules, channels, silences, alerts through the API --------------------------------------


def test_each_user_lists_only_their_teams_rules_and_channels(world: World) -> None:
    _stall_rule("A stall", world.a)
    _stall_rule("B stall", world.b)
    _stall_rule("fleet stall", None)
    lists = {
        who: (
            [r["name"] for r in world.get(who, "/api/alert-rules")[1]],
            [c["name"] for c in world.get(who, "/api/channels")[1]],
        )
        for who in ("ann", "bob", "vic", "duo", "root", "nia")
    }
    assert lists == {
        "ann": (["A stall"], ["A stall-hook"]),
        "bob": (["B stall"], ["B stall-hook"]),
        "vic": (["A stall"], ["A stall-hook"]),
        "duo": (["A stall", "B stall"], ["A stall-hook", "B stall-hook"]),
        "root": (
            ["A stall", "B stall", "fleet stall"],
            ["A stall-hook", "B stall-hook", "fleet stall-hook"],
        ),
        "nia": ([], []),
    }


def test_another_teams_rule_and_channel_by_id_are_not_found(world: World) -> None:
    rule = _stall_rule("B stall", world.b)
    channel = rule.channels.get()
    for path, detail in (
        (f"/api/alert-rules/{rule.pk}", f"unknown rule {rule.pk}"),
        (f"/api/alert-rules/{rule.pk}/preview", f"unknown rule {rule.pk}"),
        (f"/api/channels/{channel.pk}", f"unknown channel {channel.pk}"),
    ):
        assert world.get("ann", path) == (404, {"detail": detail})
    assert world.get("bob", f"/api/alert-rules/{rule.pk}")[1]["team"] == "B"
    status, body = world.post("ann", "/api/silences", {"rule": rule.pk})
    assert (status, body) == (404, {"detail": f"unknown rule {rule.pk}"})
    assert Silence.objects.count() == 0


def test_a_channel_answer_says_whether_it_is_signed_and_never_shows_the_secret(
    world: World,
) -> None:
    channel = _hook("signed", world.a, secret="s3cr3t-value")
    status, body = world.get("ann", f"/api/channels/{channel.pk}")
    assert status == 200
    assert body == {
        "id": channel.pk,
        "name": "signed",
        "kind": "webhook",
        "target": "http://127.0.0.1:9/signed",
        "signed": True,
        "enabled": True,
        "team": "A",
        "failing_since": None,
        "last_error": "",
    }
    assert "s3cr3t-value" not in world.clients["ann"].get("/api/channels").content.decode()


def test_a_user_of_one_team_creates_in_it_by_default_and_not_in_another(world: World) -> None:
    status, made = world.post(
        "ann", "/api/channels", {"name": "a-ops", "kind": "email", "target": "a@example.com"}
    )
    assert status == 200 and Channel.objects.get(pk=made["id"]).team == world.a
    status, body = world.post(
        "ann",
        "/api/channels",
        {"name": "b-ops", "kind": "email", "target": "b@example.com", "team": "B"},
    )
    assert (status, body) == (422, {"detail": "unknown team 'B' (you may use: A)"})
    status, body = world.post(
        "duo", "/api/alert-rules", {"name": "r", "kind": "kv_usage", "threshold": 0.9}
    )
    assert (status, body) == (422, {"detail": "name the team this belongs to (one of: A, B)"})
    status, body = world.post(
        "nia", "/api/alert-rules", {"name": "r", "kind": "kv_usage", "threshold": 0.9}
    )
    assert status == 403
    status, made = world.post(
        "root", "/api/alert-rules", {"name": "r", "kind": "kv_usage", "threshold": 0.9}
    )
    assert status == 200 and AlertRule.objects.get(pk=made["id"]).team is None


def test_a_rule_uses_only_its_own_teams_channels(world: World) -> None:
    a_hook, b_hook, fleet_hook = _hook("a", world.a), _hook("b", world.b), _hook("fleet", None)
    body = {"name": "r", "kind": "kv_usage", "threshold": 0.9}
    # Another team's channel does not exist for ann; duo sees it, but an A rule may not use it.
    status, answer = world.post("ann", "/api/alert-rules", {**body, "channels": [b_hook.pk]})
    assert (status, answer) == (404, {"detail": f"unknown channel ids [{b_hook.pk}]"})
    status, answer = world.post(
        "duo", "/api/alert-rules", {**body, "team": "A", "channels": [b_hook.pk]}
    )
    assert (status, answer) == (
        422,
        {
            "detail": "channel 'b' belongs to B: a team A's rule may use only its own team's channels"
        },
    )
    # An all-teams user may add a team-less channel to a team's rule, not a team's channel
    # to a team-less rule.
    status, _ = world.post(
        "root", "/api/alert-rules", {**body, "team": "A", "channels": [a_hook.pk, fleet_hook.pk]}
    )
    assert status == 200
    status, answer = world.post(
        "root", "/api/alert-rules", {**body, "name": "s", "channels": [a_hook.pk]}
    )
    assert status == 422 and answer["detail"].startswith("channel 'a' belongs to A")


def test_a_silence_of_every_rule_needs_the_all_teams_flag(world: World) -> None:
    rule = _stall_rule("A stall", world.a)
    status, body = world.post("ann", "/api/silences", {"duration": "1h"})
    assert (status, body) == (
        403,
        {"detail": "a silence of every rule needs the all-teams flag; name one rule"},
    )
    assert world.post("ann", "/api/silences", {"rule": rule.pk})[0] == 200
    assert world.post("root", "/api/silences", {})[0] == 200
    assert [s["rule"] for s in world.get("ann", "/api/silences")[1]] == [rule.pk]
    assert world.get("bob", "/api/silences")[1] == []
    assert sorted(str(s["rule"]) for s in world.get("root", "/api/silences")[1]) == [
        str(rule.pk),
        "None",
    ]


def test_a_viewer_reads_and_changes_nothing(world: World) -> None:
    rule = _stall_rule("A stall", world.a)
    assert [r["name"] for r in world.get("vic", "/api/alert-rules")[1]] == ["A stall"]
    for path, body in (
        ("/api/alert-rules", {"name": "r", "kind": "kv_usage", "threshold": 0.9}),
        ("/api/channels", {"name": "c", "kind": "email", "target": "c@example.com"}),
        ("/api/silences", {"rule": rule.pk}),
    ):
        assert world.post("vic", path, body)[0] == 403
    assert (AlertRule.objects.count(), Channel.objects.count(), Silence.objects.count()) == (
        1,
        1,
        0,
    )


def test_alerts_list_only_the_callers_teams_rules(lake: Path, world: World) -> None:
    _load("a-1", stalls=True)
    _load("b-1", stalls=True)
    _stall_rule("A stall", world.a)
    _stall_rule("B stall", world.b)
    engine.evaluate_rules(T0 + timedelta(minutes=135))
    answers = {
        who: sorted((a["rule"], a["subject"]) for a in world.get(who, "/api/alerts")[1])
        for who in ("ann", "bob", "root", "nia")
    }
    assert answers == {
        "ann": [("A stall", "a-1")],
        "bob": [("B stall", "b-1")],
        "root": [("A stall", "a-1"), ("B stall", "b-1")],
        "nia": [],
    }


# --- webhooks to private addresses ----------------------------------------------------------


@override_settings(FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS=False)
def test_a_webhook_to_a_private_address_is_refused_when_saved(world: World) -> None:
    status, body = world.post(
        "ann", "/api/channels", {"name": "x", "kind": "webhook", "target": "http://10.0.0.5/hook"}
    )
    assert (status, body) == (
        422,
        {
            "detail": "webhook URL points to a private address (10.0.0.5); "
            "set FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS=1 to allow"
        },
    )
    for target in ("http://localhost:9/", "http://[::ffff:127.0.0.1]/", "http://2130706433/"):
        status, _ = world.post(
            "ann", "/api/channels", {"name": "x", "kind": "slack", "target": target}
        )
        assert status == 422
    assert Channel.objects.count() == 0
    status, _ = world.post(
        "ann",
        "/api/channels",
        {"name": "x", "kind": "slack", "target": "https://93.184.215.14/hook"},
    )
    assert status == 200
    # The model says the same (the admin's form goes through it).
    channel = Channel(name="y", kind="webhook", target="http://169.254.169.254/")
    with pytest.raises(ValidationError, match=r"private address \(169\.254\.169\.254\)"):
        channel.full_clean()


@override_settings(FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS=False)
def test_a_saved_webhook_that_points_inside_fails_for_good_when_sent(world: World) -> None:
    from analytics.alerts.channels import TransportError, transport_for

    channel = _hook("inside", world.a)  # saved while private addresses were allowed
    with pytest.raises(TransportError) as raised:
        transport_for(channel).send(channel, {"rule": "r", "subject": "a-1"})
    assert raised.value.permanent
    assert raised.value.message == (
        "webhook URL points to a private address (127.0.0.1); "
        "set FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS=1 to allow"
    )
