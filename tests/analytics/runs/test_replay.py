"""Session replay's question: turns in order, each call with its result, paging that
visits every turn once either way, the agent filter, OpenTelemetry sessions with and
without content capture, bad cursors and what a reader may not see."""

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

import warehouse
from analytics.runs import replay
from ingest.parsers.event_rows import EventRows
from ingest.pipelines import otlp
from ingest.pipelines.adapter_loading import Dedup, insert_new
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


def _otlp_events(*events: tuple[str, str, str, int, str | None]) -> None:
    """OpenTelemetry events of session `otlp-ties` as the OTLP loader stores them: (ts,
    event, agent, source_line, the prompt's text or None)."""
    rows = EventRows()
    for n, (ts, event, agent, line, prompt) in enumerate(events):
        attrs = None if event != "prompt" else orjson.dumps({"prompt": prompt}).decode()
        rows.add(run="otlp-ties", agent=agent, ts=ts, event=event, id=f"seq:{n:02d}",
                 attrs=attrs, source_line=line)  # fmt: skip
    table = rows.table()
    warehouse.write(
        lambda cur: insert_new(cur, table, source_kind="otlp", source="otlp/b1", dedup=Dedup.RUN)
    )


@pytest.fixture
def ties(lake: Path) -> None:
    # Three events share 10:00:01 and line 2 (their seq 0, 1, 2 by id), two more
    # 10:00:01 on line 3; a spawn is no turn.
    _otlp_events(
        ("2026-03-02T10:00:00Z", "prompt", "main", 1, "go"),
        ("2026-03-02T10:00:01Z", "llm_call", "main", 2, None),
        ("2026-03-02T10:00:01Z", "tool_call", "main", 2, None),
        ("2026-03-02T10:00:01Z", "tool_call", "agent-x", 2, None),
        ("2026-03-02T10:00:01Z", "llm_call", "main", 3, None),
        ("2026-03-02T10:00:01Z", "tool_call", "main", 3, None),
        ("2026-03-02T10:00:05Z", "spawn", "agent-x", 4, None),
        ("2026-03-02T10:00:09Z", "llm_call", "agent-x", 5, None),
    )


def _keys(page: replay.ReplayPage) -> list[tuple[int, int, int]]:
    return [(t.ts.second, t.source_line, t.seq) for t in page.turns]


@pytest.mark.usefixtures("ties")
def test_an_opentelemetry_session_pages_through_turns_of_one_time_and_back() -> None:
    every = [(0, 1, 0), (1, 2, 0), (1, 2, 1), (1, 2, 2), (1, 3, 0), (1, 3, 1), (9, 5, 0)]
    whole = replay.replay_page("otlp-ties")
    assert (_keys(whole), whole.agents, whole.captured) == (every, ["agent-x", "main"], True)
    first = replay.replay_page("otlp-ties", limit=2)
    assert _keys(first) == every[:2]
    # The next page starts inside 10:00:01's turns: the rest of line 2, then line 3.
    second = replay.replay_page("otlp-ties", limit=2, cursor=first.next)
    assert _keys(second) == every[2:4]
    third = replay.replay_page("otlp-ties", limit=2, cursor=second.next)
    assert _keys(third) == every[4:6]
    last = replay.replay_page("otlp-ties", limit=2, cursor=third.next)
    assert (_keys(last), last.next) == (every[6:], None)
    back = replay.replay_page("otlp-ties", limit=3, before=last.previous)
    assert _keys(back) == every[3:6]
    assert _keys(replay.replay_page("otlp-ties", limit=3, before=back.previous)) == every[:3]


@pytest.mark.usefixtures("ties")
def test_the_turns_after_the_last_time_of_a_session_are_those_left_in_it() -> None:
    # A cursor on 10:00:01 line 3 seq 0, with limit 1: no later time holds a turn of
    # agent main, yet the same time does (seq 1).
    page = replay.replay_page("otlp-ties", agent="main", limit=4)
    assert _keys(page) == [(0, 1, 0), (1, 2, 0), (1, 2, 1), (1, 3, 0)]
    rest = replay.replay_page("otlp-ties", agent="main", limit=4, cursor=page.next)
    assert (_keys(rest), rest.next) == ([(1, 3, 1)], None)
    assert replay.replay_page("otlp-ties", agent="nobody").turns == []
    assert [t.kind for t in replay.replay_page("otlp-ties", agent="agent-x").turns] == [
        "tool_call", "response"
    ]  # fmt: skip
