"""dashboard/pages/runs.py: the runs list, a run's page, its chart JSON and its fragments."""

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.runs import status
from tests.dashboard.runs_data import XSS, load_runs

RUN_URLS = (
    "/",
    "/runs/tiny/",
    "/runs/tiny/charts/commit-rate.json",
    "/runs/tiny/charts/error-rate.json",
)


# Ten minutes after tiny's last event (12:30): still logging, an hour since its last commit.
NOW = datetime(2026, 1, 14, 12, 40, tzinfo=UTC)


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any, monkeypatch: pytest.MonkeyPatch) -> Client:
    monkeypatch.setattr(status, "now_utc", lambda: NOW)
    load_runs()
    client.force_login(user)
    return client


def figure(client: Client, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return dict(orjson.loads(response.content))


@pytest.mark.parametrize("url", RUN_URLS)
def test_every_runs_view_sends_an_anonymous_visitor_to_the_login_page(
    url: str, client: Client, db: None
) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


def test_an_unknown_run_is_a_finished_404_page(signed_in: Client) -> None:
    response = signed_in.get("/runs/nope/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Nothing here" in html
    assert "There is no run named &#x27;nope&#x27;." in html
    assert 'href="/"' in html
    assert signed_in.get("/runs/nope/charts/commit-rate.json").status_code == 404


def test_the_runs_list_shows_each_run_with_its_figures_and_status(signed_in: Client) -> None:
    response = signed_in.get("/")
    assert response.status_code == 200
    rows = {r.totals.run: r for r in response.context["rows"]}
    tiny, done = rows["tiny"], rows["done"]
    totals = tiny.totals
    assert (totals.agents, totals.commits, totals.errors, tiny.attempts) == (5, 3, 2, 9)
    assert tiny.error_rate == 2 / 9
    assert (tiny.tokens, tiny.state, tiny.badge) == (165, "stalled", "bad")
    assert tiny.stalled_minutes == 60.0
    assert (done.state, done.totals.commits, done.error_rate) == ("finished", 1, 0.0)
    html = response.content.decode()
    assert '<a href="/runs/tiny/">tiny</a>' in html
    assert '<span class="badge bad">stalled</span> <span class="muted">1h</span>' in html
    assert '<td class="num">22.2%</td>' in html


def test_with_no_runs_the_list_says_how_to_ingest(lake: Path, client: Client, user: Any) -> None:
    client.force_login(user)
    html = client.get("/").content.decode()
    assert "No runs yet" in html
    assert "python manage.py ingest agent-events PATH..." in html


def test_the_run_page_shows_stats_drift_stalls_and_the_tree(signed_in: Client) -> None:
    response = signed_in.get("/runs/tiny/?bucket=1h")
    assert response.status_code == 200
    c = response.context
    assert (c["commits"], c["peak"].commits, c["errors"], c["attempts"]) == (3, 2, 2, 9)
    assert c["error_rate"] == 2 / 9
    assert (c["agents_active"], c["tokens"], c["state"]) == (5, 165, "stalled")
    assert c["current_stall"].minutes == 60.0
    assert [(s.start.strftime("%H:%M"), s.end.strftime("%H:%M")) for s in c["stalls"]] == [
        ("10:30", "11:40")
    ]
    assert c["drift"].trend == "flat"
    # hourly rates 1/3, 1/3, 0: S = -2 over 2 untied pairs; of the 3 orders of those
    # values, 2 are as extreme (S = +-2): p = 2/3, exact
    assert c["drift_text"] == "flat: -16.67 pp/h, p = 0.67 (3 of 6 buckets needed)"
    html = response.content.decode()
    assert '<div class="value" id="stat-stall">1h</div>' in html
    assert '<div class="value" id="stat-commits">3</div>' in html
    assert (
        '<td><time datetime="2026-01-14T10:30:00Z" data-precision="second">2026-01-14 10:30:00'
        '</time></td><td><time datetime="2026-01-14T11:40:00Z" data-precision="second">'
        "2026-01-14 11:40:00</time></td>"
    ) in html
    assert (
        'data-src="/runs/tiny/charts/commit-rate.json?bucket=1h&amp;min_gap=30m&amp;last=all"'
        in html
    )


def test_agent_labels_are_escaped_everywhere(signed_in: Client) -> None:
    html = signed_in.get("/runs/tiny/").content.decode()
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    tree = signed_in.get("/runs/tiny/?fragment=tree").content.decode()
    assert XSS not in tree
    assert 'data-node="&lt;script&gt;alert(1)&lt;/script&gt;"' in tree


def test_the_tree_nests_agents_under_their_parents_with_subtree_totals(signed_in: Client) -> None:
    c = signed_in.get("/runs/tiny/").context
    [root] = c["tree"]
    [p1] = root.children
    assert [n.agent for n in p1.children] == ["w1", "w2", XSS]
    assert (p1.subtree.agents, p1.subtree.commits, p1.subtree.errors, p1.subtree.tokens) == (
        4,
        3,
        2,
        165,
    )
    assert c["open_depth"] == 2  # five agents fit: root and p1 open, so everyone shows


def test_the_commit_chart_is_the_api_answer_with_stalls_shaded(
    signed_in: Client, auth_headers: dict[str, str]
) -> None:
    fig = figure(signed_in, "/runs/tiny/charts/commit-rate.json?bucket=1h")
    api = signed_in.get("/api/runs/tiny/commit-rate?bucket=1h").json()
    bars = fig["data"][0]
    assert bars["y"] == [p["commits"] for p in api["points"]] == [2, 1, 0]
    assert [t[:19] for t in bars["x"]] == [
        "2026-01-14T10:00:00",
        "2026-01-14T11:00:00",
        "2026-01-14T12:00:00",
    ]
    assert fig["data"][1]["y"] == [2, 3, 3]
    stalls = signed_in.get("/api/runs/tiny/stalls?min_gap=30m").json()
    shapes = fig["layout"]["shapes"]
    assert [(s["x0"][:19], s["x1"][:19], s["name"]) for s in shapes] == [
        (
            stalls["stalls"][0]["start"][:19],
            stalls["stalls"][0]["end"][:19],
            "stall (no commit for 30m+)",
        ),
        ("2026-01-14T11:40:00", "2026-01-14T12:30:00", "stalled now"),
    ]


def test_the_error_chart_is_the_api_answer_with_its_drift(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/tiny/charts/error-rate.json?bucket=1h")
    api = signed_in.get("/api/runs/tiny/error-rate?bucket=1h").json()
    attempts, rate = fig["data"][0], fig["data"][1]
    assert attempts["y"] == [p["attempts"] for p in api["points"]] == [6, 2, 1]
    assert rate["y"] == [p["rate"] for p in api["points"]] == [2 / 6, 0.0, 0.0]
    assert rate["customdata"] == [2, 0, 0]
    assert (
        fig["layout"]["annotations"][0]["text"]
        == "drift flat: -16.67 pp/h, p = 0.67 (3 of 6 buckets needed)"
    )
    assert api["drift"]["p_value"] == pytest.approx(2 / 3)


def test_a_preset_counts_back_from_the_runs_last_event(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/tiny/charts/commit-rate.json?last=1h&bucket=15m")
    bars = fig["data"][0]
    assert [t[11:16] for t in bars["x"]] == ["11:30", "11:45", "12:00", "12:15", "12:30"]
    assert bars["y"] == [1, 0, 0, 0, 0]
    c = signed_in.get("/runs/tiny/?last=1h").context
    assert (c["window"].start.isoformat(), c["window"].end) == ("2026-01-14T11:30:00+00:00", None)
    assert c["commits"] == 1


def test_an_explicit_range_is_read_as_utc(signed_in: Client) -> None:
    c = signed_in.get("/runs/tiny/?from=2026-01-14T10:00&to=2026-01-14T10:30&bucket=5m").context
    assert (c["commits"], c["errors"], c["attempts"]) == (1, 2, 5)
    assert c["window"].description == "2026-01-14 10:00 to 2026-01-14 10:30"
    assert c["window"].params() == {
        "bucket": "5m",
        "min_gap": "30m",
        "start": "2026-01-14T10:00",
        "end": "2026-01-14T10:30",
    }


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("bucket=7x", "bucket must look like 30s, 5m, 1h or 1d, got &#x27;7x&#x27;"),
        ("min_gap=soon", "min_gap must look like 30s, 5m, 1h or 1d, got &#x27;soon&#x27;"),
        (
            "from=2026-01-14T11:00&amp;to=2026-01-14T10:00".replace("&amp;", "&"),
            "start must be before end",
        ),
    ],
)
def test_bad_parameters_answer_422_with_the_reason(
    signed_in: Client, query: str, message: str
) -> None:
    response = signed_in.get(f"/runs/tiny/?{query}")
    assert response.status_code == 422
    assert message in response.content.decode()
    chart = signed_in.get(f"/runs/tiny/charts/error-rate.json?{query}")
    assert chart.status_code == 422


def test_fragments_are_the_parts_auto_refresh_reloads(signed_in: Client) -> None:
    summary = signed_in.get("/runs/tiny/?fragment=summary&bucket=1h").content.decode()
    assert "<html" not in summary
    assert '<div class="value" id="stat-commits">3</div>' in summary
    table = signed_in.get("/?fragment=table").content.decode()
    assert "<html" not in table
    assert len(re.findall(r'<tr>\s*<td class="run-name">', table)) == 2


def test_a_range_after_the_spawns_keeps_the_tree_and_counts_only_inside_it(
    signed_in: Client,
) -> None:
    c = signed_in.get("/runs/tiny/?from=2026-01-14T11:00").context
    [root] = c["tree"]
    [p1] = root.children
    assert (root.agent, root.role, p1.role) == ("root", "root_planner", "planner")
    assert [(n.agent, n.role, n.own.events, n.own.commits) for n in p1.children] == [
        ("w1", "worker", 2, 1),
        (XSS, "worker", 0, 0),
        ("w2", "worker", 1, 0),
    ]
    assert (c["agents_active"], c["roles"]) == (2, [("worker", 2)])
    html = signed_in.get("/runs/tiny/?from=2026-01-14T11:00&fragment=tree").content.decode()
    assert '<li class=" quiet" data-node="root">' not in html
    assert 'class="has-children open quiet" data-node="root"' in html


def test_a_server_error_shows_the_finished_500_page(
    signed_in: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("warehouse on fire")

    monkeypatch.setattr("dashboard.pages.runs_list.list_runs_page", broken)
    signed_in.raise_request_exception = False
    response = signed_in.get("/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html
    assert "warehouse on fire" not in html


def test_the_page_links_to_the_same_window_in_the_api(signed_in: Client) -> None:
    html = signed_in.get("/runs/tiny/?last=1h&bucket=15m&min_gap=1h").content.decode()
    window = "start=2026-01-14T11%3A30%3A00Z"
    assert f'href="/api/runs/tiny/commit-rate?bucket=900s&amp;{window}"' in html
    assert f'href="/api/runs/tiny/stalls?min_gap=1h&amp;{window}"' in html
    assert f'href="/api/runs/tiny/agents?{window}"' in html
    whole = signed_in.get("/runs/tiny/").content.decode()
    assert 'href="/api/runs/tiny/agents">agents</a>' in whole


def test_the_list_and_the_page_count_the_stall_to_now_and_drop_it_once_quiet(
    signed_in: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(status, "now_utc", lambda: datetime(2026, 1, 14, 12, 45, tzinfo=UTC))
    [tiny] = [r for r in signed_in.get("/").context["rows"] if r.totals.run == "tiny"]
    page = signed_in.get("/runs/tiny/").context
    api = signed_in.get("/api/runs/tiny/stalls").json()["current"]
    assert tiny.stalled_minutes == page["current_stall"].minutes == api["minutes"] == 65.0
    # 16 minutes after its last event the run is no longer logging: idle, no current stall.
    monkeypatch.setattr(status, "now_utc", lambda: datetime(2026, 1, 14, 12, 46, tzinfo=UTC))
    [tiny] = [r for r in signed_in.get("/").context["rows"] if r.totals.run == "tiny"]
    assert (tiny.state, tiny.stalled_minutes) == ("idle", None)
    assert signed_in.get("/runs/tiny/").context["current_stall"] is None
    assert signed_in.get("/api/runs/tiny/stalls").json()["current"] is None
