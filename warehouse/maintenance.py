"""Warehouse maintenance: merging small Parquet files, expiring old snapshots and deleting
files no snapshot needs (the beat task every 6 hours, `manage.py maintain_warehouse`).

Owns the DuckLake maintenance calls and their order; runs under the connection's writer
lock (warehouse/lake.py), so no load of this process writes meanwhile. Reads the lake's
settings there (`ORPHANS_OLDER_THAN_HOURS`), so a test that patches them is obeyed.
"""

from __future__ import annotations

import time
from typing import Any

from warehouse import lake


def run_maintenance(*, keep_snapshots_days: int = 7) -> dict[str, Any]:
    """Merge small files, expire old snapshots and delete files no snapshot needs."""
    started = time.monotonic()

    def maintain(cur: lake.Cursor) -> None:
        cur.execute(f"CALL ducklake_flush_inlined_data('{lake.LAKE}')")
        cur.execute(f"CALL ducklake_merge_adjacent_files('{lake.LAKE}')")
        cur.execute(
            f"CALL ducklake_expire_snapshots('{lake.LAKE}', older_than => now() - to_days(?::INTEGER))",
            [keep_snapshots_days],
        )

    with lake._writer_lock():
        cur = lake.cursor()
        swept = [hook(cur) for hook in lake._writer_start]
        maintain(cur)
        files = cur.execute(
            f"CALL ducklake_cleanup_old_files('{lake.LAKE}', cleanup_all => true)"
        ).fetchall()
        files += cur.execute(
            f"CALL ducklake_delete_orphaned_files('{lake.LAKE}', "
            "older_than => now() - to_hours(?::INTEGER))",
            [lake.ORPHANS_OLDER_THAN_HOURS],
        ).fetchall()
    snapshots = lake.fetch_one(f"SELECT count(*) AS n FROM {lake.LAKE}.snapshots()")
    uncommitted = sum(len(found) for found in swept if isinstance(found, list))
    return {
        "files_removed": len(files) + uncommitted,
        "snapshots": int(snapshots["n"]) if snapshots else 0,
        "seconds": round(time.monotonic() - started, 3),
    }
