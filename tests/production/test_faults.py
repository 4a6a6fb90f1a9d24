"""The production topology (tests/production/topology.py: PostgreSQL catalog, S3 data,
Redis, two web servers, two workers and beat) under concurrent writers and faults, each
repeated and counted, while eight API readers read across both web servers.

Writers, all at once: file ingests (`manage.py ingest agent-events`, one per run), each
killed with kill -9 at random moments and run again until one completes; an HTTP client
posting a run in batches to either web server, retrying a batch until it is acknowledged;
two OpenTelemetry exporters doing the same with OTLP metric batches (loaded from the
spool by the workers); a log folder the workers tail, appended to while they run; and the warehouse maintenance
(compaction, snapshot expiry, file cleanup) in a loop. Faults beside them: kill -9 of a
worker, of a web server and of beat, each restarted. Afterwards, per run, the events,
commits and agents stored are the generator's truth (ingest/synthetic: it built the runs,
an independent count), no line is stored twice, the agents' copies hold each event once,
every acknowledged OTLP point is stored once; every reader's answer was a 200.

`make test` runs one round; `make soak` runs rounds for FLEETSCOPE_SOAK_MINUTES (30)
minutes, each with new runs and FLEETSCOPE_SOAK_KILLS kills of each kind per round.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from tests.production.topology import Topology, summary_of
from tests.production.workload import (
    OtlpClients,
    Readers,
    Truth,
    api_run,
    http_writer,
    stored,
    tailed_writer,
    wait_for,
    wait_for_spool,
)

SOAK_MINUTES = float(os.environ.get("FLEETSCOPE_SOAK_MINUTES", "0"))
KILLS = int(os.environ.get("FLEETSCOPE_SOAK_KILLS", "20" if SOAK_MINUTES else "2"))
FILE_WRITERS = 3


def file_writer(topology: Topology, truth: Truth, kills: int, log: list[str]) -> None:
    """Ingest the run's file; kill -9 the command at a random moment `kills` times, then
    let one run to its end."""
    rng = random.Random(truth.run)
    for attempt in range(kills + 1):
        writer = topology.spawn(f"ingest-{truth.run}", "ingest", "agent-events", str(truth.path))
        if attempt < kills:
            time.sleep(rng.uniform(1.0, 8.0))
            writer.kill()
            writer.wait(timeout=60)
            log.append(f"{truth.run}: killed at attempt {attempt + 1}")
            continue
        out, _ = writer.communicate(timeout=600)
        assert writer.returncode == 0, f"{truth.run}: the last ingest exited {writer.returncode}"
        log.append(f"{truth.run}: {summary_of(out)}")


def maintenance_loop(topology: Topology, stopping: threading.Event, ran: list[int]) -> None:
    while not stopping.is_set():
        done = topology.manage("maintain_warehouse", "--keep-days", "0", timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        ran.append(1)
        stopping.wait(3.0)


def faults_loop(
    topology: Topology, stopping: threading.Event, kills: int, done: Counter[str]
) -> None:
    """kill -9 of a worker, a web server and beat, in turn at random moments, each
    restarted after a pause; `kills` of each."""
    rng = random.Random(23)
    order = [name for _ in range(kills) for name in ("worker1", "web1", "beat", "worker2")]
    for name in order:
        if stopping.wait(rng.uniform(2.0, 6.0)):
            return
        topology.kill(name)
        done[name] += 1
        time.sleep(rng.uniform(0.5, 2.0))
        topology.restart(name)


def one_round(topology: Topology, folder: Path, tail: Path, index: int) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    files = [
        Truth(folder, f"file-{index}-{n}", seed=100 * index + n, workers=25)
        for n in range(FILE_WRITERS)
    ]
    posted = Truth(folder, f"http-{index}", seed=100 * index + 50, workers=15)
    tailed = Truth(folder, f"tail-{index}", seed=100 * index + 60, workers=15)
    log: list[str] = []
    http_failures: list[str] = []
    kills: Counter[str] = Counter()
    maintained: list[int] = []
    stopping = threading.Event()
    otlp = OtlpClients(topology, f"topology.faults.{index}")
    with Readers(topology) as readers, otlp:
        background = [
            threading.Thread(target=maintenance_loop, args=(topology, stopping, maintained)),
            threading.Thread(target=faults_loop, args=(topology, stopping, KILLS, kills)),
        ]
        writers = [
            *(threading.Thread(target=file_writer, args=(topology, t, KILLS, log)) for t in files),
            threading.Thread(target=http_writer, args=(topology, posted, http_failures)),
            threading.Thread(target=tailed_writer, args=(tail, tailed)),
        ]
        for thread in [*background, *writers]:
            thread.start()
        for thread in writers:
            thread.join(timeout=1200)
        wait_for(tailed.run, tailed.events)
        stopping.set()
        for thread in background:
            thread.join(timeout=600)
    assert not any(t.is_alive() for t in [*writers, *background, *otlp.threads]), (
        "a writer never finished"
    )
    # Every OTLP point a web server acknowledged is stored once, kills and all.
    wait_for_spool(topology)
    assert otlp.acked and otlp.stored() == otlp.sent()
    for truth in [*files, posted, tailed]:
        counted = stored(truth.run)
        if truth is posted:
            # Lines posted over HTTP are numbered within their request, not their run.
            counted["lines_twice"] = 0
        assert counted == {
            "events": truth.events,
            "agents": truth.agents,
            "lines_twice": 0,
            "copies": truth.events,
        }, truth.run
        listed = api_run(topology, truth.run)
        assert (listed["events"], listed["commits"], listed["agents"]) == (
            truth.events,
            truth.commits,
            truth.agents,
        ), truth.run
    assert sum(1 for line in log if "killed" in line) == FILE_WRITERS * KILLS
    assert sum(kills.values()) > 0 and maintained
    # Every answer a reader got was a 200; refused connections were to a killed server.
    assert set(readers.answers) == {200}, readers.answers
    ordered = sorted(readers.seconds)
    return {
        "answers": sum(readers.answers.values()),
        "refused": readers.refused,
        "p99_s": ordered[int(len(ordered) * 0.99)] if ordered else None,
        "kills": dict(kills),
        "http_retries": len(http_failures),
        "otlp_batches": len(otlp.acked),
        "otlp_retries": otlp.retries,
        "maintenance_passes": len(maintained),
    }


def test_writers_and_faults_lose_nothing_and_count_nothing_twice(
    topology: Topology, tmp_path: Path
) -> None:
    tail = tmp_path / "tail"
    deadline = time.monotonic() + SOAK_MINUTES * 60
    rounds = []
    index = 0
    while True:
        rounds.append(one_round(topology, tmp_path / f"round-{index}", tail, index))
        index += 1
        if time.monotonic() >= deadline:
            break
    # What the rounds saw, for the soak's report (pytest -s prints it).
    print(orjson.dumps({"rounds": rounds}).decode())
    assert len(rounds) >= 1
