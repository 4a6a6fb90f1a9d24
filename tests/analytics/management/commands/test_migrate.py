"""`manage.py migrate` migrates the warehouse too; before it, `ingest` says in one line
(no traceback, exit 1) which data dir it looked in and what to run; `migrate_warehouse`
still works on its own."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson

from analytics.costs.price_files import SHIPPED_PRICES

ROOT = Path(__file__).resolve().parents[4]
EVENT = b'{"ts":"2026-01-14T10:06:40Z","run":"r1","agent":"w-1","event":"commit","commit":{"sha":"9f2c1e0"}}\n'


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
    env.pop("DATABASE_URL", None)
    env.update(
        FLEETSCOPE_DATA_DIR=str(data_dir),
        FLEETSCOPE_SECRET_KEY="migrate-command-test-key-0123456789abcdefghij",
    )
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_ingest_before_migrate_says_what_to_run_and_migrate_makes_it_work(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "events.jsonl"
    log.write_bytes(EVENT)

    before = _manage(data_dir, "ingest", "agent-events", str(log))
    assert before.returncode == 1
    assert before.stderr.strip() == (
        f"CommandError: the warehouse in {data_dir} has not been migrated: "
        f"run `FLEETSCOPE_DATA_DIR={data_dir} python manage.py migrate`"
    )
    assert "Traceback" not in before.stderr

    migrated = _manage(data_dir, "migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stderr
    assert migrated.stdout.strip().endswith(
        "applied warehouse migrations [1, 2, 100, 101, 200, 300, 301, 302, 500, 501, 510, 600, 700,"
        " 701]; schema version 701"
    )
    # The new database holds the shipped list prices, one row per entry of the file.
    entries = orjson.loads(SHIPPED_PRICES.read_bytes())["prices"]
    with sqlite3.connect(data_dir / "fleetscope.sqlite3") as db:
        (shipped,) = db.execute(
            "select count(*) from analytics_modelprice where source = 'shipped'"
        ).fetchone()
    assert shipped == len(entries) > 20
    after = _manage(data_dir, "ingest", "agent-events", str(log))
    assert after.returncode == 0, after.stderr
    assert orjson.loads(after.stdout.splitlines()[-1])["accepted"] == 1

    again = _manage(data_dir, "migrate_warehouse")
    assert again.stdout.strip() == "warehouse is up to date at schema version 701"


def test_a_migrate_that_only_plans_leaves_the_warehouse_alone(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    planned = _manage(data_dir, "migrate", "--plan")
    assert planned.returncode == 0, planned.stderr
    assert "warehouse" not in planned.stdout
    assert _manage(data_dir, "migrate_warehouse").stdout.startswith("applied warehouse")
