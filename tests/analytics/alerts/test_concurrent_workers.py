"""Two worker processes evaluating the same minute at the same moment, as two Celery
workers (or a worker and a manual `evaluate_alerts`) would, over one data dir, with
Django's database on the embedded SQLite and on PostgreSQL (production): each state
change, and so each notification, happens once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import timedelta
from pathlib import Path

import pytest

from lib.durations import format_time
from tests import services
from tests.analytics.alerts.scenarios import T0, fleet_lines

ROOT = Path(__file__).resolve().parents[3]

SETUP = """
from analytics.alerts.models import AlertRule, Channel
channel = Channel.objects.create(name="hook", kind="webhook", target="http://127.0.0.1:9/")
rule = AlertRule.objects.create(
    name="stall", kind="commit_stall", params={"factor": 5, "floor": "5m"}, repeat_seconds=0
)
rule.channels.add(channel)
"""

COUNT = """
import json
from collections import Counter
from analytics.alerts.models import Notification, Transition
print(json.dumps({
    "notifications": Counter(Notification.objects.values_list("kind", flat=True)),
    "transitions": list(Transition.objects.order_by("at").values_list("to_state", flat=True)),
}))
"""


def _env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
    env.update(
        FLEETSCOPE_DATA_DIR=str(data_dir),
        DJANGO_SETTINGS_MODULE="dashboard.settings",
        FLEETSCOPE_SECRET_KEY="concurrent-workers-test-key-0123456789abcdef",
    )
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


@contextmanager
def _postgres_url() -> Iterator[str]:
    with services.postgres() as dsn:
        parts = dict(item.split("=", 1) for item in dsn.split())
        yield f"postgres://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_two_workers_evaluating_at_once_change_each_state_once(
    tmp_path: Path, database: str
) -> None:
    with _postgres_url() if database == "postgres" else nullcontext(None) as url:
        _check_two_workers(_env(tmp_path / "data", url), tmp_path)


def _check_two_workers(env: dict[str, str], tmp_path: Path) -> None:
    _manage(env, "migrate", "-v", "0")
    _manage(env, "migrate_warehouse")
    log = tmp_path / "fast.jsonl"
    log.write_bytes(
        fleet_lines(
            "fast", commit_every_s=10, hours=3, gap_at=timedelta(hours=2), gap=timedelta(minutes=12)
        )
    )
    _manage(env, "ingest", "agent-events", str(log))
    _manage(env, "shell", "-c", SETUP)

    # The stall fires at 2:05 (5 min after the last commit) and resolves at 2:12.
    for minute in (124, 125, 132):
        at = format_time(T0 + timedelta(minutes=minute))
        assert at is not None
        workers = [
            subprocess.Popen(
                [sys.executable, "manage.py", "evaluate_alerts", "--at", at, "--no-send"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err
            assert json.loads(out)["errors"] == []

    counted = json.loads(_manage(env, "shell", "-c", COUNT).strip().splitlines()[-1])
    assert counted["notifications"] == {"firing": 1, "resolved": 1}
    assert counted["transitions"] == ["firing", "resolved"]
