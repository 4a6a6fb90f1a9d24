"""Every page and endpoint walked as an outsider: a member of team alpha sees none of team
bravo's runs, instances, spend, requests, channels or rules, and changes nothing of theirs.

The walk is not a list kept by hand: pages are every URL pattern (and every link an admin's
pages show, crawled), endpoints every operation in the API's OpenAPI schema, so a route
added later is walked too. Bravo's names all contain "bravo": an answer the outsider gets
either contains none of them, or is the very answer a name that does not exist gets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from analytics.alerts.models import AlertRule, Channel, Silence
from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget
from dashboard.api import api
from dashboard.models import ApiToken
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import ingest_body as ingest_events
from ingest.pipelines.requests import ingest_body as ingest_requests
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Scope
from tests.people import grant
from tests.vllm_text import EngineState, v1_text

SECRET = "bravo"
PASSWORD = "outsider-walk-password"


def _events(run: str, start: datetime) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(12):
        ts = (start + timedelta(minutes=5 * i)).isoformat().replace("+00:00", "Z")
        rows.append(
            {
                "ts": ts,
                "run": run,
                "agent": f"{run}-w{i % 3}",
                "event": "llm_call",
                "model": "gpt-5",
                "usage": {"input_tokens": 1000, "output_tokens": 100},
            }
        )
        rows.append(
            {
                "ts": ts,
                "run": run,
                "agent": f"{run}-w{i % 3}",
                "event": "tool_call",
                "tool": "bash",
                "ok": i % 4 != 0,
                "message": f"{run} failed",
            }
        )
        if i % 2:
            rows.append(
                {
                    "ts": ts,
                    "run": run,
                    "agent": f"{run}-w{i % 3}",
                    "event": "commit",
                    "commit": {"sha": f"{run}-{i:04d}", "subject": f"{run} change"},
                }
            )
    return rows


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


@pytest.fixture
def fleet(lake: object, db: None, django_user_model: Any) -> dict[str, Any]:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    start = now - timedelta(hours=1)
    alpha = Team.objects.create(name="alpha", run_patterns=["alpha-*"])
    bravo = Team.objects.create(name="bravo", run_patterns=["bravo-*"])
    ingest_events(_jsonl(_events("alpha-1", start) + _events("bravo-1", start)))
    ingest_requests(
        _jsonl(
            [
                {
                    "ts": start.isoformat(),
                    "request_id": f"{who}-{i}",
                    "model": "gpt-5",
                    "run": f"{who}-1",
                    "instance": f"gpu-{who}",
                    "prompt": f"{who} prompt {i}",
                }
                for who in ("alpha", "bravo")
                for i in range(3)
            ]
        ),
        "walk",
    )
    for who, team in (("alpha", alpha), ("bravo", bravo)):
        ScrapeTarget.objects.create(name=f"gpu-{who}", url=f"http://{who}:8000/metrics", team=team)
        scrapes = []
        for i in range(10):
            state = EngineState(
                kv_usage=0.5,
                running=2,
                waiting=1,
                preemptions=i,
                prefix_hits=10 * i,
                prefix_queries=20 * i,
                requests=i,
                ttft=(i, i, i, i),
                ttft_sum=0.05 * i,
            )
            text = v1_text({"0": state}, model=f"{who}-model")
            scrapes.append(
                PendingScrape(
                    f"gpu-{who}", start + timedelta(minutes=2 * i), scrape=parse_scrape(text)
                )
            )
        load_scrapes(scrapes)
    channel = Channel.objects.create(
        name="bravo-pager", kind="webhook", target="https://hooks.example.com/bravo", team=bravo
    )
    rule = AlertRule.objects.create(
        name="bravo-stall",
        kind="commit_stall",
        scope={"run": "bravo-1"},
        params={"min_gap": "10m"},
        team=bravo,
    )
    rule.channels.add(channel)
    silence = Silence.objects.create(
        rule=rule, subject="bravo-1", ends_at=now + timedelta(days=1), comment="bravo maintenance"
    )
    outsider = grant(
        django_user_model.objects.create_user("ann", password=PASSWORD), "editor", teams=(alpha,)
    )
    viewer = grant(
        django_user_model.objects.create_user("vic", password=PASSWORD), "viewer", teams=(alpha,)
    )
    admin = grant(django_user_model.objects.create_user("ada", password=PASSWORD), "admin")
    return {
        "rule": rule,
        "silence": silence,
        "channel": channel,
        "outsider": outsider,
        "viewer": viewer,
        "admin": admin,
        "alpha": alpha,
    }


def _patterns(resolvers: list[Any], prefix: str = "") -> Iterator[str]:
    for entry in resolvers:
        if isinstance(entry, URLResolver):
            route = prefix + str(entry.pattern)
            if not route.startswith(("admin/", "api/")):
                yield from _patterns(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def _names(fleet: dict[str, Any], control: bool) -> dict[str, str]:
    """What fills a route's parameters: bravo's names and ids, or (control) names and ids
    that do not exist."""
    if control:
        return {
            "run": "zulu-9",
            "instance": "gpu-zulu",
            "rule_id": "999999",
            "channel_id": "999997",
            "silence_id": "999998",
            "team": "zulu",
            "source": "zulu",
        }
    return {
        "run": "bravo-1",
        "instance": "gpu-bravo",
        "rule_id": str(fleet["rule"].pk),
        "channel_id": str(fleet["channel"].pk),
        "silence_id": str(fleet["silence"].pk),
        "team": "bravo",
        "source": "api/bravo",
    }


def _fill(route: str, fleet: dict[str, Any], names: dict[str, str], control: bool) -> str:
    values = _names(fleet, control)

    def one(match: re.Match[str]) -> str:
        name = match.group(2)
        return values.get(name) or names.get(name, "x")

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", one, route)


def _crawl(client: Client) -> set[str]:
    """Every same-site URL an admin's pages link to or fetch charts from."""
    seen: set[str] = set()
    todo = ["/", "/overview/", "/serving/", "/costs/", "/tokens/", "/alerts/"]
    while todo and len(seen) < 400:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        answer = client.get(url)
        if answer.status_code != 200 or "html" not in answer.get("Content-Type", ""):
            continue
        for found in re.findall(r'(?:href|data-src|action)="(/[^"#]*)"', answer.content.decode()):
            found = found.replace("&amp;", "&")
            if not found.startswith(("/static/", "/admin/", "/api/docs", "/accounts/logout")):
                todo.append(found)
    return seen


