"""Applying the warehouse's schema changes: which ones exist, which have run, and running
the rest.

Owns the schema_versions table and the order migrations run in. The changes themselves
live with their topics in warehouse/schema/; the connection and the write it applies them
in are warehouse/lake.py's. Named migrations (not migrate) so that `warehouse.migrate`
stays the function.
"""

from __future__ import annotations

import duckdb
from django.conf import settings

from warehouse import lake
from warehouse.lake import Cursor, WarehouseError, fetch_one, write
from warehouse.schema import MIGRATIONS
from warehouse.schema.migration import Migration


def all_migrations() -> list[Migration]:
    """Every migration, in version order; two with the same version are an error."""
    versions = [m.version for m in MIGRATIONS]
    if len(versions) != len(set(versions)):
        raise WarehouseError(f"duplicate warehouse migration versions in {sorted(versions)}")
    return sorted(MIGRATIONS, key=lambda m: m.version)


def migrate() -> list[int]:
    """Apply pending schema changes; returns the versions applied now.

    Each migration is one transaction with its row in schema_versions: committed whole or
    not at all, so a crash between two leaves the first applied and the second pending.
    One transaction each, not one for all, because DuckLake refuses to ALTER a table that
    holds rows the same transaction inserted (a later migration's SET SORTED BY of a table
    an earlier one filled)."""

    def ensure_versions_table(cur: Cursor) -> None:
        cur.execute(
            "CREATE TABLE IF NOT EXISTS schema_versions "
            "(version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
        )

    def apply(migration: Migration) -> bool:
        def run(cur: Cursor) -> bool:
            # Read inside the transaction: a migrator beside this one may have applied it.
            seen = cur.execute(
                "SELECT count(*) FROM schema_versions WHERE version = ?", [migration.version]
            ).fetchone()
            if seen and seen[0]:
                return False
            for statement in migration.statements:
                cur.execute(statement)
            cur.execute(
                "INSERT INTO schema_versions VALUES (?, ?, now())",
                [migration.version, migration.name],
            )
            return True

        return write(run)

    write(ensure_versions_table)
    # Every migration not yet applied runs, in version order; features own version
    # ranges (see MIGRATIONS), so a later-numbered one may land before an earlier one.
    return [m.version for m in all_migrations() if apply(m)]


MIGRATE_COMMAND = "python manage.py migrate"


def pending() -> list[int]:
    """The versions of the migrations not applied yet (all of them on a new warehouse)."""
    # A cursor of its own: this thread's may be in a transaction a failed statement aborted.
    cur = lake.separate_cursor()
    try:
        rows = cur.execute("SELECT version FROM schema_versions").fetchall()
    except duckdb.CatalogException:
        rows = []  # never migrated: no schema_versions table
    finally:
        cur.close()
    done = {int(r[0]) for r in rows}
    return [m.version for m in all_migrations() if m.version not in done]


def schema_problem() -> str | None:
    """One line for users when the warehouse lacks migrations: which data dir, and the
    command to run; None when it is up to date."""
    missing = pending()
    if not missing:
        return None
    if len(missing) == len(all_migrations()):
        state = "has not been migrated"
    else:
        state = f"lacks {len(missing)} schema change(s) (versions {missing})"
    return (
        f"the warehouse in {settings.DATA_DIR} {state}: "
        f"run `FLEETSCOPE_DATA_DIR={settings.DATA_DIR} {MIGRATE_COMMAND}`"
    )


lake.explain_catalog_errors_with(schema_problem)


def schema_version() -> int:
    """The highest version applied (0 before the first migration)."""
    row = fetch_one("SELECT coalesce(max(version), 0) AS v FROM schema_versions")
    return int(row["v"]) if row else 0
