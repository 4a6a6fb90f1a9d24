"""Log adapters: Claude Code transcripts (MB/s and peak memory of `ingest claude-code`)
and git history (`ingest git` on Aero's 31,667 commits rebuilt with fast-import).

Issue 5's targets: 1 GB of Claude Code transcripts at 50 MB/s or better with peak memory
under 1 GiB; 30,000 commits in under 10 s. The transcripts are the shipped real session
replicated under new ids; 256 MB by default (FLEETSCOPE_BENCH_CLAUDE_MB=1024 for the
full gigabyte). The ingest streams in batches of 64 MB, so its peak memory does not grow
with the total; throughput is measured, not extrapolated, at whatever size is run.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

import warehouse
from analytics.runs import queries as runs
from bench import measured
from bench.transcript_replicas import EVENTS_PER_REPLICA, write_replicas
from ingest.demo_logs import DEMO_DATA, HISTORY_FILE
from ingest.git_rebuild import PlannedCommit, rebuild
from ingest.parsers.git_log import parse_history_csv
from ingest.pipelines.git import run_git

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_TARGET_MB_S = 50.0
MEMORY_LIMIT_MIB = 1024
GIT_TARGET_SECONDS = 10.0


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FLEETSCOPE_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        capture_output=True,
        check=True,
        cwd=ROOT,
    )


def bench_claude_code(megabytes: int) -> None:
    with tempfile.TemporaryDirectory(prefix="fleetscope-bench-cc-") as tmp:
        folder, data_dir = Path(tmp) / "projects", Path(tmp) / "data"
        started = time.monotonic()
        replicas, size = write_replicas(folder, megabytes * 1_000_000)
        print(
            f"   claude-code: {replicas} sessions, {size / 1e6:.0f} MB written in "
            f"{time.monotonic() - started:.1f} s"
        )
        _manage(data_dir, "migrate_warehouse")
        # Through bench/measured.py: the peak is the command's own, not this process's.
        done = measured.run(
            [sys.executable, str(ROOT / "manage.py"), "ingest", "claude-code", str(folder)],
            env={**os.environ, "FLEETSCOPE_DATA_DIR": str(data_dir)},
            cwd=ROOT,
            stderr=subprocess.PIPE,
        )
        wall, cpu, peak_mib = done.seconds, done.cpu_seconds, done.peak_mib
        summary = orjson.loads(done.stdout.splitlines()[-1])
        rate = size / 1e6 / wall
        expected = replicas * EVENTS_PER_REPLICA
        print(
            f"   claude-code: {summary['accepted']:,} events (expected {expected:,}), "
            f"{summary['quarantined']} quarantined"
        )
        print(
            f"   claude-code: {size / 1e6:.0f} MB in {wall:.1f} s = {rate:.1f} MB/s "
            f"(target >= {CLAUDE_TARGET_MB_S:.0f}): {'met' if rate >= CLAUDE_TARGET_MB_S else 'NOT met'}; "
            f"CPU {cpu:.1f} s ({size / 1e6 / cpu:.1f} MB per CPU-second), load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        print(
            f"   claude-code: peak RSS {peak_mib:.0f} MiB (limit {MEMORY_LIMIT_MIB}): "
            f"{'met' if peak_mib < MEMORY_LIMIT_MIB else 'NOT met'}"
        )
        if summary["accepted"] != expected:
            raise SystemExit("claude-code bench: wrong number of events")


def bench_git() -> None:
    history = (DEMO_DATA / HISTORY_FILE).read_bytes()
    commits = parse_history_csv(gzip.decompress(history).decode())
    with tempfile.TemporaryDirectory(prefix="fleetscope-bench-git-") as tmp:
        repo = Path(tmp) / "aero"
        started = time.monotonic()
        rebuild(
            repo,
            (
                PlannedCommit(int(c.author_time.timestamp()), int(c.committer_time.timestamp()))
                for c in commits
            ),
        )
        print(
            f"   git: Aero's {len(commits):,} commits rebuilt with fast-import in "
            f"{time.monotonic() - started:.1f} s"
        )
        warehouse.migrate()
        started = time.monotonic()
        summary = run_git(str(repo), "aero-bench")
        wall = time.monotonic() - started
        rate = runs.commit_rate("aero-bench", 3600)
        peak = rate.peak
        assert peak is not None
        print(
            f"   git: {summary.accepted:,} commits ingested in {wall:.2f} s "
            f"(target < {GIT_TARGET_SECONDS:.0f} s): {'met' if wall < GIT_TARGET_SECONDS else 'NOT met'}"
        )
        print(
            f"   git: busiest hour {peak.t.astimezone(UTC):%Y-%m-%d %H:%M} UTC with "
            f"{peak.commits:,} commits; total {rate.total:,} (dataset: 1,388 at "
            f"2026-01-13 23:00, 31,667)"
        )
        again = time.monotonic()
        rerun = run_git(str(repo), "aero-bench")
        print(f"   git: re-run {rerun.accepted} new in {time.monotonic() - again:.2f} s")
        if (rate.total, peak.commits) != (31667, 1388) or peak.t != datetime(
            2026, 1, 13, 23, tzinfo=UTC
        ):
            raise SystemExit("git bench: the history does not match the dataset")


def run() -> None:
    bench_git()
    bench_claude_code(int(os.environ.get("FLEETSCOPE_BENCH_CLAUDE_MB", "256")))
