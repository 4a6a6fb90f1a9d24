"""The log adapters' events are kept once: an id already stored is skipped, and within a
batch the first line of a repeated id wins (a batch whose ids are all distinct is
inserted without looking for repeats)."""

from typing import Any

import pytest

import warehouse
from ingest.parsers.event_rows import EventRows
from ingest.pipelines.adapter_loading import Dedup, insert_new

pytestmark = pytest.mark.usefixtures("lake")


def event(
    event_id: str | None, line: int, *, run: str = "r1", agent: str = "main"
) -> dict[str, Any]:
    return {
        "run": run,
        "agent": agent,
        "ts": "2026-02-12T14:12:01Z",
        "event": "tool_call",
        "id": event_id,
        "tool": "Bash",
        "source_line": line,
    }


def insert(events: list[dict[str, Any]], dedup: Dedup = Dedup.SOURCE_KIND) -> int:
    rows = EventRows()
    for values in events:
        rows.add(**values)
    table = rows.table()
    return warehouse.write(
        lambda cur: insert_new(cur, table, source_kind="claude-code", source="s.jsonl", dedup=dedup)
    )


def stored() -> list[tuple[Any, ...]]:
    rows = warehouse.fetch_all(
        "SELECT run, id, agent, source_line FROM events ORDER BY run, id, source_line"
    )
    return [tuple(r.values()) for r in rows]


def test_a_batch_of_distinct_ids_is_inserted_whole_then_only_its_new_ids() -> None:
    assert insert([event("a", 1), event("b", 2), event(None, 3), event(None, 4)]) == 4
    assert insert([event("a", 5), event("c", 6), event(None, 7)]) == 2
    assert stored() == [
        ("r1", "a", "main", 1),
        ("r1", "b", "main", 2),
        ("r1", "c", "main", 6),
        ("r1", None, "main", 3),
        ("r1", None, "main", 4),
        ("r1", None, "main", 7),
    ]


def test_the_first_line_of_an_id_repeated_in_a_batch_wins() -> None:
    assert insert([event("a", 7, agent="later"), event("a", 3, agent="first"), event("b", 5)]) == 2
    assert stored() == [("r1", "a", "first", 3), ("r1", "b", "main", 5)]


def test_an_id_is_kept_once_per_run_when_runs_are_apart() -> None:
    assert insert([event("a", 1, run="r1"), event("a", 2, run="r2")], Dedup.RUN) == 2
    assert insert([event("a", 3, run="r3")], Dedup.RUN) == 1
    assert insert([event("a", 4, run="r3"), event("b", 5, run="r3")], Dedup.RUN) == 1
    assert stored() == [
        ("r1", "a", "main", 1),
        ("r2", "a", "main", 2),
        ("r3", "a", "main", 3),
        ("r3", "b", "main", 5),
    ]
