"""The Alerts page and the rule editor: login, what is firing and pending, failing
channels, escaped labels, the rule form's one-line errors, saving with channels, the
24 h preview of the flapping-KV scenario, silences, enabling and disabling rules, the
page's tables as CSV."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client
from django.utils import timezone

from analytics.alerts.models import (
    AlertRule,
    AlertState,
    Channel,
    Evaluation,
    Silence,
    Transition,
)
from tests.analytics.alerts import scenarios

SCRIPT = "<script>alert(1)</script>"
END = "2026-01-14T09:20:00Z"  # T0 + 80 min: the end of the flapping-KV scenario


@pytest.fixture
def client(user: object) -> Client:
    c = Client()
    c.force_login(user)  # type: ignore[arg-type]
    return c


def _rule(name: str = "kv high", **fields: Any) -> AlertRule:
    values: dict[str, Any] = {"kind": "kv_usage", "threshold": 0.95, "for_seconds": 300}
    values.update(fields)
    return AlertRule.objects.create(name=name, **values)


def _kv_form(**overrides: Any) -> dict[str, Any]:
    form = {
        "name": "kv saturated",
        "kind": "kv_usage",
        "scope_kind": "all",
        "scope_name": "",
        "threshold": "0.95",
        "for_duration": "5m",
        "params": "{}",
        "repeat": "4h",
        "enabled": "on",
        "end": END,
        "action": "save",
    }
    form.update(overrides)
    return form


@pytest.mark.parametrize(
    "url", ["/alerts/", "/alerts/rules/new/", "/alerts/rules/preview.json?kind=kv_usage"]
)
def test_every_page_needs_a_login(db: None, url: str) -> None:
    answer = Client().get(url)
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_with_nothing_yet_the_page_says_so_plainly(client: Client) -> None:
    html = client.get("/alerts/").content.decode()
    assert "No alert is firing." in html
    assert "No evaluation has run yet." in html
    assert "No channel yet" in html
    assert "No alert has changed state yet." in html
    assert "No alert rule yet." in html


def test_a_firing_and_a_pending_alert_and_a_failing_channel_are_shown(client: Client) -> None:
    rule = _rule()
    now = timezone.now()
    evaluation = Evaluation.objects.create(at=now, duration_ms=42.4, rules=1, subjects=2)
    firing = AlertState.objects.create(
        rule=rule,
        subject="gpu-7",
        state="firing",
        since=now - timedelta(minutes=12),
        value=0.97,
        summary="KV usage 97% for 12 min",
        evaluated_at=now,
    )
    AlertState.objects.create(
        rule=rule,
        subject="gpu-8",
        state="pending",
        since=now - timedelta(minutes=2),
        value=0.96,
        summary="KV usage 96% for 2 min",
        evaluated_at=now,
    )
    Transition.objects.create(
        alert=firing,
        evaluation=evaluation,
        from_state="pending",
        to_state="firing",
        at=now - timedelta(minutes=7),
        summary="KV usage 97% for 7 min",
    )
    Channel.objects.create(
        name="ops-hook",
        kind="webhook",
        target="https://hooks.example.com/x",
        failing_since=now - timedelta(hours=1),
        last_error="HTTP 410 Gone from hooks.example.com",
    )

    html = client.get("/alerts/").content.decode()

    firing_table = html[html.index('id="firing"') : html.index('id="channels"')]
    assert firing_table.index("gpu-7") < firing_table.index("gpu-8")  # firing before pending
    assert '<span class="badge bad">firing</span>' in firing_table
    assert '<span class="badge warn">pending</span>' in firing_table
    assert "KV usage 97% for 12 min" in firing_table and "0.970" in firing_table
    assert "KV-cache usage" in firing_table  # the kind's human label
    assert "failing since" in html and "HTTP 410 Gone from hooks.example.com" in html
    assert "took 42 ms over 1 rule and 2 subjects" in html
    history = html[html.index('id="history"') :]
    assert "KV usage 97% for 7 min" in history and "pending</span> →" in history


def test_an_evaluation_older_than_five_minutes_says_the_worker_may_be_down(
    client: Client,
) -> None:
    Evaluation.objects.create(at=timezone.now())
    Evaluation.objects.update(started_at=timezone.now() - timedelta(hours=2))
    html = client.get("/alerts/").content.decode()
    assert '<span class="badge bad">stale</span>' in html
    assert "the worker or beat is probably not running" in html


def test_a_rule_named_with_a_script_tag_is_escaped_everywhere(client: Client) -> None:
    rule = _rule(SCRIPT)
    now = timezone.now()
    state = AlertState.objects.create(
        rule=rule, subject=SCRIPT, state="firing", since=now, summary=SCRIPT, evaluated_at=now
    )
    Transition.objects.create(alert=state, from_state="pending", to_state="firing", at=now)
    for url in ("/alerts/", f"/alerts/rules/{rule.pk}/"):
        html = client.get(url).content.decode()
        assert SCRIPT not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_an_invalid_rule_shows_the_one_line_reason_and_saves_nothing(client: Client) -> None:
    answer = client.post("/alerts/rules/new/", _kv_form(threshold="1.5"))
    assert answer.status_code == 422
    html = answer.content.decode()
    error = html[html.index('class="error rule-error"') :].split("</p>")[0]
    assert "between 0 and 1" in error and "\n" not in error
    assert AlertRule.objects.count() == 0


def test_a_bad_duration_and_bad_params_are_refused_next_to_the_form(client: Client) -> None:
    answer = client.post("/alerts/rules/new/", _kv_form(for_duration="soon"))
    assert "for must look like 30s, 5m, 1h or 1d, got &#x27;soon&#x27;" in answer.content.decode()
    answer = client.post("/alerts/rules/new/", _kv_form(params="[1, 2]"))
    assert "params must be a JSON object" in answer.content.decode()
    answer = client.post("/alerts/rules/new/", _kv_form(scope_kind="instance"))
    assert "name the instance this rule watches" in answer.content.decode()
    assert AlertRule.objects.count() == 0


def test_a_valid_rule_is_saved_with_its_channels_and_the_page_lists_it(
    client: Client, user: Any
) -> None:
    hook = Channel.objects.create(name="hook", kind="webhook", target="https://h.example.com/")
    mail = Channel.objects.create(name="mail", kind="email", target="ops@example.com")
    Channel.objects.create(name="unused", kind="email", target="x@example.com")
    form = _kv_form(
        scope_kind="instance", scope_name="gpu-flap", repeat="never", channels=[hook.pk, mail.pk]
    )

    answer = client.post("/alerts/rules/new/", form)

    assert answer.status_code == 302 and answer["Location"] == "/alerts/"
    rule = AlertRule.objects.get()
    assert (rule.name, rule.kind, rule.threshold) == ("kv saturated", "kv_usage", 0.95)
    assert rule.scope == {"instance": "gpu-flap"}
    assert (rule.for_seconds, rule.repeat_seconds, rule.params) == (300, 0, {})
    assert sorted(c.name for c in rule.channels.all()) == ["hook", "mail"]
    assert rule.enabled and rule.created_by == user
    rules_table = client.get("/alerts/").content.decode().split('id="rules-table"')[1]
    assert "kv saturated" in rules_table and "instance gpu-flap" in rules_table
    assert "hook, mail" in rules_table


def test_editing_a_rule_shows_its_values_and_saves_over_it(client: Client) -> None:
    rule = _rule(
        scope={"team": "web"}, params={"window": "5m"}, kind="preemption_rate", threshold=1
    )
    html = client.get(f"/alerts/rules/{rule.pk}/").content.decode()
    assert '<option value="team" selected>' in html and 'value="web"' in html
    assert 'value="5m"' in html and "{&quot;window&quot;: &quot;5m&quot;}" in html

    form = _kv_form(name="kv high", kind="preemption_rate", threshold="2", for_duration="0")
    form.update(scope_kind="team", scope_name="web", params='{"window": "10m"}')
    answer = client.post(f"/alerts/rules/{rule.pk}/", form)

    assert answer.status_code == 302
    rule.refresh_from_db()
    assert (rule.threshold, rule.for_seconds, rule.params) == (2, 0, {"window": "10m"})
    assert AlertRule.objects.count() == 1


def test_the_preview_shows_the_flapping_kv_incident_without_saving(
    client: Client, lake: Path
) -> None:
    scenarios.load_flapping_kv()

    answer = client.post("/alerts/rules/new/", _kv_form(name="", action="preview"))

    assert answer.status_code == 200
    html = answer.content.decode()
    incidents = html[html.index('id="incidents"') :].split("</table>")[0]
    assert incidents.count("<tr>") == 2  # the header and one incident
    assert "gpu-flap" in incidents
    assert "2026-01-14 08:33:59" in incidents and "2026-01-14 08:42:59" in incidents
    assert (
        'Preview: <time datetime="2026-01-13T09:20:00Z" data-precision="minute">2026-01-13 09:20'
        '</time> to <time datetime="2026-01-14T09:20:00Z" data-precision="minute">2026-01-14 09:20'
        '</time> <span class="tz" data-zone-label>UTC</span>'
    ) in html
    assert 'data-src="/alerts/rules/preview.json?' in html
    assert AlertRule.objects.count() == 0


def test_the_preview_chart_draws_the_pending_stretch_and_the_firing_bar(
    client: Client, lake: Path
) -> None:
    scenarios.load_flapping_kv()
    query = {
        "kind": "kv_usage",
        "threshold": "0.95",
        "scope_kind": "all",
        "for_duration": "5m",
        "params": "{}",
        "end": END,
    }
    fig = orjson.loads(client.get("/alerts/rules/preview.json", query).content)
    pending, firing = fig["data"]
    assert firing["y"] == ["gpu-flap"] and firing["base"] == ["2026-01-14T08:33:59Z"]
    assert firing["x"] == [9 * 60 * 1000]  # to 08:42:59
    assert pending["base"] == ["2026-01-14T08:28:59Z"] and pending["x"] == [5 * 60 * 1000]
    assert fig["layout"]["xaxis"]["range"] == ["2026-01-13T09:20:00Z", END]


@pytest.mark.parametrize("name", ["end", "to"])
def test_the_editor_takes_the_previews_end_from_the_query_string(client: Client, name: str) -> None:
    html = client.get(f"/alerts/rules/new/?{name}={END}").content.decode()
    assert f'<input type="hidden" name="end" value="{END}" id="id_end">' in html


def test_a_preview_with_nothing_to_fire_on_says_so(client: Client, lake: Path) -> None:
    scenarios.load_flapping_kv()
    answer = client.post("/alerts/rules/new/", _kv_form(threshold="0.99", action="preview"))
    html = answer.content.decode()
    assert "This rule would not have fired in the last 24 hours." in html
    assert 'class="chart"' not in html


def test_the_silence_form_creates_a_silence_and_ending_it_lifts_it(client: Client) -> None:
    rule = _rule()
    form = {"rule": rule.pk, "subject": "gpu-*", "duration": "2h", "comment": "reboots"}

    answer = client.post("/alerts/silences/", form)

    assert answer.status_code == 302
    silence = Silence.objects.get()
    assert (silence.rule, silence.subject, silence.comment) == (rule, "gpu-*", "reboots")
    left = silence.ends_at - timezone.now()
    assert timedelta(minutes=119) < left <= timedelta(hours=2)
    assert "reboots" in client.get("/alerts/").content.decode()

    client.post(f"/alerts/silences/{silence.pk}/end/")
    silence.refresh_from_db()
    assert silence.ends_at <= timezone.now()
    assert "No silence is active" in client.get("/alerts/").content.decode()


def test_a_silence_for_every_rule_and_a_bad_duration(client: Client) -> None:
    client.post("/alerts/silences/", {"rule": "", "subject": "", "duration": "30m"})
    assert Silence.objects.get().rule is None
    answer = client.post("/alerts/silences/", {"rule": "", "duration": "forever"})
    assert answer.status_code == 422
    assert "duration must look like 30s, 5m, 1h or 1d" in answer.content.decode()
    assert Silence.objects.count() == 1


def test_a_rule_is_disabled_and_enabled_from_the_rules_table(client: Client) -> None:
    rule = _rule()
    client.post(f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "off"})
    rule.refresh_from_db()
    assert not rule.enabled
    client.post(f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "on"})
    rule.refresh_from_db()
    assert rule.enabled


def test_a_form_posted_without_its_csrf_token_is_refused(user: object) -> None:
    c = Client(enforce_csrf_checks=True)
    c.force_login(user)  # type: ignore[arg-type]
    rule = _rule()
    for url, data in [
        ("/alerts/rules/new/", _kv_form()),
        ("/alerts/silences/", {"duration": "1h"}),
        (f"/alerts/rules/{rule.pk}/enabled/", {"enabled": "off"}),
    ]:
        assert c.post(url, data).status_code == 403
    assert AlertRule.objects.count() == 1 and Silence.objects.count() == 0
    html = c.get("/alerts/").content.decode()
    assert html.count("csrfmiddlewaretoken") == html.count('method="post"')


def _csv(client: Client, table: str) -> list[dict[str, str]]:
    answer: Any = client.get(f"/alerts/?format=csv&table={table}")
    assert answer.status_code == 200, table
    assert answer["Content-Disposition"] == (
        f'attachment; filename="fleetscope-alerts-{table}.csv"'
    )
    body = b"".join(answer.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


def test_every_table_of_the_page_downloads_as_csv(client: Client) -> None:
    rule = _rule(threshold=0.95, for_seconds=300)
    now = timezone.now().replace(microsecond=0)
    evaluation = Evaluation.objects.create(at=now, duration_ms=1, rules=1, subjects=1)
    channel = Channel.objects.create(
        name="ops-hook", kind="webhook", target="https://hooks.example.com/x",
        failing_since=now - timedelta(hours=1), last_error="=HTTP 410",
    )  # fmt: skip
    rule.channels.add(channel)
    firing = AlertState.objects.create(
        rule=rule, subject="gpu-7", state="firing", since=now - timedelta(minutes=12),
        value=0.97, summary="KV usage 97% for 12 min", evaluated_at=now,
    )  # fmt: skip
    for minutes in range(60):  # more than the page's 50 rows of history
        Transition.objects.create(
            alert=firing, evaluation=evaluation, from_state="pending", to_state="firing",
            at=now - timedelta(minutes=minutes), summary=f"change {minutes}",
        )  # fmt: skip
    Silence.objects.create(rule=rule, subject="gpu-8", ends_at=now + timedelta(hours=1))
    html = client.get("/alerts/").content.decode()
    for table in ("firing", "channels", "silences", "history", "rules"):
        assert f'href="/alerts/?format=csv&amp;table={table}"' in html, table

    assert _csv(client, "firing") == [
        {
            "rule": "kv high", "kind": "KV-cache usage", "subject": "gpu-7", "state": "firing",
            "silenced": "false", "since": (now - timedelta(minutes=12)).isoformat(),
            "value": "0.97", "summary": "KV usage 97% for 12 min",
        }
    ]  # fmt: skip
    (hook,) = _csv(client, "channels")
    assert (hook["channel"], hook["kind"], hook["target"]) == (
        "ops-hook", "JSON webhook (signed)", "https://hooks.example.com/x",
    )  # fmt: skip
    assert hook["last_error"] == "'=HTTP 410"  # a formula, defused
    (silence,) = _csv(client, "silences")
    assert (silence["rule"], silence["subject"]) == ("kv high", "gpu-8")
    history = _csv(client, "history")
    assert len(history) == 60  # every change, not the page's 50
    assert [h["summary"] for h in history[:2]] == ["change 0", "change 1"]  # newest first
    assert history[0]["at"] == now.isoformat()
    (rule_row,) = _csv(client, "rules")
    assert (rule_row["rule"], rule_row["threshold"], rule_row["for_seconds"]) == (
        "kv high", "0.95", "300",
    )  # fmt: skip
    assert (rule_row["channels"], rule_row["firing"], rule_row["enabled"]) == (
        "ops-hook", "1", "true",
    )  # fmt: skip
    assert client.get("/alerts/?format=csv&table=nope").status_code == 404
