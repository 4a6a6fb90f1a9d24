"""Incidents and non-incidents, written into the warehouse the way ingest writes them:
agent events through the ingest pipeline, vLLM scrapes as exposition text through the
scrape loader (so counter resets are handled where they are in production).

Each scenario returns the times to evaluate at and what a correct alerting should do.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 14, 8, 0, tzinfo=UTC)


def minutes(start: datetime, end: datetime, step_s: int = 60) -> Iterator[datetime]:
    t = start
    while t <= end:
        yield t
        t += timedelta(seconds=step_s)


def _event(run: str, ts: datetime, event: str, n: int, **extra: object) -> dict[str, object]:
    return {
        "ts": ts.isoformat(),
        "run": run,
        "agent": f"w-{n % 7}",
        "event": event,
        "id": f"{run}-{n}",
        **extra,
    }


def fleet_lines(
    run: str,
    *,
    commit_every_s: float,
    hours: float,
    gap_at: timedelta,
    gap: timedelta,
    busy_every_s: float = 20.0,
) -> bytes:
    """A run committing every `commit_every_s` for `hours` from T0, with no commit in
    [T0 + gap_at, T0 + gap_at + gap) while tool calls go on the whole time, as JSONL."""
    events = []
    end = T0 + timedelta(hours=hours)
    gap_start, gap_end = T0 + gap_at, T0 + gap_at + gap
    n, t = 0, T0
    while t < end:
        if not gap_start <= t < gap_end:
            events.append(_event(run, t, "commit", n, commit={"sha": f"{run}-{n:08x}"}))
        n += 1
        t += timedelta(seconds=commit_every_s)
    t = T0 + timedelta(seconds=1)
    while t < end:
        events.append(_event(run, t, "tool_call", n, tool="cargo test", ok=True))
        n += 1
        t += timedelta(seconds=busy_every_s)
    return b"\n".join(orjson.dumps(e) for e in events) + b"\n"


def load_fleet(run: str, **shape: Any) -> None:
    """fleet_lines(run, **shape), ingested as the API ingests a POSTed body."""
    summary = ingest_body(fleet_lines(run, **shape), source=f"scenario/{run}.jsonl")
    assert summary.quarantined == 0


def _scrape(instance: str, ts: datetime, engine: EngineState | None) -> PendingScrape:
    if engine is None:
        return PendingScrape(instance, ts, error="connection refused")
    return PendingScrape(instance, ts, scrape=parse_scrape(v1_text({"0": engine})))


def load_preemption_burst_after_restart(instance: str = "gpu-burst") -> None:
    """Scraped every 15 s for 60 min. The counter climbs slowly to ~5,000 (0.02/s), the
    server restarts at 20:00 (two failed scrapes, counter back near 0, new `created`),
    then preempts 40 per scrape (2.7/s) for 4 minutes, then slowly again. A reader that
    took the drop as a change would see -5,000 or +5,000; the burst is only the 640."""
    scrapes = []
    count, created = 4_970.0, 1_700_000_000.0
    for i in range(240):
        ts = T0 + timedelta(seconds=15 * i)
        minute = i // 4
        if minute == 20 and i % 4 < 2:
            scrapes.append(_scrape(instance, ts, None))
            continue
        if minute == 20 and i % 4 == 2:
            count, created = 0.0, 1_700_100_000.0
        if 21 <= minute < 25:
            count += 40
        elif i % 4 == 0:
            count += 1
        scrapes.append(_scrape(instance, ts, EngineState(0.5, preemptions=count, created=created)))
    load_scrapes(scrapes)


def load_flapping_kv(instance: str = "gpu-flap") -> None:
    """KV usage, one scrape every 15 s for 80 min: flapping 0.97 / 0.80 every two
    minutes for 30 min (never 5 min above), then 0.97 for 12 min (the incident), then
    flapping again for 38 min."""
    scrapes = []
    for i in range(320):
        ts = T0 + timedelta(seconds=15 * i)
        minute = i // 4
        if 30 <= minute < 42:
            usage = 0.97
        else:
            usage = 0.97 if (minute // 2) % 2 == 0 else 0.80
        scrapes.append(_scrape(instance, ts, EngineState(usage)))
    load_scrapes(scrapes)


def load_fast_flapping_kv(instance: str = "gpu-jitter") -> None:
    """KV usage alternating 0.97 / 0.86 scrape by scrape for 40 min: every minute's mean
    (0.915) is above 0.9, yet the level never stays there for even 30 s."""
    load_scrapes(
        [
            _scrape(instance, T0 + timedelta(seconds=15 * i), EngineState(0.97 if i % 2 else 0.86))
            for i in range(160)
        ]
    )
