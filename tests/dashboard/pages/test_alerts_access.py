"""The Alerts pages see their teams: each user's page lists only their teams' rules,
channels, silences, alerts and history; another team's rule or silence is a 404 (editor,
toggle, ending a silence); the editor offers only the user's teams and channels and
refuses another team's channel; viewers get no forms and their POSTs change nothing.

People: ann in team A, bob in team B, vic a viewer of team A, root an all-teams editor.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from analytics.alerts.models import AlertRule, AlertState, Channel, Evaluation, Silence, Transition
from analytics.costs.models import Team
from tests.people import grant

T = timezone.now().replace(microsecond=0) - timedelta(minutes=3)


@pytest.fixture
def teams(lake: Path, db: None) -> dict[str, Team]:
    return {
        "A": Team.objects.create(name="A", run_patterns=["a-*"]),
        "B": Team.objects.create(name="B", run_patterns=["b-*"]),
    }


@pytest.fixture
def clients(teams: dict[str, Team]) -> dict[str, Client]:
    people = {
        "ann": ("editor", (teams["A"],), False),
        "bob": ("editor", (teams["B"],), False),
        "vic": ("viewer", (teams["A"],), False),
        "root": ("editor", (), True),
    }
    made = {}
    for name, (role, member_of, all_teams) in people.items():
        user = grant(
            User.objects.create_user(name), role=role, teams=member_of, all_teams=all_teams
        )
        client = Client()
        client.force_login(user)
        made[name] = client
    return made


def _firing_rule(name: str, team: Team | None, subject: str) -> AlertRule:
    rule = AlertRule.objects.create(name=name, kind="kv_usage", threshold=0.9, team=team)
    rule.channels.add(
        Channel.objects.create(
            name=f"{name} hook", kind="webhook", target="http://127.0.0.1:9/", team=team
        )
    )
    state = AlertState.objects.create(
        rule=rule, subject=subject, state="firing", since=T, evaluated_at=T, summary="high"
    )
    Transition.objects.create(alert=state, from_state="pending", to_state="firing", at=T)
    return rule


def _rule_form(**overrides: Any) -> dict[str, Any]:
    form = {
        "name": "new kv",
        "kind": "kv_usage",
        "scope_kind": "all",
        "scope_name": "",
        "threshold": "0.9",
        "for_duration": "0",
        "params": "{}",
        "repeat": "never",
        "enabled": "on",
        "action": "save",
    }
    form.update(overrides)
    return form


def test_each_users_page_lists_only_their_teams_rules_channels_and_alerts(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    _firing_rule("A rule", teams["A"], "gpu-a")
    _firing_rule("B rule", teams["B"], "gpu-b")
    _firing_rule("fleet rule", None, "gpu-z")
    Evaluation.objects.create(at=T, rules=3, subjects=7, errors=["B rule: broke", "A rule: broke"])
    pages = {who: clients[who].get("/alerts/").content.decode() for who in clients}
    names = ("A rule", "B rule", "fleet rule", "gpu-a", "gpu-b", "gpu-z")
    shown = {who: [n for n in names if n in html] for who, html in pages.items()}
    assert shown == {
        "ann": ["A rule", "gpu-a"],
        "bob": ["B rule", "gpu-b"],
        "vic": ["A rule", "gpu-a"],
        "root": list(names),
    }
    # The evaluation's fleet-wide figures are the all-teams users'.
    assert "7 subjects" in pages["root"] and "7 subjects" not in pages["ann"]


def test_another_teams_rule_is_not_found_in_the_editor_nor_the_toggle(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    rule = _firing_rule("B rule", teams["B"], "gpu-b")
    ann = clients["ann"]
    assert ann.get(f"/alerts/rules/{rule.pk}/").status_code == 404
    assert ann.post(f"/alerts/rules/{rule.pk}/", _rule_form(name="stolen")).status_code == 404
    assert ann.post(f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "off"}).status_code == 404
    rule.refresh_from_db()
    assert (rule.name, rule.enabled) == ("B rule", True)
    assert (
        clients["bob"].post(f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "off"}).status_code
        == 302
    )
    rule.refresh_from_db()
    assert rule.enabled is False


def test_a_viewer_sees_no_forms_and_their_posts_change_nothing(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    rule = _firing_rule("A rule", teams["A"], "gpu-a")
    vic = clients["vic"]
    html = vic.get("/alerts/").content.decode()
    assert "A rule" in html
    for form in ("Disable</button>", "Add silence", "New rule"):
        assert form not in html
    assert "Save</button>" not in vic.get(f"/alerts/rules/{rule.pk}/").content.decode()
    assert vic.post(f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "off"}).status_code == 403
    assert vic.post("/alerts/rules/new/", _rule_form(team=teams["A"].pk)).status_code == 403
    assert vic.post("/alerts/silences/", {"rule": rule.pk, "duration": "1h"}).status_code == 403
    rule.refresh_from_db()
    assert rule.enabled is True
    assert (AlertRule.objects.count(), Silence.objects.count()) == (1, 0)
    assert "Disable</button>" in clients["ann"].get("/alerts/").content.decode()


def test_the_editor_offers_only_the_users_teams_and_channels(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    _firing_rule("A rule", teams["A"], "gpu-a")
    b_rule = _firing_rule("B rule", teams["B"], "gpu-b")
    html = clients["ann"].get("/alerts/rules/new/").content.decode()
    assert "A rule hook" in html and "B rule hook" not in html
    assert f'<option value="{teams["A"].pk}" selected>A</option>' in html
    assert f'value="{teams["B"].pk}"' not in html
    # ann's only team is the default; B's team or channel are refused.
    assert (
        clients["ann"].post("/alerts/rules/new/", _rule_form(team=teams["A"].pk)).status_code == 302
    )
    assert AlertRule.objects.get(name="new kv").team == teams["A"]
    refused = clients["ann"].post(
        "/alerts/rules/new/",
        _rule_form(name="other", team=teams["B"].pk, channels=[b_rule.channels.get().pk]),
    )
    assert refused.status_code == 422
    assert not AlertRule.objects.filter(name="other").exists()


def test_a_rule_of_team_a_may_not_notify_a_channel_of_team_b(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    b_channel = _firing_rule("B rule", teams["B"], "gpu-b").channels.get()
    answer = clients["root"].post(
        "/alerts/rules/new/", _rule_form(team=teams["A"].pk, channels=[b_channel.pk])
    )
    assert answer.status_code == 422
    assert (
        "channel &#x27;B rule hook&#x27; belongs to B: a team A&#x27;s rule may use only its own"
        " team&#x27;s channels" in answer.content.decode()
    )


def test_silences_of_another_team_are_neither_listed_nor_ended(
    clients: dict[str, Client], teams: dict[str, Team]
) -> None:
    a_rule = _firing_rule("A rule", teams["A"], "gpu-a")
    b_rule = _firing_rule("B rule", teams["B"], "gpu-b")
    ends = timezone.now() + timedelta(hours=1)
    b_silence = Silence.objects.create(rule=b_rule, ends_at=ends, comment="b's quiet hour")
    every = Silence.objects.create(rule=None, ends_at=ends, comment="everyone's quiet hour")
    html = clients["ann"].get("/alerts/").content.decode()
    assert "b's quiet hour" not in html.replace("&#x27;", "'")
    assert "everyone's quiet hour" not in html.replace("&#x27;", "'")
    # ...though her alert says it is held back (by the silence of every rule).
    assert 'holds its notifications back">silenced</span>' in html
    for silence in (b_silence, every):
        assert clients["ann"].post(f"/alerts/silences/{silence.pk}/end/").status_code == 404
        silence.refresh_from_db()
        assert silence.ends_at == ends
    # A silence of every rule is an all-teams user's; ann silences her own rule.
    answer = clients["ann"].post("/alerts/silences/", {"rule": "", "duration": "1h"})
    assert answer.status_code == 422
    answer = clients["ann"].post("/alerts/silences/", {"rule": b_rule.pk, "duration": "1h"})
    assert answer.status_code == 422
    answer = clients["ann"].post("/alerts/silences/", {"rule": a_rule.pk, "duration": "1h"})
    assert answer.status_code == 302
    assert Silence.objects.filter(rule=a_rule).count() == 1
