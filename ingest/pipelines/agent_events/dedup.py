"""Which events a load has stored already, kept in memory: the key (run + id) hashes of
every event it stored, sorted, so that its own repeats are found without reading its own
files back.

Owns a load (one pass over a source: its name and the stamp every row it stores gets) and
its key hashes. It must know no chunk: the lookups of a chunk's ids in the lake are
store.py's, a chunk's hashes are worked out where it is staged (staging.py).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.pipelines import run_rollups

# How a load remembers the run + id of each event it stored (DuckDB's 64-bit hash): a
# chunk's ids whose hash it has seen are checked against its own rows (THIS_LOAD_SQL).
KEY_HASH_SQL = "hash(run, id)"


class Load:
    """One pass over a source: its name, the ingested_at of every row it stores (a stamp
    no earlier row has), and the sorted key hashes of the events it has stored, so that
    its own repeats are found in memory instead of by reading its own files back."""

    def __init__(
        self,
        source: str,
        stamp: datetime | None = None,
        run_allowed: Callable[[str], bool] | None = None,
    ) -> None:
        self.source = source
        # Set for a sender who may write only some runs (a user in some teams): events of
        # another run are quarantined (staging.py), the rest stored.
        self.run_allowed = run_allowed
        self._stamp = Future[datetime]()
        if stamp is not None:
            self._stamp.set_result(stamp)
        self._hashes = np.empty(0, dtype=np.uint64)
        self._unmerged: list[np.ndarray] = []  # remembered, not yet in _hashes

    @property
    def stamp(self) -> datetime:
        """The stamp; waits for find_stamp() when it has not set it yet."""
        return self._stamp.result()

    def find_stamp(self) -> None:
        """Find a stamp no stored event has (run_rollups.unused_stamp), once: a lake query
        (40-50 ms, bench/agent_events.md), which workers.staged_chunks runs on the calling
        thread while the workers read their first chunks (a chunk needs the stamp only
        once its lines are split and checked)."""
        if self._stamp.done():
            return
        try:
            self._stamp.set_result(run_rollups.unused_stamp(warehouse.cursor()))
        except BaseException as exc:
            self._stamp.set_exception(exc)
            raise

    def stored_any(self, ordered: np.ndarray) -> bool:
        """Whether this load has stored any of these sorted key hashes."""
        stored = self._merged()
        at = np.searchsorted(stored, ordered)
        inside = at < len(stored)
        return bool((stored[at[inside]] == ordered[inside]).any())

    def maybe_stored(self, hashes: pa.ChunkedArray) -> np.ndarray:
        """Which of these key hashes (NULL for an event without id) this load has stored.
        They are looked up in sorted order, about four times faster than in their own
        (bench/agent_events.md)."""
        values, valid = _hash_values(hashes)
        order = np.argsort(values)
        ordered = values[order]
        stored = self._merged()
        at = np.searchsorted(stored, ordered)
        hit = at < len(stored)
        hit[hit] = stored[at[hit]] == ordered[hit]
        found = np.empty(len(values), dtype=bool)
        found[order] = hit
        return found & valid

    def remember(self, ordered: np.ndarray) -> None:
        """Add the sorted key hashes of events this load stored. They join the others when
        a later chunk is looked up (_merged), so a load's last chunk, looked up by none,
        is never merged (17 ms saved on the bench file, bench/agent_events.md)."""
        self._unmerged.append(ordered)

    def _merged(self) -> np.ndarray:
        for ordered in self._unmerged:
            self._hashes = np.insert(self._hashes, np.searchsorted(self._hashes, ordered), ordered)
        self._unmerged.clear()
        return self._hashes


def _hash_values(hashes: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    valid = np.asarray(pc.is_valid(hashes))
    values = pc.fill_null(hashes, 0).to_numpy().astype(np.uint64, copy=False)
    return values, valid


def sorted_hashes(hashes: pa.ChunkedArray) -> np.ndarray:
    """The key hashes of events with an id, sorted (worked out in the worker: the loading
    thread looks them up and remembers them without sorting them again)."""
    values, valid = _hash_values(hashes)
    return np.sort(values[valid])


def repeats(ordered: np.ndarray) -> bool:
    return bool((ordered[1:] == ordered[:-1]).any())
