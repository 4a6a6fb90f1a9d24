"""Session replay's question: turns in order, each call with its result, paging that
visits every turn once either way, the agent filter, OpenTelemetry sessions with and
without content capture, bad cursors and what a reader may not see."""

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from analytics.runs import replay
from ingest.pipelines import otlp
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.claude_code import run_claude_code
from lib.access import Seen
from lib.errors import NotFoundError, ParameterError
from tests.analytics.runs.replay_world import SESSION, TOP_LEVEL, TURNS, write_session
from tests.ingest.pipelines.test_otlp_claude_code import SESSION as OTLP_SESSION
from tests.ingest.pipelines.test_otlp_claude_code import send_session, spool  # noqa: F401


@pytest.fixture
def session(lake: Path, tmp_path: Path) -> str:
    write_session(tmp_path)
    run_claude_code([str(tmp_path)])
    return SESSION


def _summary(turn: replay.Turn) -> tuple[Any, ...]:
    result = turn.result
    return (
        turn.agent,
        turn.kind,
        turn.tool,
        turn.text,
        None if result is None else (result.text[:8] if result.text else None, result.is_error),
    )


def test_turns_come_in_order_with_each_call_carrying_its_result(session: str) -> None:
    page = replay.replay_page(session)
    assert [_summary(t) for t in page.turns] == [
        ("main", "prompt", None, "Fix the <script>alert(1)</script> cart total please", None),
        ("main", "thinking", None, None, None),
        ("main", "response", None, "Looking.", None),
        ("main", "tool_call", "Bash", '{"command":"pytest -q"}', ("1 failed", True)),
        ("main", "tool_call", "Read", '{"command":"cart.py"}', ("l0\nl1\nl2", False)),
        ("agent-b0b", "prompt", None, "Explore the tests", None),
        ("agent-b0b", "tool_call", "Grep", '{"command":"total"}', ("cart.py:", False)),
        ("main", "response", None, "Fixed.", None),
    ]
    assert page.origin == "transcript"
    assert page.captured is True
    assert page.agents == ["agent-b0b", "main"]
    assert (page.next, page.previous) == (None, None)
    thinking = page.turns[1]
    assert (thinking.captured, thinking.missing) == (False, replay.NOT_CAPTURED_THINKING)
    read = page.turns[4].result
    assert read is not None and read.text_chars == 40 * 2 + 30 + 39  # l0..l9, l10..l39, 39 \n
    assert page.turns[0].ts == datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def test_the_label_names_the_session_by_its_folder_branch_and_first_prompt(session: str) -> None:
    label = replay.replay_page(session).label
    assert label == replay.SessionLabel(
        "shop",
        "/home/dev/src/shop",
        "feature/cart",
        "Fix the <script>alert(1)</script> cart total please",
        datetime(2026, 3, 1, 10, 0, tzinfo=UTC),
    )


def test_paging_forward_then_back_visits_each_turn_once(session: str) -> None:
    forward: list[replay.Turn] = []
    cursor = None
    pages = 0
    while True:
        page = replay.replay_page(session, limit=3, cursor=cursor)
        forward += page.turns
        pages += 1
        if page.next is None:
            break
        cursor = page.next
    assert pages == 3  # 3 + 3 + 2
    assert len(forward) == TOP_LEVEL
    assert len({(t.ts, t.source, t.source_line, t.seq) for t in forward}) == TOP_LEVEL
    nested = sum(1 for t in forward if t.result is not None)
    assert len(forward) + nested == TURNS
    backward: list[replay.Turn] = []
    before = replay.replay_page(session, limit=3, cursor=cursor).previous  # the last page's
    while before is not None:
        page = replay.replay_page(session, limit=3, before=before)
        backward = page.turns + backward
        before = page.previous
    assert [t.ts for t in backward] == [t.ts for t in forward[:6]]


def test_one_agents_turns(session: str) -> None:
    page = replay.replay_page(session, agent="agent-b0b")
    assert [(t.kind, t.tool) for t in page.turns] == [("prompt", None), ("tool_call", "Grep")]
    assert page.turns[1].result is not None
    assert replay.replay_page(session, agent="nobody").turns == []


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64!",
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
        base64.urlsafe_b64encode(b'["2026-03-01T10:00:00", "s", 1, 0]').decode(),  # no zone
        base64.urlsafe_b64encode(b'["2026-03-01T10:00:00+00:00", "s", "1", 0]').decode(),
    ],
)
def test_a_cursor_this_list_did_not_give_is_a_parameter_error(session: str, cursor: str) -> None:
    with pytest.raises(ParameterError, match=r"^cursor is not one this list gave$"):
        replay.replay_page(session, cursor=cursor)


def test_bad_limits_and_agents_are_parameter_errors(session: str) -> None:
    for limit in (0, 1001):
        with pytest.raises(ParameterError, match="limit must be between 1 and 1000"):
            replay.replay_page(session, limit=limit)
    with pytest.raises(ParameterError, match="agent is longer than 200"):
        replay.replay_page(session, agent="a" * 201)


def test_a_run_the_reader_does_not_see_does_not_exist(session: str) -> None:
    with pytest.raises(NotFoundError):
        replay.replay_page(session, Seen.nothing())
    with pytest.raises(NotFoundError):
        replay.replay_page("no-such-run")
    mine = Seen(everything=False, run_patterns=("5e55-*",))
    assert len(replay.replay_page(session, mine).turns) == TOP_LEVEL


def test_a_run_without_turns_says_where_it_came_from(lake: Path) -> None:
    ingest_body(b'{"ts": "2026-03-01T10:00:00Z", "run": "h-1", "agent": "a", "event": "spawn"}\n')
    page = replay.replay_page("h-1")
    assert (page.origin, page.source_kind, page.turns, page.captured) == (
        None, "agent-events", [], False
    )  # fmt: skip


@pytest.mark.usefixtures("spool")
def test_an_opentelemetry_session_replays_its_events_and_says_what_was_not_captured() -> None:
    send_session()
    otlp.drain(seconds=10)
    page = replay.replay_page(OTLP_SESSION)
    # The fixture's logs by hand: a prompt without its text (42 characters), three
    # api_requests, three tool_results (Read, Bash commit, failing Bash), and the
    # second prompt with its text captured.
    assert [(t.kind, t.tool, t.text, t.text_chars, t.is_error) for t in page.turns] == [
        ("prompt", None, None, 42, False),
        ("response", None, None, None, False),
        ("tool_call", "Read", None, None, False),
        ("tool_call", "Bash", None, None, False),
        ("response", None, None, None, False),
        ("response", None, None, None, False),
        ("prompt", None, "run the tests now", 17, False),
        ("tool_call", "Bash", None, None, True),
    ]
    assert page.origin == "otlp"
    assert page.captured is True
    assert page.turns[0].missing == replay.NOT_CAPTURED_PROMPT
    assert "OTEL_LOG_USER_PROMPTS" in replay.NOT_CAPTURED_PROMPT
    assert page.turns[1].missing == replay.NOT_CAPTURED_OTLP
    assert page.turns[1].model == "claude-sonnet-4-5-20250929"
    halves = replay.replay_page(OTLP_SESSION, limit=4)
    rest = replay.replay_page(OTLP_SESSION, limit=4, cursor=halves.next)
    assert [t.ts for t in halves.turns + rest.turns] == [t.ts for t in page.turns]
    assert rest.next is None
