"""What a load remembers it stored: key hashes found in any order, never an event without
id, the last remembered ones included; a given stamp is never looked for."""

from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pytest

from ingest.pipelines.agent_events import dedup


def hashes(*values: int | None) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(values, pa.uint64())])


def test_a_load_finds_the_hashes_it_remembered_in_any_order_never_a_missing_id() -> None:
    load = dedup.Load("a.jsonl", datetime(2026, 1, 14, tzinfo=UTC))
    load.remember(dedup.sorted_hashes(hashes(30, 10)))
    load.remember(dedup.sorted_hashes(hashes(20, None)))  # the last chunk, not merged yet
    found = load.maybe_stored(hashes(20, 5, None, 30, 10, 40))
    assert found.tolist() == [True, False, False, True, True, False]
    assert load.stored_any(np.array([5, 10], dtype=np.uint64))
    assert not load.stored_any(np.array([5, 40], dtype=np.uint64))


def test_a_chunks_hashes_are_sorted_without_missing_ids_and_repeats_are_seen() -> None:
    ordered = dedup.sorted_hashes(hashes(7, None, 3, 7))
    assert ordered.tolist() == [3, 7, 7]
    assert dedup.repeats(ordered)
    assert not dedup.repeats(dedup.sorted_hashes(hashes(7, None, 3)))


def test_a_load_given_its_stamp_does_not_look_for_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def unused_stamp(cur: object) -> datetime:
        raise AssertionError("looked for a stamp")

    monkeypatch.setattr(dedup.run_rollups, "unused_stamp", unused_stamp)
    stamp = datetime(2026, 1, 14, tzinfo=UTC)
    load = dedup.Load("a.jsonl", stamp)
    load.find_stamp()
    assert load.stamp == stamp
