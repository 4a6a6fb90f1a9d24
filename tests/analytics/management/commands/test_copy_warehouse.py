"""`manage.py copy_warehouse`: the embedded lake into PostgreSQL + S3 (a team outgrowing
one machine), and a lake into a folder as a backup that restores into a new one."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from django.core.management import CommandError, call_command

import warehouse
from analytics.runs import queries as runs
from ingest.pipelines.agent_events import ingest_body
from tests import services


def _events(run: str, count: int) -> bytes:
    """`count` events of `run` by three agents, every third a commit of its own sha and
    every fifth an error: worked out by hand below."""
    lines = []
    for i in range(count):
        event: dict[str, Any] = {"ts": 1768384800 + i * 30, "run": run, "agent": f"w{i % 3}"}
        if i % 3 == 0:
            event |= {"event": "commit", "commit": {"sha": f"{run}-{i}"}}
        elif i % 5 == 0:
            event |= {"event": "error", "error": {"message": f"boom {i}"}}
        else:
            event |= {"event": "tool_call", "tool": "bash"}
        lines.append(orjson.dumps(event) + b"\n")
    return b"".join(lines)


# run -> (events, commits, errors, agents) for _events(run, n): commits at i % 3 == 0;
# errors at i % 5 == 0 among the others.
def _truth(n: int) -> tuple[int, int, int, int]:
    commits = len([i for i in range(n) if i % 3 == 0])
    errors = len([i for i in range(n) if i % 3 and i % 5 == 0])
    return n, commits, errors, 3


@pytest.fixture
def servers(tmp_path: Path, settings: Any) -> Iterator[tuple[str, str]]:
    with services.postgres() as dsn, services.s3_emulator("fleetscope") as endpoint:
        settings.FLEETSCOPE_S3_ENDPOINT = endpoint
        settings.FLEETSCOPE_S3_KEY_ID = "testing"
        settings.FLEETSCOPE_S3_SECRET = "testing"
        settings.FLEETSCOPE_S3_USE_SSL = False
        yield dsn, endpoint
        warehouse.close()


def _use(settings: Any, url: str, data: str) -> None:
    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = url
    settings.FLEETSCOPE_WAREHOUSE_DATA = data


def _stored() -> dict[str, tuple[int, int, int, int]]:
    return {r.run: (r.events, r.commits, r.errors, r.agents) for r in runs.list_runs()}


def _copy(url: str, data: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    call_command("copy_warehouse", "--to", url, "--to-data", data, stdout=out, stderr=err)
    assert "copied events: " in err.getvalue()  # progress, a line per table
    return orjson.loads(out.getvalue())


def _new_database(dsn: str, name: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    return dsn.replace("dbname=postgres", f"dbname={name}")


def test_the_embedded_lake_moves_to_postgres_and_s3_and_backs_up_and_restores(
    lake: Path, servers: tuple[str, str], settings: Any, tmp_path: Path
) -> None:
    dsn, endpoint = servers
    embedded = (settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA)
    ingest_body(_events("alpha", 90))
    ingest_body(_events("beta", 40))
    assert _stored() == {"alpha": _truth(90), "beta": _truth(40)}

    # Move: the embedded lake into PostgreSQL + S3.
    production = (f"ducklake:postgres:{_new_database(dsn, 'lake')}", "s3://fleetscope/lake/")
    summary = _copy(*production)
    assert summary["events"] == 130
    _use(settings, *production)
    assert not warehouse.is_embedded()
    assert _stored() == {"alpha": _truth(90), "beta": _truth(40)}
    assert warehouse.schema_version() == max(m.version for m in warehouse.all_migrations())
    keys = services.s3_keys(endpoint, "fleetscope")
    assert any(k.startswith("lake/") and k.endswith(".parquet") for k in keys)
    # The moved lake takes new events and re-ingesting a copied line stores nothing.
    ingest_body(_events("gamma", 20))
    assert ingest_body(_events("alpha", 90)).accepted == 0

    # Copying into a lake that holds rows is refused, and changes nothing there.
    _use(settings, *embedded)
    with pytest.raises(CommandError, match=r"already holds .* rows of .*: copy into an empty"):
        call_command("copy_warehouse", "--to", production[0], "--to-data", production[1])

    # Back up the production lake into a folder, as of one snapshot ...
    _use(settings, *production)
    backup_dir = tmp_path / "backup"
    backup = (f"ducklake:sqlite:{backup_dir / 'catalog.sqlite'}", f"{backup_dir / 'data'}/")
    _copy(*backup)
    # ... later the production lake changes (or is lost) ...
    ingest_body(_events("delta", 10))
    # ... and the backup restores into a new PostgreSQL catalog and S3 prefix.
    _use(settings, *backup)
    restored = (f"ducklake:postgres:{_new_database(dsn, 'restored')}", "s3://fleetscope/restored/")
    _copy(*restored)
    _use(settings, *restored)
    assert _stored() == {"alpha": _truth(90), "beta": _truth(40), "gamma": _truth(20)}


def test_an_unmigrated_source_or_the_same_warehouse_is_a_one_line_error(
    lake: Path, settings: Any, tmp_path: Path
) -> None:
    with pytest.raises(CommandError, match="the destination is the configured warehouse"):
        call_command(
            "copy_warehouse",
            "--to",
            settings.FLEETSCOPE_WAREHOUSE,
            "--to-data",
            settings.FLEETSCOPE_WAREHOUSE_DATA,
        )
    _use(settings, f"ducklake:sqlite:{tmp_path / 'new' / 'catalog.sqlite'}", f"{tmp_path}/new/")
    with pytest.raises(CommandError, match=r"lacks migrations \[1, .*run `python manage.py"):
        call_command(
            "copy_warehouse",
            "--to",
            f"ducklake:sqlite:{tmp_path / 'other.sqlite'}",
            "--to-data",
            f"{tmp_path}/other/",
        )
