"""The demo's serving history: what a stand-in vLLM engine served over the demo runs' hours,
with a surge under browser-demo's stall (KV cache near full, a preemption storm), so
Overview's "landing next to serving" tells its story on first use.

Owns placing the history in time, writing it and loading it. The server is the stand-in's
own model (ingest/standin/simulation.py, rendered by ingest/standin/exposition.py at past
timestamps), and the text goes through the same parse and load as a live scrape
(ingest/parsers/vllm.py, ingest/pipelines/vllm_scrape.py), so a second load finds every
scrape stored and adds nothing. It must not model a server of its own, or write rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

import orjson

from ingest.parsers.prometheus_text import ExpositionError, one_line
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.loading import IngestSummary
from ingest.pipelines.pending_scrape import PendingScrape
from ingest.pipelines.vllm_scrape import load_scrapes
from ingest.standin.exposition import V1, Exposition
from ingest.standin.simulation import Engine, EngineConfig

INSTANCE = "demo-vllm"  # not the live stand-in's name: its counters start from zero
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SEED = 26
# Every feature on, so each Serving view has figures: 3-token drafts (EAGLE-like
# acceptance), two LoRA adapters and a NIXL connector to a cross-instance prefix cache.
CONFIG = EngineConfig(
    spec_tokens=3,
    spec_acceptance=0.72,
    lora_adapters=("sql-lora", "support-lora"),
    kv_connector=True,
)
HISTORY_FILE = "scrapes.jsonl"  # one line per scrape: {"ts": RFC 3339, "metrics": text}
SCRAPE_EVERY = timedelta(minutes=2)
# The live stand-in steps 0.25 s; 13 hours of that take ~11 s, so the history steps
# 5 s (a few hundred tokens per request and step: the same queueing, coarser). Under the
# surge it steps 1 s: at 5 s the batch turns over in chunks and scrapes miss the full cache.
STEP_S = 5.0
SURGE_STEP_S = 1.0
# The step's CPU (measured 2026-12-02, 13 h of history, 391 scrapes): the simulation
# ~1.3 s, as before the current names; rendering the bodies ~1.6 s, was 0.8 s: each is
# 636 lines (every feature on: spec decoding, LoRA, NIXL, the 0.12+ families), was 389,
# written by prometheus_client's own objects and generate_latest (~6.5 us a line, nearly
# all in its escaping and formatting); parse and load ~0.9 s, was 0.7 s. Nothing cheap
# takes it back without writing fewer lines or the text ourselves.
# Arrivals twice the usual under the stall: the KV cache stays near full and the batch
# preempts (~14x the preemptions of the 90 minutes before); the queue drains by the end.
SURGE_FACTOR = 2.0


@dataclass(frozen=True)
class History:
    start: datetime  # the first scrape
    end: datetime  # the last scrape is at or before it
    surge: tuple[datetime, datetime]  # arrivals raised in [start, end)

    def scrape_times(self) -> list[datetime]:
        n = int((self.end - self.start) / SCRAPE_EVERY)
        return [self.start + i * SCRAPE_EVERY for i in range(n + 1)]


def simulate(history: History) -> list[tuple[datetime, str]]:
    """(time, `/metrics` text) of one V1 engine at every scrape time, deterministically."""
    created = history.start.timestamp()
    engine = Engine(CONFIG, SEED, created)
    exposition = Exposition({"0": engine}, V1, MODEL, created)
    surge_from, surge_to = history.surge
    scrapes = []
    for ts in history.scrape_times():
        # Set per scrape interval: the interval ending at `ts` surges when `ts` is inside.
        surging = surge_from <= ts < surge_to
        engine.rate_factor = SURGE_FACTOR if surging else 1.0
        engine.advance_to(ts.timestamp(), SURGE_STEP_S if surging else STEP_S)
        scrapes.append((ts, exposition.render()))
    return scrapes


def write_history(folder: Path, history: History) -> None:
    with (folder / HISTORY_FILE).open("wb") as out:
        for ts, text in simulate(history):
            out.write(orjson.dumps({"ts": ts.isoformat(), "metrics": text}) + b"\n")


def read_history(path: Path) -> tuple[list[PendingScrape], list[str]]:
    """The file's scrapes, parsed as a live scrape is (a bad body is a failed scrape, as a
    bad target's is), and the lines that are no scrape record, with their position."""
    pending, bad = [], []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            record = orjson.loads(line)
            ts = datetime.fromisoformat(record["ts"]).astimezone(UTC)
            text = record["metrics"]
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            bad.append(one_line(f"{path}:{number}: not a scrape record ({exc})"))
            continue
        try:
            pending.append(PendingScrape(INSTANCE, ts, "demo", parse_scrape(text)))
        except (ExpositionError, AttributeError, TypeError) as exc:
            error = one_line(f"{path}:{number}: {exc}")
            pending.append(PendingScrape(INSTANCE, ts, "demo", None, error))
    return pending, bad


def load_history(folder: Path, progress: IO[str] | None) -> IngestSummary:
    """Load the folder's scrapes in one transaction, with the rollup of their minutes."""
    pending, bad = read_history(folder / HISTORY_FILE)
    result = load_scrapes(pending, rollup_until=max((p.ts for p in pending), default=None))
    if progress is not None:
        progress.write(f"serving history: {result.scrapes} scrapes of {INSTANCE} loaded\n")
    return IngestSummary(
        accepted=result.samples,
        quarantined=result.failed + len(bad),
        duplicates=result.duplicates,
        files=1,
        errors=[*bad, *result.errors.values()],
    )
