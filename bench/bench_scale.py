"""File-ingest throughput with 1, 2 and 4 concurrent writers on the production lake
(PostgreSQL catalog, data on moto's S3 server, both on loopback), against the embedded
lake (SQLite catalog, local Parquet) with one writer, in one run (`make bench scale`).

The same events every time: FLEETSCOPE_BENCH_SCALE_EVENTS (400,000) in four files, each
of its own three runs (a writer per team's fleet, as in production). N writers are N
`manage.py ingest agent-events` processes started at once, the four files dealt out
among them; each configuration on a fresh lake; timed whole, from the first start to the
last exit (Python, Django and the lake's opening included), events/s = events / seconds.
The servers come from tests/production/topology.py, the suite's own topology.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from bench.bench_ingest import write_file
from tests.production.topology import REPO, production, summary_of

EVENTS = int(os.environ.get("FLEETSCOPE_BENCH_SCALE_EVENTS", "400000"))
FILES = 4


def _writers(env: dict[str, str], files: list[Path], writers: int) -> float:
    """Seconds for `writers` ingest processes, the files dealt out among them."""
    dealt = [files[n::writers] for n in range(writers)]
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "manage.py", "ingest", "agent-events", *map(str, part)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for part in dealt
    ]
    accepted = 0
    for process in processes:
        out, _ = process.communicate(timeout=3600)
        if process.returncode != 0:
            raise RuntimeError(f"an ingest writer exited {process.returncode}")
        accepted += int(str(summary_of(out)["accepted"]))
    seconds = time.perf_counter() - started
    if accepted != EVENTS:
        raise RuntimeError(f"{accepted} events accepted of {EVENTS}")
    return seconds


def _embedded_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETSCOPE_")}
    env.update(
        DJANGO_SETTINGS_MODULE="dashboard.settings",
        FLEETSCOPE_DATA_DIR=str(folder),
        FLEETSCOPE_SECRET_KEY="bench-secret-key-not-for-production-0123456789",
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode()[-2000:])
    return env


def _report(label: str, seconds: float, one: float) -> None:
    print(
        f"   {label}: {seconds:.2f} s, {EVENTS / seconds:,.0f} events/s"
        f" ({one / seconds:.2f}x the embedded lake's one writer)",
        flush=True,
    )


def run() -> None:
    folder = Path(tempfile.mkdtemp(prefix="fleetscope-bench-scale-"))
    files = [folder / f"fleet-{n}.jsonl" for n in range(FILES)]
    for n, path in enumerate(files):
        write_file(path, EVENTS // FILES, f"fleet-{n}-run-")
    size = sum(p.stat().st_size for p in files)
    print(
        f"   files: {FILES} of {EVENTS // FILES:,} events, {size / 1e6:.0f} MB in all", flush=True
    )
    embedded = _writers(_embedded_env(folder / "embedded"), files, 1)
    _report("embedded lake, 1 writer", embedded, embedded)
    figures = {"embedded_1": round(EVENTS / embedded)}
    for writers in (1, 2, 4):
        root = folder / f"production-{writers}"
        with production(root, webs=0, workers=0, beat=False) as topology:
            seconds = _writers(topology.env, files, writers)
        _report(f"PostgreSQL + S3 lake, {writers} writer(s)", seconds, embedded)
        figures[f"production_{writers}"] = round(EVENTS / seconds)
    one = figures["production_1"]
    ratios = {k: round(v / one, 2) for k, v in figures.items() if k.startswith("production")}
    print(f"   events/s {orjson.dumps(figures).decode()}; against 1 writer {ratios}", flush=True)
