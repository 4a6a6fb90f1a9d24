"""dashboard/pages/runs_list.py: the runs list's filter bar, sortable headings, pages and
CSV, against listing_world's six runs (tests/analytics/runs/listing_world.py) listed by
hand."""

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.costs.models import Team
from analytics.runs import status
from tests.analytics.runs.listing_world import NOW, SESSION_1, SESSION_2, load_listing_world

S1, S2 = SESSION_1, SESSION_2
ROW_RUN = re.compile(r'<td class="run-name">.*?<a href="/runs/([^/]+)/"', re.S)


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any, monkeypatch: pytest.MonkeyPatch) -> Client:
    monkeypatch.setattr(status, "now_utc", lambda: NOW)
    load_listing_world()
    client.force_login(user)
    return client


def page(client: Client, query: str = "") -> str:
    response = client.get(f"/?{query}")
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def rows(html: str) -> list[str]:
    return ROW_RUN.findall(html)


def test_the_list_is_the_latest_first_with_session_labels_beside_their_ids(
    signed_in: Client,
) -> None:
    html = page(signed_in)
    assert rows(html) == ["gamma", "beta", "alpha", "delta", S1, S2]
    assert "billing · feat/Invoices — Add CSV export</a>" in html
    assert f'<code class="session-id" title="session id">{S2}</code>' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("q=invoices", [S2]),
        ("status=stalled", ["beta"]),
        ("source=claude-code", [S1]),
        ("model=gpt-5.2", ["alpha"]),
        ("start=2026-01-14T12:00:00Z", ["gamma", "beta"]),
        ("end=2026-01-14T08:00:00Z", [S2]),
        ("status=idle&source=agent-events", ["delta"]),
    ],
)
def test_the_filter_bar_narrows_the_list_and_keeps_its_values(
    signed_in: Client, query: str, expected: list[str]
) -> None:
    html = page(signed_in, query)
    assert rows(html) == expected
    name, value = query.split("&")[0].split("=")
    if name in ("q", "model", "start", "end"):
        assert f'name="{name}" value="{value}"' in html
    else:
        assert f'<option value="{value}" selected>{value}</option>' in html
    assert '<a href="/">Clear filters</a>' in html  # no sort was asked: none kept


def test_a_heading_sorts_and_says_so_with_aria_sort(signed_in: Client) -> None:
    html = page(signed_in, "sort=-tokens")
    assert rows(html) == [S1, "alpha", S2, "delta", "beta", "gamma"]
    assert (
        '<th class="num" aria-sort="descending"><a class="sort sorted" href="/?sort=tokens">'
        in html
    )
    # Another numeric column's first click is largest first, a name's A to Z.
    assert 'href="/?sort=-events">Events</a>' in html
    assert 'href="/?sort=name">Run</a>' in html
    ascending = page(signed_in, "sort=tokens")
    assert rows(ascending) == ["beta", "gamma", "delta", S2, "alpha", S1]
    assert 'aria-sort="ascending"' in ascending


def test_the_pages_follow_one_another_and_the_filters_ride_along(signed_in: Client) -> None:
    first = page(signed_in, "source=agent-events&sort=name&limit=3")
    assert rows(first) == ["alpha", "beta", "delta"]
    assert "First page" not in first
    (next_url,) = re.findall(r'<a href="([^"]+)" rel="next">Next page', first)
    next_url = next_url.replace("&amp;", "&")
    assert next_url.startswith("/?source=agent-events&sort=name&limit=3&cursor=")
    second = signed_in.get(next_url).content.decode()
    assert rows(second) == ["gamma"]
    assert 'rel="next"' not in second
    assert '<a href="/?source=agent-events&amp;sort=name&amp;limit=3">« First page</a>' in second


def test_the_team_filter_is_kept_in_the_url(signed_in: Client) -> None:
    Team.objects.create(name="ops", run_patterns=["delta", "gamma"])
    html = page(signed_in, "team=ops&sort=name")
    assert rows(html) == ["delta", "gamma"]
    assert '<option value="ops" selected>ops</option>' in html


def test_the_csv_holds_every_run_of_the_filter_past_the_page(signed_in: Client) -> None:
    response = signed_in.get("/?status=idle&sort=name&limit=1&format=csv&table=runs")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    table = list(csv.reader(io.StringIO(body)))
    assert table[0][:4] == ["run", "label", "status", "source_kind"]
    assert [(r[0], r[2], r[6], r[9]) for r in table[1:]] == [
        (S1, "idle", "1", "0"),
        (S2, "idle", "2", "2"),
        ("delta", "idle", "2", "1"),
    ]


def test_a_filter_that_matches_nothing_says_how_to_see_every_run(signed_in: Client) -> None:
    html = page(signed_in, "q=nothing-like-it")
    assert rows(html) == []
    assert "No run matches these filters" in html


def test_a_bad_parameter_is_a_422_page_with_the_reason(signed_in: Client) -> None:
    response = signed_in.get("/?sort=colour")
    assert response.status_code == 422
    assert "sort must be one of name, -name" in response.content.decode()
