"""The replay bench's sessions, loaded small: a transcript session of five cycles of 20
turns (the fifth a subagent's) and eight OpenTelemetry sessions of 20 events, replayed
as ingest's own would be. Every figure is counted by hand from the SQL's comments."""

import hashlib
from pathlib import Path

import pytest

import warehouse
from analytics.runs import replay
from bench import explore_replay as bench

LINE = "    total = sum(item.price * item.quantity for item in items)\n"  # 62 characters


@pytest.fixture
def loaded(lake: Path) -> None:
    bench.load_sessions(turns=100, sessions=8, per_session=20)


@pytest.mark.usefixtures("loaded")
def test_the_transcript_session_replays_its_calls_with_their_results() -> None:
    page = replay.replay_page(bench.SESSION)
    sub = "agent-" + hashlib.md5(b"sub0", usedforsecurity=False).hexdigest()[:8]
    assert (page.origin, page.agents, page.next) == ("transcript", [sub, "main"], None)
    assert len(page.turns) == 5 * 13  # of 20 turns a cycle, 7 results ride with their calls
    prompt, thinking, response, read = page.turns[:4]
    assert (prompt.kind, prompt.text_chars) == ("prompt", 18 + 150 * 55)  # a pasted log
    assert (thinking.kind, thinking.captured) == ("thinking", False)
    assert (response.source_line, response.seq, read.source_line, read.seq) == (3, 0, 3, 1)
    assert read.result is not None and read.result.text_chars == 90 * len(LINE) == 5580
    # The fourth cycle's (c = 3) Read result is cut at 32 KiB; the fifth's Bash fails.
    cut = page.turns[3 * 13 + 3].result
    assert cut is not None and (cut.text_chars, len(cut.text or ""), cut.truncated) == (
        540 * 62, 32768, True
    )  # fmt: skip
    bash = page.turns[4 * 13 + 4]
    assert (bash.agent, bash.tool, bash.result and bash.result.is_error) == (sub, "Bash", True)
    assert page.label is not None and page.label.branch == "feature/coupons"


@pytest.mark.usefixtures("loaded")
def test_the_sessions_events_are_stored_with_the_run_totals() -> None:
    rows = warehouse.fetch_all(
        "SELECT event, count(*) AS n FROM events WHERE run = ? GROUP BY event ORDER BY event",
        [bench.SESSION],
    )
    # 7 calls and 4 responses a cycle, one spawn (the subagent's first prompt).
    assert [(r["event"], r["n"]) for r in rows] == [
        ("llm_call", 20),
        ("spawn", 1),
        ("tool_call", 35),
    ]
    total = warehouse.fetch_one(
        "SELECT sum(events) AS n FROM run_rollups WHERE run = ?", [bench.OTLP_SESSION]
    )
    assert total is not None and total["n"] == 20


@pytest.mark.usefixtures("loaded")
def test_the_opentelemetry_session_replays_its_prompts_calls_and_tool_results() -> None:
    page = replay.replay_page(bench.OTLP_SESSION, limit=12)
    assert (page.origin, page.agents, page.captured) == ("otlp", ["main"], True)
    kinds = ["prompt"] + ["response", "tool_call"] * 4 + ["response", "prompt", "response"]
    assert [t.kind for t in page.turns] == kinds
    assert (page.turns[0].text, page.turns[0].text_chars) == (None, 812)  # not captured
    text = "Case 10: make the checkout total match the invoice."
    assert (page.turns[10].text, page.turns[10].text_chars) == (text, len(text))
    # Its events are every 8th of all, 0.4 s apart from 06:40:00.35.
    assert [round(t.ts.timestamp() - bench.OTLP_START, 3) for t in page.turns[:2]] == [0.35, 0.75]
    rest = replay.replay_page(bench.OTLP_SESSION, limit=12, cursor=page.next)
    assert (len(rest.turns), rest.next) == (8, None)
