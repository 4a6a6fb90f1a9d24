"""GET /api/runs's search, filters, sort and paging (analytics/runs/api.py over listing.py):
each parameter through the test client, against listing_world's six runs listed by hand."""

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from analytics.costs.models import Team
from analytics.runs import status
from tests.analytics.runs.listing_world import NOW, SESSION_1, SESSION_2, load_listing_world

S1, S2 = SESSION_1, SESSION_2


@pytest.fixture
def world(lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_listing_world()
    monkeypatch.setattr(status, "now_utc", lambda: NOW)


def listed(client: Client, headers: dict[str, str], query: str) -> list[str]:
    response = client.get(f"/api/runs?{query}", headers=headers)
    assert response.status_code == 200, response.content
    return [run["run"] for run in response.json()]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["gamma", "beta", "alpha", "delta", S1, S2]),  # the latest first
        ("q=SESSION", [S1, S2]),
        ("q=invoices", [S2]),  # a session's branch
        ("status=stalled", ["beta"]),
        ("status=idle", ["delta", S1, S2]),
        ("source=codex", [S2]),
        ("model=claude-x", ["delta"]),
        ("start=2026-01-14T12:00:00Z", ["gamma", "beta"]),
        ("end=2026-01-14T08:00:00Z", [S2]),
        ("start=2026-01-14T08:15:00Z&end=2026-01-14T10:00:00Z", ["delta", S1]),
        ("sort=name", [S1, S2, "alpha", "beta", "delta", "gamma"]),
        ("sort=-tokens", [S1, "alpha", S2, "delta", "beta", "gamma"]),
        ("sort=-agents", [S2, "alpha", "beta", "delta", S1, "gamma"]),  # ties by name
        ("limit=2", ["gamma", "beta"]),
    ],
)
def test_each_parameter_narrows_or_orders_the_list(
    client: Client, auth_headers: dict[str, str], world: None, query: str, expected: list[str]
) -> None:
    assert listed(client, auth_headers, query) == expected


def test_a_listed_run_carries_its_status_and_session_label(
    client: Client, auth_headers: dict[str, str], world: None
) -> None:
    runs = {r["run"]: r for r in client.get("/api/runs", headers=auth_headers).json()}
    assert runs["beta"]["status"] == "stalled"
    assert runs["alpha"]["status"] == "finished"
    assert (runs[S2]["tokens"], runs[S2]["errors"], runs[S2]["source_kind"]) == (75, 2, "codex")
    assert runs[S2]["label"] == "billing · feat/Invoices — Add CSV export"
    assert (runs[S2]["project"], runs[S2]["cwd"], runs[S2]["branch"]) == (
        "billing",
        "/srv/billing",
        "feat/Invoices",
    )
    assert runs[S2]["first_prompt"] == "Add CSV export"
    assert runs["alpha"]["label"] is None


def test_the_next_page_is_in_x_next_cursor_and_link(
    client: Client, auth_headers: dict[str, str], world: None
) -> None:
    first = client.get("/api/runs?sort=name&limit=4&source=agent-events", headers=auth_headers)
    assert [r["run"] for r in first.json()] == ["alpha", "beta", "delta", "gamma"]
    # Four agent-events runs and a limit of 4: nothing after them.
    assert "X-Next-Cursor" not in first.headers and "Link" not in first.headers
    page = client.get("/api/runs?sort=name&limit=2&source=agent-events", headers=auth_headers)
    assert [r["run"] for r in page.json()] == ["alpha", "beta"]
    cursor = page.headers["X-Next-Cursor"]
    link, rel = page.headers["Link"].split("; ")
    assert rel == 'rel="next"'
    url = urlsplit(link.strip("<>"))
    assert (url.scheme, url.netloc, url.path) == ("http", "testserver", "/api/runs")
    # The link keeps the filters and the sort, and moves the cursor on.
    assert parse_qs(url.query) == {
        "sort": ["name"],
        "limit": ["2"],
        "source": ["agent-events"],
        "cursor": [cursor],
    }
    second = client.get(f"/api/runs?{url.query}", headers=auth_headers)
    assert [r["run"] for r in second.json()] == ["delta", "gamma"]
    assert "X-Next-Cursor" not in second.headers


def test_the_team_parameter_takes_its_runs(
    client: Client, auth_headers: dict[str, str], world: None
) -> None:
    Team.objects.create(name="core", run_patterns=["al*"])
    Team.objects.create(name="ops", run_patterns=["delta", "gamma"])
    assert listed(client, auth_headers, "team=core") == ["alpha", S2]
    assert listed(client, auth_headers, "team=ops&sort=name") == ["delta", "gamma"]
    response = client.get("/api/runs?team=nobody", headers=auth_headers)
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "team is not one you may filter by"},
    )


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("sort=colour", "sort must be one of name, -name, source, -source, first_seen, "
         "-first_seen, last_seen, -last_seen, agents, -agents, events, -events, commits, "
         "-commits, errors, -errors, tokens, -tokens"),
        ("status=asleep", "status must be one of finished, stalled, active, idle"),
        ("limit=0", "limit must be between 1 and 1000"),
        ("cursor=not-a-cursor", "cursor is not one this list gave"),
        ("start=yesterday", "start must be an RFC 3339 time"),
    ],
)  # fmt: skip
def test_a_bad_parameter_is_a_422_with_one_line(
    client: Client, auth_headers: dict[str, str], world: None, query: str, detail: str
) -> None:
    response = client.get(f"/api/runs?{query}", headers=auth_headers)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)


def test_without_credentials_the_list_is_401(client: Client, db: None) -> None:
    assert client.get("/api/runs?q=alpha").status_code == 401
