"""Copying one warehouse into another: the embedded default into PostgreSQL + S3 when a
team outgrows one machine, or any warehouse into a folder as a consistent backup (and
that backup back into a new one to restore it).

The copy reads one snapshot of the source (one transaction), so what it writes is the
source as of one moment even while writers go on; the destination is migrated first
(warehouse.migrations) and filled in one transaction, so a copy that fails or is killed
leaves the destination as empty as it found it and may simply be run again. What is
copied is every table's rows as of that snapshot, not the source's snapshot history
(time travel to before the copy is not carried over).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings

from warehouse import lake, migrations
from warehouse.lake import Cursor, WarehouseError

SOURCE = "copy_source"
# Filled by the destination's own migrations, not copied.
VERSIONS_TABLE = "schema_versions"


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int


@contextmanager
def _warehouse_at(url: str, data_path: str) -> Iterator[None]:
    """This process's warehouse is the one at `url` while the block runs."""
    before = settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA
    lake.close()
    settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA = url, data_path
    try:
        yield
    finally:
        lake.close()
        settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA = before


def _tables(cur: Cursor, database: str) -> list[str]:
    rows = cur.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'"
        " ORDER BY table_name",
        [database],
    ).fetchall()
    return [name for (name,) in rows]


def _versions(cur: Cursor, database: str) -> list[int]:
    rows = cur.execute(
        f"SELECT version FROM {database}.main.{VERSIONS_TABLE} ORDER BY version"
    ).fetchall()
    return [version for (version,) in rows]


def copy_warehouse(
    to_url: str, to_data_path: str, progress: Callable[[Copied], object] = lambda _: None
) -> list[Copied]:
    """Copy the configured warehouse (settings.FLEETSCOPE_WAREHOUSE) into the empty one at
    `to_url` with its data at `to_data_path`; returns the rows copied per table, in the
    order copied, and tells `progress` of each table as it is written. The source must be
    migrated; the destination is migrated here and must hold no rows."""
    source_url, source_data = settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA
    if (to_url, to_data_path.rstrip("/")) == (source_url, source_data.rstrip("/")):
        raise WarehouseError("the destination is the configured warehouse itself")
    waiting = migrations.pending()
    if waiting:
        raise WarehouseError(
            f"the source warehouse lacks migrations {waiting}: run `{migrations.MIGRATE_COMMAND}` first"
        )
    lake.close()  # the source is attached read only by the destination's process below
    with _warehouse_at(to_url, to_data_path):
        migrations.migrate()
        with lake.attached_read_only(source_url, source_data, SOURCE):

            def copy(cur: Cursor) -> list[Copied]:
                theirs, ours = _versions(cur, SOURCE), _versions(cur, lake.LAKE)
                if theirs != ours:
                    raise WarehouseError(
                        f"the source's schema versions {theirs} are not the destination's {ours}"
                    )
                tables = [t for t in _tables(cur, SOURCE) if t != VERSIONS_TABLE]
                missing = sorted(set(tables) - set(_tables(cur, lake.LAKE)))
                if missing:
                    raise WarehouseError(f"the destination has no tables {missing}")
                for table in tables:
                    held = cur.execute(f"SELECT count(*) FROM {lake.LAKE}.main.{table}").fetchone()
                    if held and held[0]:
                        raise WarehouseError(
                            f"the destination already holds {held[0]} rows of {table}: "
                            "copy into an empty warehouse"
                        )
                done = []
                for table in tables:
                    inserted = cur.execute(
                        f"INSERT INTO {lake.LAKE}.main.{table} BY NAME "
                        f"SELECT * FROM {SOURCE}.main.{table}"
                    ).fetchone()
                    done.append(Copied(table, int(inserted[0]) if inserted else 0))
                    progress(done[-1])  # before the commit: a retried copy tells again
                return done

            return lake.write(copy)
