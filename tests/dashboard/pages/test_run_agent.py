"""dashboard/pages/run_agent.py: the agent page and its timeline JSON for the hand-made run
of tests/analytics/runs/agent_world.py (figures worked out there), its 404s, escaping of
an agent named like markup, and the run page's tree linking each agent to its page with
its own and its subtree's USD."""

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.costs.models import ModelPrice
from tests.analytics.runs.agent_world import GPT5_ROW, load_crew

XSS_URL = "/runs/crew/agents/%3Cb%3Ex%3C/b%3E/"


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any) -> Client:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(**GPT5_ROW)
    load_crew()
    client.force_login(user)
    return client


def _html(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def _text(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', html, re.S)
    assert found, element_id
    return found.group(1).strip()


@pytest.mark.parametrize("url", ["/runs/crew/agents/w1/", "/runs/crew/agents/w1/timeline.json"])
def test_an_anonymous_visitor_is_sent_to_log_in(url: str, client: Client, db: None) -> None:
    response = client.get(url)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_the_agent_page_shows_its_place_tiles_and_gaps(signed_in: Client) -> None:
    html = _html(signed_in, "/runs/crew/agents/w1/")
    assert _text(html, "agent-role") == "worker"
    assert 'href="/runs/crew/agents/p1/" id="agent-parent">p1</a>' in html
    assert 'href="/runs/crew/#agents" id="agent-run">crew</a>' in html
    assert _text(html, "stat-events") == "10"
    assert _text(html, "stat-error-rate") == "28.6%"  # 2 errors of 7 attempts
    assert _text(html, "stat-tokens") == "1.7k"  # 1,510 in + 160 out
    assert _text(html, "stat-usd") == "$0.50"  # $0.00225 + the logged $0.50
    assert _text(html, "stat-unpriced") == "1 unpriced, not in the total"
    assert "2 errors of 7 attempts" in html
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td class=\"num\">(.*?)</td></tr>", html)
    assert len(rows) == 9
    assert 'datetime="2026-01-14T10:10:30Z"' in rows[0][0]
    assert rows[0][2] == "29m 30s"  # 1,770 seconds
    assert [r[2] for r in rows[1:4]] == ["19m", "4m", "2m 59s"]
    # Each lane's count, in the lanes' order, one of a kind named in the singular.
    assert (
        "1 spawn · 3 LLM calls · 1 tool call · 1 commit · 1 push · 1 handoff · 2 errors</p>" in html
    )
    assert 'data-src="/runs/crew/agents/w1/timeline.json"' in html
    assert "No agent names w1 as its parent" in html


def test_a_planner_links_to_each_child(signed_in: Client) -> None:
    html = _html(signed_in, "/runs/crew/agents/p1/")
    links = re.findall(r'<li><a href="([^"]+)">([^<]*)</a>', html)
    assert links == [
        (XSS_URL, "&lt;b&gt;x&lt;/b&gt;"),
        ("/runs/crew/agents/w1/", "w1"),
        ("/runs/crew/agents/w2/", "w2"),
    ]


def test_an_agent_named_like_markup_is_escaped(signed_in: Client) -> None:
    html = _html(signed_in, XSS_URL)
    assert "<b>x</b>" not in html
    assert '<span class="agent-name">&lt;b&gt;x&lt;/b&gt;</span>' in html


def test_a_parent_that_never_logged_says_so(signed_in: Client) -> None:
    html = _html(signed_in, "/runs/crew/agents/lead/")
    assert "lead logged nothing itself" in html
    assert "data-src=" not in html  # no chart to draw
    assert '<li><a href="/runs/crew/agents/w3/">w3</a>' in html
    assert "A root of the tree" in html


def test_unknown_agents_and_runs_are_404_pages(signed_in: Client) -> None:
    for url in (
        "/runs/crew/agents/nobody/",
        "/runs/nope/agents/w1/",
        "/runs/crew/agents/nobody/timeline.json",
    ):
        assert signed_in.get(url).status_code == 404, url


def test_the_timeline_json_draws_a_trace_per_lane(signed_in: Client) -> None:
    response = signed_in.get("/runs/crew/agents/w1/timeline.json")
    assert response["Content-Type"] == "application/json"
    fig = orjson.loads(response.content)
    counts = {trace["name"]: len(trace["x"]) for trace in fig["data"]}
    assert counts == {
        "spawns": 1, "LLM calls": 3, "tool calls": 1, "commits": 1, "pushes": 1,
        "handoffs": 1, "errors": 2,
    }  # fmt: skip


def test_the_run_pages_tree_links_every_agent_and_prices_it(signed_in: Client) -> None:
    html = _html(signed_in, "/runs/crew/")
    for agent, url in (
        ("root", "/runs/crew/agents/root/"),
        ("w1", "/runs/crew/agents/w1/"),
        ("&lt;b&gt;x&lt;/b&gt;", XSS_URL),
    ):
        assert f'<a class="name" href="{url}"' in html, agent
    node = re.search(r'data-node="p1">(.*?)</div>', html, re.S)
    assert node
    cells = re.findall(r'<span class="num[^"]*"[^>]*>(.*?)</span>', node.group(1), re.S)
    assert cells[4] == "$0.01"  # p1's own call: 1,000 out x $10 per MTok
    # Its subtree: $0.01 + w1's $0.50225 + w2's $0.0025 = $0.51475; w1 left 1 call unpriced.
    assert '<span class="subtree-usd">$0.51</span> (+1 unpriced)' in node.group(1)
    w1 = re.search(r'data-node="w1">(.*?)</div>', html, re.S)
    assert w1
    assert '$0.50<span class="unpriced">*</span>' in w1.group(1)
    fragment = _html(signed_in, "/runs/crew/?fragment=tree")
    assert '<a class="name" href="/runs/crew/agents/w2/"' in fragment
