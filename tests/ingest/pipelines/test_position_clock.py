"""A clock stepped backwards on a writer (NTP correcting it, another machine's clock
behind): a source's newest read position is the one with the latest time, so a position
recorded then must still be dated after the last one, or the next load would resume from
the older one and read its lines again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

import warehouse
from ingest.pipelines import loading
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.loading import Position, advance_positions, read_position

NOON = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def lines(start: int, count: int) -> bytes:
    return b"".join(
        orjson.dumps(
            {"ts": 1768384800 + i * 60, "run": "clock", "agent": "w1", "event": "tool_call"}
        )
        + b"\n"
        for i in range(start, start + count)
    )


def test_a_file_loaded_again_after_the_clock_stepped_back_stores_nothing_twice(
    lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(lines(0, 10))
    monkeypatch.setattr(loading, "now_utc", lambda: NOON)
    assert run_agent_events([str(log)]).accepted == 10
    # The clock goes back an hour; the file grows, and is read twice more meanwhile.
    monkeypatch.setattr(loading, "now_utc", lambda: NOON - timedelta(hours=1))
    with log.open("ab") as out:
        out.write(lines(10, 5))
    assert run_agent_events([str(log)]).accepted == 5
    again = run_agent_events([str(log)])
    assert (again.accepted, again.duplicates) == (0, 0)  # nothing read again
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events WHERE run = 'clock'")
    assert row == {"n": 15}
    times = [
        r["committed_at"]
        for r in warehouse.fetch_all("SELECT committed_at FROM read_positions ORDER BY byte_offset")
    ]
    assert times == [NOON, NOON + timedelta(microseconds=1)]


def test_positions_of_many_sources_recorded_after_the_clock_stepped_back_are_the_newest(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = Position("k", 10, 1), Position("k", 20, 2)
    monkeypatch.setattr(loading, "now_utc", lambda: NOON)
    warehouse.write(lambda cur: advance_positions(cur, "codex", [("a", None, first)]))
    monkeypatch.setattr(loading, "now_utc", lambda: NOON - timedelta(days=1))
    warehouse.write(
        lambda cur: advance_positions(
            cur, "codex", [("a", first, second), ("b", None, Position("j", 5, 1))]
        )
    )
    assert read_position("codex", "a") == second
    stored = warehouse.fetch_all(
        "SELECT source, committed_at FROM read_positions ORDER BY source, byte_offset"
    )
    assert [(r["source"], r["committed_at"]) for r in stored] == [
        ("a", NOON),
        ("a", NOON + timedelta(microseconds=1)),
        ("b", NOON - timedelta(days=1)),  # a source of its own: its clock's time
    ]
