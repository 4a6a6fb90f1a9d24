"""Parquet files of loads that died before their commit are removed at the next writer's
start, and only those: never a file a running load is writing (its process holds its
lease), never a committed one. A load killed with SIGKILL mid-transaction leaves files no
snapshot knows; the next `ingest` removes them and loads everything once."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

import warehouse
from warehouse import data_files

ROOT = Path(__file__).resolve().parents[2]


def _write_parquet(path: Path) -> None:
    warehouse.cursor().execute(f"COPY (SELECT 1 AS x) TO '{path}' (FORMAT parquet)")


def _lease_file(name: str, *, held: bool) -> object:
    """A lease file as another process leaves it: locked while it lives (an open file
    description of its own, as a second process has), unlocked once it died."""
    folder = Path(data_files._lease_dir())
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / f"{name}.lock", "a")
    if held:
        fcntl.flock(handle, fcntl.LOCK_EX)
        return handle
    handle.close()
    return None


def test_the_first_write_removes_only_files_no_running_load_can_commit(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = warehouse.local_table_dir("events")
    assert folder is not None
    dead = folder / "fleetscope-111x0000dead0000-a1.parquet"
    alive = folder / "fleetscope-222x0000a11e0000-b2.parquet"
    mine = data_files.staged_file(folder)
    ducklake_own = folder / "ducklake-0199aaaa-0000-7000-8000-000000000001.parquet"
    old_style = folder / "fleetscope-4f2c0b7e-named-before-leases.parquet"
    for path in (dead, alive, mine, ducklake_own, old_style):
        _write_parquet(path)
    _lease_file("111x0000dead0000", held=False)
    holder = _lease_file("222x0000a11e0000", held=True)
    # This process's first write is still to come.
    monkeypatch.setattr(warehouse.lake, "_writer_started_pid", None)

    warehouse.write(lambda cur: cur.execute("SELECT 1"))

    assert [p.exists() for p in (dead, alive, mine, ducklake_own, old_style)] == [
        False,  # its process is gone and no snapshot knows it
        True,  # its process holds its lease: it may be about to add it
        True,  # this process's own
        False,  # DuckLake's: with the embedded catalog no other transaction is running
        True,  # no lease in its name: maintenance's day-old rule decides
    ]
    leases = sorted(p.name for p in Path(data_files._lease_dir()).glob("*.lock"))
    assert "111x0000dead0000.lock" not in leases
    assert "222x0000a11e0000.lock" in leases
    assert holder is not None


def test_a_committed_staged_file_of_a_dead_process_stays(lake: Path) -> None:
    folder = warehouse.local_table_dir("events")
    assert folder is not None
    committed = folder / "fleetscope-333x00000dead0000-c3.parquet"
    warehouse.cursor().execute(
        f"COPY (SELECT 'r1' AS run, 'w-1' AS agent, 'commit' AS event, "
        f"TIMESTAMPTZ '2026-01-14 10:00:00+00' AS ts) TO '{committed}' (FORMAT parquet)"
    )
    warehouse.write(lambda cur: warehouse.add_data_file(cur, "events", committed))
    _lease_file("333x00000dead0000", held=False)

    removed = data_files.remove_uncommitted_files(warehouse.cursor())

    assert removed == []
    assert committed.exists()
    assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 1}


# --- a real load killed mid-way ------------------------------------------------------------

# The pipeline with small chunks and one big transaction: many staged files are written
# and added before the commit, which the test never lets it reach.
LOADER = """
import sys
import django
django.setup()
from ingest.pipelines.agent_events import run_agent_events
run_agent_events([sys.argv[1]], chunk_bytes=64 * 1024, commit_bytes=1 << 40)
"""


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
    env.pop("DATABASE_URL", None)
    env.update(
        FLEETSCOPE_DATA_DIR=str(data_dir),
        DJANGO_SETTINGS_MODULE="dashboard.settings",
        FLEETSCOPE_SECRET_KEY="uncommitted-files-test-key-0123456789abcdefgh",
    )
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _unregistered(data_dir: Path) -> set[str]:
    """Parquet files in the lake's data path that the catalog does not know, read from
    the SQLite catalog itself."""
    catalog = sqlite3.connect(data_dir / "warehouse.sqlite")
    try:
        known = {
            Path(row[0]).name
            for row in catalog.execute(
                "SELECT path FROM ducklake_data_file UNION ALL SELECT path FROM ducklake_delete_file"
            )
        }
    finally:
        catalog.close()
    on_disk = {p.name for p in (data_dir / "lake").rglob("*.parquet")}
    return on_disk - known


def test_an_ingest_after_a_load_killed_mid_way_leaves_no_stray_file_and_loads_once(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    env = _env(data_dir)
    _manage(env, "migrate", "-v", "0")
    log = tmp_path / "run.jsonl"
    truth = orjson.loads(
        _manage(env, "generate_run", str(log), "--seed", "7", "--workers", "40", "--hours", "6")
        .strip()
        .splitlines()[-1]
    )
    events_dir = data_dir / "lake" / "main" / "events"

    loader = subprocess.Popen(
        [sys.executable, "-c", LOADER, str(log)], cwd=ROOT, env=env, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 300
    while len(list(events_dir.glob("fleetscope-*.parquet"))) < 3:
        assert loader.poll() is None, loader.stderr.read() if loader.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(loader.pid, signal.SIGKILL)
    loader.wait(timeout=30)
    left = _unregistered(data_dir)
    assert len([n for n in left if n.startswith("fleetscope-")]) >= 3  # what the kill left

    summary = orjson.loads(_manage(env, "ingest", "agent-events", str(log)).splitlines()[-1])

    assert _unregistered(data_dir) == set()
    assert summary["accepted"] == truth["accepted"]
    assert summary["quarantined"] == truth["quarantined"]
    counted = _manage(
        env,
        "shell",
        "-c",
        "import warehouse; print(warehouse.fetch_one('SELECT count(*) AS n FROM events')['n'])",
    )
    assert int(counted.split()[-1]) == truth["accepted"]
