"""dashboard/settings.py as an operator meets it: `manage.py check` with one bad variable
stops with a non-zero status and one line on stderr naming it (no traceback), and with
the good values it accepts it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Read by dashboard/settings.py: none of the machine's own may leak into these runs.
PREFIXES = ("FLEETSCOPE_", "CELERY_", "EMAIL_", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")


def check(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIXES)}
    env |= {"FLEETSCOPE_DATA_DIR": str(tmp_path), "FLEETSCOPE_SECRET_KEY": "x" * 50}
    env |= variables
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


BAD = [
    (
        {"FLEETSCOPE_DEBUG": "maybe"},
        "FLEETSCOPE_DEBUG must be true or false, got 'maybe'",
    ),
    (
        {"FLEETSCOPE_COST_REPORT_TZ": "Mars/Olympus_Mons"},
        "FLEETSCOPE_COST_REPORT_TZ must be an IANA time zone such as Europe/Paris or UTC, "
        "got 'Mars/Olympus_Mons'",
    ),
    (
        {"FLEETSCOPE_COST_REPORT_TZ": "../../etc/passwd"},
        "FLEETSCOPE_COST_REPORT_TZ must be an IANA time zone such as Europe/Paris or UTC, "
        "got '../../etc/passwd'",
    ),
    (
        {"FLEETSCOPE_COST_REPORT_TIME": "25:00"},
        "FLEETSCOPE_COST_REPORT_TIME must be a time of day HH:MM, such as 07:00, got '25:00'",
    ),
    (
        {"FLEETSCOPE_WAREHOUSE": "postgres:dbname=fleetscope"},
        "FLEETSCOPE_WAREHOUSE must be a DuckLake catalog such as ducklake:sqlite:PATH or "
        "ducklake:postgres:DSN, got 'postgres:dbname=fleetscope'",
    ),
    (
        {"FLEETSCOPE_WAREHOUSE": "ducklake:postgres:"},
        "FLEETSCOPE_WAREHOUSE must be a DuckLake catalog such as ducklake:sqlite:PATH or "
        "ducklake:postgres:DSN, got 'ducklake:postgres:'",
    ),
    (
        {"FLEETSCOPE_WAREHOUSE_DATA": "gs://bucket/lake/"},
        "FLEETSCOPE_WAREHOUSE_DATA must be a folder or an s3://bucket/prefix/ URL, "
        "got 'gs://bucket/lake/'",
    ),
    (
        {"DATABASE_URL": "postgress://db/fleetscope"},
        "DATABASE_URL must be a URL such as postgres://user:password@host/dbname or "
        "sqlite:///path/db.sqlite3, got 'postgress://db/fleetscope' (unknown scheme postgress://)",
    ),
    (
        {"DATABASE_URL": "postgres://web:s3cret@db:port/fleetscope"},
        "DATABASE_URL must be a URL such as postgres://user:password@host/dbname or "
        "sqlite:///path/db.sqlite3, got 'postgres://web:***@db:port/fleetscope' "
        "(port could not be cast to integer value as 'port')",
    ),
    (
        {"CELERY_BROKER_URL": "reddis://redis:6379/0"},
        "CELERY_BROKER_URL must be a URL such as redis://host:6379/0, "
        "got 'reddis://redis:6379/0' (unknown scheme reddis://)",
    ),
    (
        {"CELERY_BROKER_URL": "redis://:s3cret@redis:637900/0"},
        "CELERY_BROKER_URL must be a URL such as redis://host:6379/0, "
        "got 'redis://:***@redis:637900/0' (port out of range 0-65535)",
    ),
    (
        {"CELERY_BROKER_URL": "redis"},
        "CELERY_BROKER_URL must be a URL such as redis://host:6379/0, got 'redis' (no scheme://)",
    ),
    (
        {"FLEETSCOPE_SERVING_RAW_RETENTION_HOURS": "0"},
        "FLEETSCOPE_SERVING_RAW_RETENTION_HOURS must be an integer of at least 1, got '0'",
    ),
    (
        {"FLEETSCOPE_SERVING_RAW_RETENTION_HOURS": "two days"},
        "FLEETSCOPE_SERVING_RAW_RETENTION_HOURS must be an integer of at least 1, got 'two days'",
    ),
    (
        {"FLEETSCOPE_SCRAPE_SECONDS": "-15"},
        "FLEETSCOPE_SCRAPE_SECONDS must be an integer of at least 1, got '-15'",
    ),
    (
        {"FLEETSCOPE_DUCKDB_THREADS": "-1"},
        "FLEETSCOPE_DUCKDB_THREADS must be an integer of at least 0, got '-1'",
    ),
    (
        {"EMAIL_HOST": "smtp.example.com", "EMAIL_PORT": "65536"},
        "EMAIL_PORT must be an integer from 1 to 65535, got '65536'",
    ),
    (
        {"FLEETSCOPE_LOG_LEVEL": "verbose"},
        "FLEETSCOPE_LOG_LEVEL must be one of CRITICAL, DEBUG, ERROR, FATAL, INFO, NOTSET, "
        "WARN, WARNING, got 'verbose'",
    ),
]


@pytest.mark.parametrize(("variables", "line"), BAD, ids=[", ".join(v) for v, _ in BAD])
def test_a_bad_value_stops_start_up_with_one_line(
    tmp_path: Path, variables: dict[str, str], line: str
) -> None:
    done = check(tmp_path, **variables)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr == line + "\n"


def test_the_values_the_readme_gives_are_accepted(tmp_path: Path) -> None:
    done = check(
        tmp_path,
        FLEETSCOPE_WAREHOUSE="ducklake:postgres:dbname=fleetscope host=db password=x",
        FLEETSCOPE_WAREHOUSE_DATA="s3://bucket/fleetscope/",
        DATABASE_URL="postgres://user:pass@db/fleetscope_web",
        CELERY_BROKER_URL="redis://redis:6379/0",
        FLEETSCOPE_COST_REPORT_TZ="America/New_York",
        FLEETSCOPE_COST_REPORT_TIME="07:30",
        FLEETSCOPE_SERVING_RAW_RETENTION_HOURS="72",
        FLEETSCOPE_SERVING_FLUSH_SECONDS="0",
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="587",
        FLEETSCOPE_LOG_LEVEL="info",
        FLEETSCOPE_DEBUG="false",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "no issues" in done.stdout


def test_the_defaults_start(tmp_path: Path) -> None:
    done = check(tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
