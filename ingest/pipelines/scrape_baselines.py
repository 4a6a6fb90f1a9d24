"""Where each load starts from: which scrapes of the batch are already stored (skipped,
so loading a scrape twice is a no-op), each instance's counter state just before the
batch (its previous scrape's counters, remembered per process or read back) and the
rollup watermark, all in one query inside the load's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings

import warehouse
from ingest.parsers.counters import CounterState
from ingest.pipelines.pending_scrape import PendingScrape

# One query for everything a load needs to know first: scrapes already stored in the
# batch's span (to skip them), each instance's last successful scrape before it (its
# counter baseline; looked for within the raw retention window, where samples still are)
# and the rollup watermark. Every DuckLake statement costs ~10 ms of CPU, so one, not three.
SCRAPE_STATE = """
    WITH per_instance AS (
        SELECT instance,
               max(ts) FILTER (WHERE up AND ts < $first) AS last_up_before,
               list(epoch_us(ts) ORDER BY ts) FILTER (WHERE ts >= $first) AS stored_us,
               list(up ORDER BY ts) FILTER (WHERE ts >= $first) AS stored_up
        FROM serving_scrapes
        WHERE ts >= $lookback AND ts <= $last AND list_contains($instances, instance)
        GROUP BY instance
    ),
    mark AS (SELECT max(rolled_until) AS mark FROM serving_rollup_marks)
    SELECT p.instance, p.last_up_before, p.stored_us, p.stored_up, mark.mark
    FROM mark LEFT JOIN per_instance p ON true
"""

# `ts >= ?` is a constant so DuckLake can skip every file older than the oldest baseline.
PREVIOUS_COUNTERS = """
    SELECT instance, name, labels, value, created
    FROM serving_samples
    WHERE ts >= ? AND kind IN ('counter', 'histogram', 'summary')
      AND list_contains(?, instance || '@' || CAST(epoch_us(ts) AS VARCHAR))
"""

# Per process: instance -> (time of its last loaded scrape, counter state after it). Saves
# re-reading the previous scrape's samples when this process loaded it itself.
_state_cache: dict[str, tuple[int, CounterState]] = {}


@dataclass
class ScrapeState:
    stored: set[tuple[str, int]]
    last_up: dict[str, datetime]
    mark: datetime | None


def _from_us(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)


def read_state(cur: warehouse.Cursor, ordered: list[PendingScrape]) -> ScrapeState:
    instances = sorted({p.instance for p in ordered})
    first = min(p.ts for p in ordered)
    last = max(p.ts for p in ordered)
    lookback = first - timedelta(hours=settings.FLEETSCOPE_SERVING_RAW_RETENTION_HOURS)
    rows = cur.execute(
        SCRAPE_STATE,
        {"first": first, "last": last, "lookback": lookback, "instances": instances},
    ).fetchall()
    firsts: dict[str, datetime] = {}
    for p in ordered:
        firsts.setdefault(p.instance, p.ts)
    stored: set[tuple[str, int]] = set()
    last_up: dict[str, datetime] = {}
    mark = None
    for instance, before, stored_us, stored_up, row_mark in rows:
        mark = row_mark if row_mark is not None else mark
        if instance is None:
            continue
        if before is not None:
            last_up[instance] = before
        for us, up in zip(stored_us or [], stored_up or [], strict=True):
            stored.add((instance, int(us)))
            when = _from_us(int(us))
            # a scrape stored inside the batch's span but before this instance's first one
            if (
                up
                and when < firsts[instance]
                and (instance not in last_up or when > last_up[instance])
            ):
                last_up[instance] = when
    return ScrapeState(stored, last_up, mark)


def _us(ts: datetime) -> int:
    return round(ts.timestamp() * 1_000_000)


def drop_stored(ordered: list[PendingScrape], stored: set[tuple[str, int]]) -> list[PendingScrape]:
    fresh, seen = [], set()
    for p in ordered:
        key = (p.instance, _us(p.ts))
        if key not in stored and key not in seen:
            seen.add(key)
            fresh.append(p)
    return fresh


def baselines(
    cur: warehouse.Cursor,
    fresh: list[PendingScrape],
    states: dict[str, CounterState] | None,
    last_up: dict[str, datetime],
) -> dict[str, CounterState]:
    """Each instance's counter state just before its first scrape in this batch."""
    current: dict[str, CounterState] = {}
    instances = sorted({p.instance for p in fresh})
    missing = instances
    if states is not None:
        missing = [i for i in instances if i not in states]
        current.update({i: dict(states[i]) for i in instances if i in states})
    to_read = []
    for instance in missing:
        ts = last_up.get(instance)
        if ts is None:
            current[instance] = {}
            continue
        cached = _state_cache.get(instance)
        if cached is not None and cached[0] == _us(ts):
            current[instance] = dict(cached[1])
        else:
            to_read.append((instance, ts))
    if to_read:
        keys = [f"{instance}@{_us(ts)}" for instance, ts in to_read]
        oldest = min(ts for _, ts in to_read)
        for instance, name, labels, value, created in cur.execute(
            PREVIOUS_COUNTERS, [oldest, keys]
        ).fetchall():
            current.setdefault(instance, {})[(name, labels)] = (value, created)
        for instance, _ in to_read:
            current.setdefault(instance, {})
    return current


def remember(
    fresh: list[PendingScrape],
    current: dict[str, CounterState],
    states: dict[str, CounterState] | None,
) -> None:
    last_up: dict[str, datetime] = {}
    for p in fresh:
        if p.up:
            last_up[p.instance] = p.ts
    for instance, ts in last_up.items():
        _state_cache[instance] = (_us(ts), current[instance])
        if states is not None:
            states[instance] = current[instance]


def forget_cached_states() -> None:
    """Drop what this process remembers (tests; after a failed commit)."""
    _state_cache.clear()
