"""The replay page, /runs/<run>/replay/: the conversation in order with results under
their calls, long content folded, text escaped, the agent filter and paging links, the
label at the top, a friendly 422, the 404 of a run not seen, and the empty states."""

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

import warehouse
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.claude_code import run_claude_code
from tests.analytics.runs.replay_world import SESSION, write_session
from tests.people import grant

URL = f"/runs/{SESSION}/replay/"


@pytest.fixture
def viewer(lake: Path, db: None, tmp_path: Path) -> Client:
    write_session(tmp_path)
    run_claude_code([str(tmp_path)])
    client = Client()
    client.force_login(grant(User.objects.create_user("vic", password="x")))
    return client


def _html(client: Client, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, response.content[:500]
    return response.content.decode()


def test_the_page_draws_the_conversation_in_order_with_results_under_calls(viewer: Client) -> None:
    html = _html(viewer, URL)
    kinds = re.findall(r'<li class="turn kind-(\w+)', html)
    assert kinds == [
        "prompt", "thinking", "response", "tool_call", "tool_call", "prompt", "tool_call", "response"
    ]  # fmt: skip
    assert html.count('<div class="result') == 3
    assert html.count('<div class="result failed">') == 1  # pytest's failure
    assert "thinking (its text was not kept in the transcript)" in html
    assert '<span class="agent">agent-b0b</span>' in html
    assert html.count('class="turn kind-') == 8
    # The subagent's prompt and call are indented (its result rides with the call).
    assert re.findall(r'<li class="turn (kind-\w+) sub', html) == ["kind-prompt", "kind-tool_call"]


def test_text_is_escaped(viewer: Client) -> None:
    html = _html(viewer, URL)
    assert "<script>alert(1)</script>" not in html
    assert "Fix the &lt;script&gt;alert(1)&lt;/script&gt; cart total please" in html


def test_long_content_is_folded_with_its_first_lines_shown(viewer: Client) -> None:
    html = _html(viewer, URL)
    # The Read result has 40 lines: l0..l5 shown, the whole in <details>.
    assert '<pre class="text">l0\nl1\nl2\nl3\nl4\nl5</pre>' in html
    assert "<summary>Show all 40 lines</summary>" in html


def test_the_label_and_links_are_at_the_top(viewer: Client) -> None:
    html = _html(viewer, URL)
    assert re.search(r"<h1>shop <span class=\"badge info\">feature/cart</span></h1>", html)
    assert f"<code>{SESSION}</code>" in html
    assert f'href="/runs/{SESSION}/">Run page</a>' in html
    assert f'href="/runs/{SESSION}/events/">Events explorer</a>' in html
    assert f'href="/api/runs/{SESSION}/replay"' in html


def test_the_agent_filter_and_paging(viewer: Client) -> None:
    html = _html(viewer, URL + "?agent=agent-b0b")
    assert re.findall(r'<li class="turn kind-(\w+)', html) == ["prompt", "tool_call"]
    assert '<option value="agent-b0b" selected>' in html
    first = _html(viewer, URL + "?limit=3")
    assert len(re.findall(r'<li class="turn ', first)) == 3
    newer = re.search(r'<a href="([^"]+)">Newer', first)
    assert newer and "Older" not in first
    second = _html(viewer, newer.group(1).replace("&amp;", "&"))
    assert re.findall(r'<li class="turn kind-(\w+)', second) == ["tool_call", "tool_call", "prompt"]
    older = re.search(r'<a href="([^"]+)">← Older', second)
    assert older
    back = _html(viewer, older.group(1).replace("&amp;", "&"))
    assert re.findall(r'<li class="turn kind-(\w+)', back) == ["prompt", "thinking", "response"]


def test_a_bad_cursor_is_a_friendly_422(viewer: Client) -> None:
    html = _html(viewer, URL + "?cursor=nope", status=422)
    assert "cursor is not one this list gave" in html
    assert "That view can" in html
    assert "limit" in _html(viewer, URL + "?limit=many", status=422)


def test_a_run_the_user_does_not_see_is_a_404(lake: Path, db: None, tmp_path: Path) -> None:
    write_session(tmp_path)
    run_claude_code([str(tmp_path)])
    client = Client()
    client.force_login(User.objects.create_user("nel", password="x"))  # in no team
    assert client.get(URL).status_code == 404
    assert Client().get(URL).status_code == 302  # to the login page


def test_a_run_of_another_source_says_why_there_is_nothing(viewer: Client) -> None:
    ingest_body(b'{"ts": "2026-03-01T10:00:00Z", "run": "h-1", "agent": "a", "event": "spawn"}\n')
    html = _html(viewer, "/runs/h-1/replay/")
    assert "Nothing to replay" in html
    assert "<code>agent-events</code>, which logs no conversation" in html
    assert "python manage.py ingest claude-code ~/.claude/projects" in html


def test_a_transcript_read_before_replay_says_what_to_do(viewer: Client) -> None:
    warehouse.write(lambda cur: cur.execute("DELETE FROM session_turns"))
    html = _html(viewer, URL)
    assert "read before Fleetscope kept what sessions say" in html
    assert "python manage.py ingest claude-code PATH" in html