def _body(answer: Any) -> str:
    """The answer's text, streamed (a table's CSV) or not."""
    if answer.streaming:
        return b"".join(answer.streaming_content).decode(errors="replace")
    return str(answer.content.decode(errors="replace"))


def _leaks(answer: Any, control: Any) -> bool:
    """Bravo's names in an answer that is not just 'no such thing' (the answer the control
    name, which does not exist, gets)."""
    text = _body(answer)
    if SECRET not in text.lower():
        return False
    as_control = text.replace("bravo-1", "zulu-9").replace("gpu-bravo", "gpu-zulu")
    return not (
        answer.status_code == control.status_code
        and _unmasked(as_control) == _unmasked(_body(control))
    )


def _unmasked(page: str) -> str:
    """The page without its CSRF tokens, which Django masks afresh on every answer."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def _log_in(client: Client, username: str) -> Client:
    assert client.login(username=username, password=PASSWORD)
    return client


def test_an_outsider_sees_nothing_of_another_team_on_any_page(fleet: dict[str, Any]) -> None:
    admin = _log_in(Client(), "ada")
    crawled = _crawl(admin)
    assert any("bravo-1" in url for url in crawled)  # the admin's pages do link bravo's run
    outsider = _log_in(Client(), "ann")
    slug_names = {
        m.group(1): m.group(2)
        for url in crawled
        if (m := re.search(r"/charts/()([\w-]+)\.json", url))
    }
    routes = [_fill(r, fleet, slug_names, False) for r in _patterns(get_resolver().url_patterns)]
    controls = {
        _fill(r, fleet, slug_names, False): _fill(r, fleet, slug_names, True)
        for r in _patterns(get_resolver().url_patterns)
    }
    leaks = []
    for url in sorted(set(routes) | crawled):
        answer = outsider.get(url)
        control_url = controls.get(
            url, url.replace("bravo-1", "zulu-9").replace("gpu-bravo", "gpu-zulu")
        )
        if _leaks(answer, outsider.get(control_url)):
            leaks.append(f"{url} ({answer.status_code})")
    assert leaks == []
    # Alpha's own run is there for them, so the walk saw real pages.
    assert "alpha-1" in outsider.get("/").content.decode()


def _api_operations() -> Iterator[tuple[str, str, list[str]]]:
    schema = api.get_openapi_schema()
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            params = [p["name"] for p in op.get("parameters", []) if p.get("in") == "query"]
            yield method.upper(), path, params


def _api_url(path: str, params: list[str], fleet: dict[str, Any], control: bool) -> str:
    values = _names(fleet, control)
    url = re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), "x"), path)
    query = "&".join(f"{p}={values[p]}" for p in params if p in values)
    return url + ("?" + query if query else "")


def test_an_outsider_reads_nothing_of_another_team_through_the_api(fleet: dict[str, Any]) -> None:
    outsider = _log_in(Client(), "ann")
    walked = 0
    leaks = []
    for method, path, params in _api_operations():
        if method != "GET":
            continue
        for with_params in (params, []):
            url = _api_url(path, with_params, fleet, False)
            answer = outsider.get(url)
            walked += 1
            if _leaks(answer, outsider.get(_api_url(path, with_params, fleet, True))):
                leaks.append(f"{url} ({answer.status_code})")
    assert walked > 30
    assert leaks == []


def test_a_viewer_changes_nothing_and_an_outsider_nothing_of_another_team(
    fleet: dict[str, Any],
) -> None:
    viewer = _log_in(Client(enforce_csrf_checks=False), "vic")
    for method, path, params in _api_operations():
        if method == "GET" or path in ("/api/tokens/count",):
            continue
        url = _api_url(path, params, fleet, False)
        answer = viewer.generic(method, url, b"{}", content_type="application/json")
        assert answer.status_code == 403, (method, url, answer.status_code)
        assert answer.json()["detail"]
    rule, silence = fleet["rule"], fleet["silence"]
    outsider = _log_in(Client(), "ann")
    for url in (
        f"/alerts/rules/{rule.pk}/enabled/",
        f"/alerts/rules/{rule.pk}/",
        f"/alerts/silences/{silence.pk}/end/",
    ):
        assert outsider.post(url, {"enabled": "0", "name": "mine now"}).status_code == 404
    rule.refresh_from_db()
    silence.refresh_from_db()
    assert (rule.enabled, rule.name) == (True, "bravo-stall")
    assert silence.ends_at > datetime.now(UTC)


def test_an_ingest_token_reads_nothing(fleet: dict[str, Any]) -> None:
    _, raw = ApiToken.issue(fleet["outsider"], "laptop", scope=Scope.INGEST)
    client = Client(headers={"Authorization": f"Bearer {raw}"})
    for method, path, params in _api_operations():
        if method != "GET" or path == "/api/health":
            continue
        answer = client.get(_api_url(path, params, fleet, False))
        assert answer.status_code == 403, path
        assert "ingest token" in answer.json()["detail"]
