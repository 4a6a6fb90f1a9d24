"""dashboard/pages/run_links.py and the run page's figures: each bucket, each stall and the
range lead to the events explorer on exactly their window, in the figure JSON and as
links a keyboard reaches."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from dashboard.pages.run_links import explorer_url
from tests.dashboard.links_data import load_links

EXPLORER = "/runs/links/events/"


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any) -> Client:
    load_links()
    client.force_login(user)
    return client


def figure(client: Client, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return dict(orjson.loads(response.content))


def test_the_explorer_url_spells_each_filter_as_the_explorer_reads_it() -> None:
    start = datetime(2026, 1, 14, 10, 1, tzinfo=UTC)
    end = datetime(2026, 1, 14, 10, 2, 3, 250_000, tzinfo=UTC)
    exact = datetime(2026, 1, 14, 10, 2, 3, 250_001, tzinfo=UTC)
    assert (
        explorer_url("links", kind="commit", start=start, end=end)
        == f"{EXPLORER}?kind=commit&start=2026-01-14T10:01:00Z&end=2026-01-14T10:02:03.250Z"
    )
    assert explorer_url("links", ok=False, end=exact) == (
        f"{EXPLORER}?ok=false&end=2026-01-14T10:02:03.250001Z"
    )
    assert explorer_url("links", agent="w 1&x", start=None) == f"{EXPLORER}?agent=w+1%26x"
    assert explorer_url("links") == EXPLORER
    assert explorer_url("a/b") == "/runs/a/b/events/"


def test_a_commit_bucket_opens_the_explorer_on_exactly_that_minute(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/links/charts/commit-rate.json?bucket=1m&last=all")
    bars = fig["data"][0]
    hrefs = fig["layout"]["meta"]["links"]["points"]["0"]
    # 10:00 to 10:41: 42 one-minute buckets; commits in the 10:01 and the 10:40 ones.
    assert len(bars["x"]) == len(hrefs) == 42
    assert hrefs[1] == f"{EXPLORER}?kind=commit&start=2026-01-14T10:01:00Z&end=2026-01-14T10:02:00Z"
    assert hrefs[40] == (
        f"{EXPLORER}?kind=commit&start=2026-01-14T10:40:00Z&end=2026-01-14T10:41:00Z"
    )
    assert [i for i, href in enumerate(hrefs) if href] == [1, 40]


def test_an_hour_bucket_spans_the_hour(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/links/charts/commit-rate.json?bucket=1h&last=all")
    assert fig["layout"]["meta"]["links"]["points"]["0"] == [
        f"{EXPLORER}?kind=commit&start=2026-01-14T10:00:00Z&end=2026-01-14T11:00:00Z"
    ]


def test_the_stall_label_opens_the_events_logged_during_the_stall(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/links/charts/commit-rate.json?bucket=1m&last=all&min_gap=30m")
    links = fig["layout"]["meta"]["links"]["annotations"]
    assert list(links.values()) == [
        f"{EXPLORER}?start=2026-01-14T10:01:45Z&end=2026-01-14T10:40:00Z"
    ]
    [(index, _)] = links.items()
    label = fig["layout"]["annotations"][int(index)]
    assert (label["text"], label["captureevents"]) == ("4 events →", True)
    assert label["x"][:19] == "2026-01-14T10:20:52"  # the middle of 10:01:45-10:40:00


def test_an_error_bucket_opens_its_failed_events_from_its_bar_and_its_point(
    signed_in: Client,
) -> None:
    fig = figure(signed_in, "/runs/links/charts/error-rate.json?bucket=1m&last=all")
    points = fig["layout"]["meta"]["links"]["points"]
    failed = f"{EXPLORER}?ok=false&start=2026-01-14T10:02:00Z&end=2026-01-14T10:03:00Z"
    for trace in ("0", "1"):
        assert [(i, h) for i, h in enumerate(points[trace]) if h] == [(2, failed)]


def test_a_bucket_without_commits_links_nothing(signed_in: Client) -> None:
    url = "/runs/links/charts/commit-rate.json?start=2026-01-15T00:00:00&end=2026-01-15T01:00:00&bucket=1h"
    links = figure(signed_in, url)["layout"]["meta"]["links"]
    assert links == {"points": {"0": [None]}, "annotations": {}}


def test_the_page_gives_a_keyboard_the_same_links(signed_in: Client) -> None:
    html = signed_in.get("/runs/links/?last=all&min_gap=30m").content.decode()
    stalls = html[html.index('id="stalls-table"') : html.index("</table>", html.index("stalls"))]
    assert (
        f'<a href="{EXPLORER}?start=2026-01-14T10:01:45Z&amp;end=2026-01-14T10:40:00Z">open</a>'
        in stalls
    )
    here = html[html.index('id="range-events"') : html.index("</p>", html.index("range-events"))]
    assert f'<a href="{EXPLORER}">every event</a>' in here
    assert f'<a href="{EXPLORER}?kind=commit">commits</a>' in here
    assert f'<a href="{EXPLORER}?ok=false">failed events</a>' in here


def test_an_explicit_range_links_its_own_window(signed_in: Client) -> None:
    html = signed_in.get(
        "/runs/links/?start=2026-01-14T10:00:00&end=2026-01-14T10:30:00"
    ).content.decode()
    window = "start=2026-01-14T10:00:00Z&amp;end=2026-01-14T10:30:00Z"
    assert f'<a href="{EXPLORER}?kind=commit&amp;{window}">commits</a>' in html
