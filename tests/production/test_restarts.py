"""PostgreSQL (the lake's catalog and Django's database) stopped as a crash would and
started again, twice; Redis (Celery's broker) killed and started again; S3 answering 500s
for a while, then dropping every connection for a while (tests/production/s3_faults.py).
Meanwhile the production topology writes and reads: file ingests run again when they
fail (as cron or an operator would), an HTTP client retries its batches, OpenTelemetry
exporters retry theirs (OTLP metrics, loaded from the spool by the workers), workers tail
a folder and scrape a stand-in vLLM server every 2 s (their ticks sent by beat through
Redis), and eight API readers read across both web servers.

Afterwards every run holds exactly its generator's events, commits and agents, no line
twice (the tailed run too: workers and beat carried on after Redis came back, and nobody
restarted them); every acknowledged OTLP point is stored once; the scrapes went on
through it all and after, each stored once; every reader's answer was a 200 (Redis down
included), or a 503 with Retry-After while PostgreSQL was down (or within a few seconds
of its return), never a 500; and the readers were answered 200 again after the last
outage, without any process being restarted by hand.
"""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import warehouse
from ingest.standin_vllm import StandinServer, serve
from tests.production import s3_faults
from tests.production.topology import Topology
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

DOWN_SECONDS = 4.0
# Shorter than DuckDB's retries of a failed S3 request ride out (lake.S3_RETRY_SETTINGS).
S3_FAILING_SECONDS = 3.0
# An answer this long after PostgreSQL is back may still be a 503: a request under way
# when it came back, a connection pool noticing its connections died.
SETTLE_SECONDS = 20.0


def file_writer(topology: Topology, truth: Truth, failed: list[str]) -> None:
    """Ingest the run's file, running the command again until it exits 0."""
    for _ in range(60):
        writer = topology.spawn(f"ingest-{truth.run}", "ingest", "agent-events", str(truth.path))
        writer.communicate(timeout=600)
        if writer.returncode == 0:
            return
        failed.append(f"{truth.run}: exited {writer.returncode}")
        time.sleep(1.0)
    raise AssertionError(f"{truth.run} never loaded: {failed[-3:]}")


def outages(topology: Topology, windows: list[tuple[str, float, float]]) -> None:
    """In turn: PostgreSQL down, Redis down, S3 answering 500s, PostgreSQL down again, S3
    dropping every connection; each window (what, from, to) recorded."""
    rng = random.Random(7)
    s3 = topology.s3
    assert s3 is not None
    steps = [
        ("postgres", topology.stop_postgres, topology.start_postgres),
        ("redis", topology.stop_redis, topology.start_redis),
        ("s3", lambda: s3.fail(s3_faults.ERRORS), lambda: s3.fail(s3_faults.OK)),
        ("postgres", topology.stop_postgres, topology.start_postgres),
        ("s3", lambda: s3.fail(s3_faults.DROPS), lambda: s3.fail(s3_faults.OK)),
    ]
    for what, stop, start in steps:
        time.sleep(rng.uniform(3.0, 6.0))
        down = time.monotonic()
        stop()
        time.sleep(DOWN_SECONDS if what != "s3" else S3_FAILING_SECONDS)
        start()
        windows.append((what, down, time.monotonic()))


def scraped(instance: str) -> dict[str, Any]:
    row = warehouse.fetch_one(
        """
        SELECT (SELECT count(*) FROM serving_scrapes WHERE instance = $i AND up) AS scrapes,
               (SELECT count(*) - count(DISTINCT ts) FROM serving_scrapes WHERE instance = $i)
                 AS scrapes_twice,
               (SELECT count(*) - count(DISTINCT (ts, name, labels)) FROM serving_samples
                 WHERE instance = $i) AS samples_twice,
               (SELECT max(ts) FROM serving_scrapes WHERE instance = $i AND up) AS last_up
        """,
        {"i": instance},
    )
    assert row is not None
    return row


def test_postgres_redis_and_s3_failing_under_load_lose_nothing_and_readers_get_200_or_503(
    topology_with_faulty_s3: Topology, tmp_path: Path
) -> None:
    topology = topology_with_faulty_s3
    folder = tmp_path / "runs"
    folder.mkdir()
    files = [Truth(folder, f"pg-file-{n}", seed=300 + n, workers=20) for n in range(2)]
    posted = Truth(folder, "pg-http", seed=350, workers=15)
    tailed = Truth(folder, "pg-tail", seed=360, workers=15)
    windows: list[tuple[str, float, float]] = []
    failed_commands: list[str] = []
    http_failures: list[str] = []
    standin = serve(StandinServer(engines=2, seed=11), "127.0.0.1", 0)
    threading.Thread(target=standin.serve_forever, daemon=True).start()
    added = topology.manage(
        "add_scrape_target",
        f"http://127.0.0.1:{standin.server_address[1]}/metrics",
        "--instance",
        "gpu-restarts",
        "--every",
        "2",
    )
    assert added.returncode == 0, added.stderr
    with Readers(topology) as readers, OtlpClients(topology, "topology.restarts") as otlp:
        threads = [
            threading.Thread(target=outages, args=(topology, windows)),
            *(
                threading.Thread(target=file_writer, args=(topology, t, failed_commands))
                for t in files
            ),
            threading.Thread(target=http_writer, args=(topology, posted, http_failures)),
            threading.Thread(target=tailed_writer, args=(tmp_path / "tail", tailed)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=1200)
        wait_for(tailed.run, tailed.events)
        # The readers go on past the last restart's settling time.
        last = max(up for _, _, up in windows)
        time.sleep(max(0.0, last + SETTLE_SECONDS + 5 - time.monotonic()))
    assert not any(t.is_alive() for t in [*threads, *otlp.threads]), "a writer never finished"
    # Scrapes went on through the outages and after them, each stored once.
    time.sleep(8)  # the last scrapes' flush (every 4 s)
    standin.shutdown()
    scrapes = scraped("gpu-restarts")
    back = datetime.now(UTC) - timedelta(seconds=time.monotonic() - last)  # the last outage's end
    assert scrapes["scrapes"] > 10 and scrapes["last_up"] > back, scrapes
    assert (scrapes["scrapes_twice"], scrapes["samples_twice"]) == (0, 0), scrapes
    # Every OTLP point acknowledged is stored once, the outages' retries and all.
    wait_for_spool(topology)
    assert otlp.acked and otlp.retries > 0
    assert otlp.stored() == otlp.sent()
    assert [what for what, _, _ in windows] == ["postgres", "redis", "s3", "postgres", "s3"]
    assert topology.s3 is not None and topology.s3.failed > 0  # S3 was asked, and failed

    for truth in [*files, posted, tailed]:
        counted = stored(truth.run)
        if truth is posted:
            counted["lines_twice"] = 0  # posted lines are numbered within their request
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

    # Every answer not a 200 was a 503 to retry, while PostgreSQL was down or settling
    # (or S3 failing, if DuckDB's retries had not ridden it out).
    def in_an_outage(at: float) -> bool:
        return any(
            down <= at <= up + SETTLE_SECONDS for what, down, up in windows if what != "redis"
        )

    assert set(readers.answers) <= {200, 503}, readers.answers
    assert all(status == 503 and retry == "5" for _, status, retry in readers.errors)
    assert [at for at, _, _ in readers.errors if not in_an_outage(at)] == []
    assert readers.answers[503] > 0  # the readers did meet the outages
    assert readers.last_ok > last + SETTLE_SECONDS  # and were answered again
