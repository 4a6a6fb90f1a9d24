"""The events explorer page, /runs/<run>/events/: the table of a filter's events, each row's
whole record, the filter kept in the form and the links, the next page and back to the
first, downloads of the filter, text escaped, the empty states, a friendly 422 and the
404 of a run not seen; the run page links to it."""

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.analytics.runs.events_world import RUN, XSS, load_world
from tests.people import grant

URL = f"/runs/{RUN}/events/"


@pytest.fixture
def viewer(lake: Path, db: None) -> Client:
    load_world()
    client = Client()
    client.force_login(grant(User.objects.create_user("vic", password="x")))
    return client


def _html(client: Client, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, response.content[:500]
    return response.content.decode()


def _kinds(html: str) -> list[str]:
    return re.findall(r'<details class="event kind-(\w+)', html)


def test_the_table_lists_every_event_newest_first(viewer: Client) -> None:
    html = _html(viewer, URL)
    assert _kinds(html) == [
        "error", "llm_call", "spawn", "tool_call", "handoff", "llm_call", "commit",
        "tool_call", "error", "tool_call", "llm_call", "spawn", "spawn", "spawn", "spawn",
    ]  # fmt: skip
    assert '<time datetime="2026-02-10T10:45:00Z" data-precision="second">' in html
    assert f'href="/runs/{RUN}/">Back to the run</a>' in html
    assert "Next page" not in html and "First page" not in html


def test_a_row_opens_its_whole_record(viewer: Client) -> None:
    html = _html(viewer, URL + "?kind=llm_call&order=oldest")
    first = html.split('<details class="event kind-llm_call')[1]
    assert "<code>explore.jsonl:5</code> (agent-events)" in first
    assert "1,000 in · 2,000 cached · \u2013 cache write · 500 out" in first  # a dash: none
    assert "$0.0111" in first  # 1000*3 + 2000*0.3 + 500*15 per million
    assert "&quot;temperature&quot;: 0.2" in first
    second = html.split('<details class="event kind-llm_call')[2]
    assert "unpriced" in second and "$0.0000" not in second
    commit = _html(viewer, URL + "?kind=commit")
    assert "<code>abc123</code> =HYPERLINK(&quot;http://evil&quot;)" in commit


def test_a_message_is_text_not_markup(viewer: Client) -> None:
    html = _html(viewer, URL + "?q=script")
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert _kinds(html) == ["error"]


def test_the_filter_is_kept_in_the_form_and_the_links(viewer: Client) -> None:
    html = _html(viewer, URL + "?agent=w2&subtree=1&kind=tool_call&limit=1")
    assert _kinds(html) == ["tool_call"]
    assert '<option value="tool_call" selected>' in html
    assert 'name="agent" value="w2"' in html
    assert 'name="subtree" value="1" checked' in html
    assert f'href="{URL}?kind=tool_call&amp;agent=w2&amp;subtree=1&amp;format=csv"' in html
    assert (
        f'href="/api/runs/{RUN}/events?kind=tool_call&amp;agent=w2&amp;subtree=1&amp;limit=1"'
        in html
    )
    following = re.search(r'<a href="([^"]+)">Next page', html)
    assert following
    second = _html(viewer, following.group(1).replace("&amp;", "&"))
    assert _kinds(second) == ["tool_call"]
    assert "Next page" not in second
    assert (
        f'<a href="{URL}?kind=tool_call&amp;agent=w2&amp;subtree=1&amp;limit=1">← First page'
        in second
    )


def test_the_page_downloads_the_filter(viewer: Client) -> None:
    response = viewer.get(URL + "?kind=error&format=csv")
    text = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    assert [line.split(",")[:3] for line in text.splitlines()[1:]] == [
        ['"error"', '"explore"', '"root"'], ['"error"', '"explore"', '"w1"']
    ]  # fmt: skip
    jsonl = viewer.get(URL + "?kind=error&format=jsonl")
    assert jsonl["Content-Type"] == "application/x-ndjson"


def test_no_match_says_how_to_clear(viewer: Client) -> None:
    html = _html(viewer, URL + "?tool=nothing")
    assert "No events match" in html
    assert f'<a href="{URL}">Clear filters</a> to see every event' in html


def test_a_bad_parameter_is_a_friendly_422(viewer: Client) -> None:
    assert "ok must be true or false" in _html(viewer, URL + "?ok=maybe", status=422)
    assert "cursor is not one this list gave" in _html(viewer, URL + "?cursor=x", status=422)


def test_a_run_the_user_does_not_see_is_a_404(lake: Path, db: None) -> None:
    load_world()
    client = Client()
    client.force_login(User.objects.create_user("nel", password="x"))  # in no team
    assert client.get(URL).status_code == 404
    assert client.get(URL + "?format=csv").status_code == 404
    assert Client().get(URL).status_code == 302  # to the login page


def test_the_run_page_links_to_the_explorer(viewer: Client) -> None:
    assert f'<a href="{URL}">Events</a>' in _html(viewer, f"/runs/{RUN}/")
