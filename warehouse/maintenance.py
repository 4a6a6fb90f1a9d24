"""Warehouse maintenance: merging small Parquet files, expiring old snapshots and deleting
files no snapshot needs (the beat task every 6 hours, `manage.py maintain_warehouse`).

Owns the DuckLake maintenance calls and their order; runs under the connection's writer
lock (warehouse/lake.py), so no load of this process writes meanwhile; each call is
retried as a write is when a writer of another process conflicts with it. Reads the lake's
settings there (`ORPHANS_OLDER_THAN_HOURS`), so a test that patches them is obeyed.
"""

from __future__ import annotations

import time
from typing import Any

from warehouse import lake


def _step(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """One maintenance call, its own commit: run again when it conflicts with a writer of
    another process (a PostgreSQL catalog's) or the handle broke."""
    return lake.retry_on_conflict(lambda: lake.fetch_rows(sql, params))


def run_maintenance(*, keep_snapshots_days: int = 7) -> dict[str, Any]:
    """Merge small files, expire old snapshots and delete files no snapshot needs."""
    started = time.monotonic()

    with lake._writer_lock():
        swept = [hook(lake.cursor()) for hook in lake._writer_start]
        _step(f"CALL ducklake_flush_inlined_data('{lake.LAKE}')")
        _step(f"CALL ducklake_merge_adjacent_files('{lake.LAKE}')")
        _step(
            f"CALL ducklake_expire_snapshots('{lake.LAKE}', older_than => now() - to_days(?::INTEGER))",
            [keep_snapshots_days],
        )
        files = _step(f"CALL ducklake_cleanup_old_files('{lake.LAKE}', cleanup_all => true)")
        files += _step(
            f"CALL ducklake_delete_orphaned_files('{lake.LAKE}', "
            "older_than => now() - to_hours(?::INTEGER))",
            [lake.ORPHANS_OLDER_THAN_HOURS],
        )
    snapshots = lake.fetch_one(f"SELECT count(*) AS n FROM {lake.LAKE}.snapshots()")
    uncommitted = sum(len(found) for found in swept if isinstance(found, list))
    return {
        "files_removed": len(files) + uncommitted,
        "snapshots": int(snapshots["n"]) if snapshots else 0,
        "seconds": round(time.monotonic() - started, 3),
    }
