"""Storing a staged chunk: ids stored by other loads are duplicates, looked up in their
runs' files when the runs are few, and a transaction asks once whether others stored a run."""

from pathlib import Path

import duckdb
import pytest

import warehouse
from ingest.pipelines.agent_events import run_agent_events, store
from tests.ingest.pipelines.agent_events import count, event

pytestmark = pytest.mark.usefixtures("lake")


@pytest.mark.parametrize("inlined_up_to", [100, 0])
@pytest.mark.parametrize("listed_runs_up_to", [100, 0])
def test_ids_stored_from_another_file_are_duplicates_with_runs_listed_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listed_runs_up_to: int, inlined_up_to: int
) -> None:
    # Up to LISTED_RUNS_UP_TO runs, the stored ids are looked up in their runs' files only.
    # With 0 inlined, the chunk is staged in a file, and its ids are read from it.
    monkeypatch.setattr(store, "LISTED_RUNS_UP_TO", listed_runs_up_to)
    monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", inlined_up_to)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(event(1) + event(2) + event(3, run="other"))
    second.write_bytes(event(2) + event(3, run="other") + event(3) + event(4, run="third"))
    assert run_agent_events([str(first)]).accepted == 3
    again = run_agent_events([str(second)])
    assert (again.accepted, again.duplicates) == (2, 2)  # e3 of run r, and e4: new
    assert count("SELECT count(*) FROM events") == 5


def test_a_transaction_asks_once_whether_other_loads_stored_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[object]] = []
    any_stored = store._any_stored

    def spy(cur: duckdb.DuckDBPyConnection, stored: str, params: list[object]) -> bool:
        asked.append(params[:-1])  # the runs (the last parameter is the load's stamp)
        return any_stored(cur, stored, params)

    monkeypatch.setattr(store, "_any_stored", spy)
    other = tmp_path / "other.jsonl"
    other.write_bytes(event(5, run="shared"))
    assert run_agent_events([str(other)]).accepted == 1
    asked.clear()
    log = tmp_path / "a.jsonl"
    log.write_bytes(
        b"".join(event(i) for i in range(60))
        + event(5, run="shared")  # stored by the other file: a duplicate
        + b"".join(event(i) for i in range(60, 120))
        + event(6, run="shared")
        + b"".join(event(i) for i in range(120, 180))
    )
    summary = run_agent_events([str(log)], chunk_bytes=1024)  # ~17 chunks, one transaction
    assert (summary.accepted, summary.duplicates) == (181, 1)
    # Run r is found alone once; "shared" is asked about again, as another load stored it.
    assert asked.count(["r"]) == 1
    assert sum("shared" in runs for runs in asked) == 2
    assert len(asked) == 3
