"""Parquet data files that join the lake as they are, instead of having their rows
written again: where a table's files live, how a staged file is named and written, adding
it, and removing the files of loads that died before their commit.

A load that stages its rows in Parquet itself (the agent-event ingest) writes the file with
copy_to_parquet, under a name from staged_file(), into local_table_dir() when the lake's
data path is local, and adds it to the table with add_data_file in its transaction. What
the files hold is the caller's.

Uncommitted files. A load killed mid-way (kill -9, a crash) leaves Parquet files no
snapshot knows: DuckLake's own (`ducklake-<uuid>.parquet`, written by an INSERT inside a
transaction) and staged ones (`fleetscope-<lease>-<uuid>.parquet`, written outside it,
while the load's earlier chunk commits). remove_uncommitted_files() runs at each process's
first write, holding the writer lock, and removes an unknown file only when no running
transaction can still commit it:
- a staged file when the process named by its lease is gone: every writing process holds
  an exclusive flock on its lease file (<data dir>/warehouse-leases/<lease>.lock) while
  it lives, which the kernel releases when it dies however it dies (pid reuse cannot
  fool it);
- a DuckLake file with the embedded catalog only: there every transaction holds the
  writer lock, which the sweep holds, so none is running. With a PostgreSQL catalog
  writers run at once, and such files are left to maintenance's day-old rule.
The catalog is read after the owners are found dead, so a file committed just before its
writer died is seen as committed. Files are known by name (DuckLake's and the staged ones
are unique, UUID-named), from the data files, delete files and files scheduled for
deletion of every table, dropped ones included.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from django.conf import settings

from warehouse.lake import (
    LAKE,
    Cursor,
    WarehouseError,
    fetch_one,
    is_embedded,
    literal,
    not_migrated,
    on_writer_start,
)

log = logging.getLogger(__name__)


def local_table_dir(table: str) -> Path | None:
    """The folder of a lake table's Parquet files when the data path is local (None for
    S3), created if missing: a Parquet file written there can join the table through
    add_data_file()."""
    if settings.FLEETSCOPE_WAREHOUSE_DATA.startswith("s3://"):
        return None
    metadata = f"__ducklake_metadata_{LAKE}"
    row = fetch_one(
        f"""
        SELECT m.value AS data_path, s.path AS schema_path, s.path_is_relative AS schema_rel,
               t.path AS table_path, t.path_is_relative AS table_rel
        FROM {metadata}.ducklake_table AS t
        JOIN {metadata}.ducklake_schema AS s USING (schema_id)
        JOIN {metadata}.ducklake_metadata AS m ON m.key = 'data_path' AND m.scope IS NULL
        WHERE t.table_name = ? AND s.schema_name = 'main'
          AND t.end_snapshot IS NULL AND s.end_snapshot IS NULL
        """,
        [table],
    )
    if row is None:
        raise not_migrated() or WarehouseError(f"no table {table} in the warehouse")
    folder = Path(row["table_path"])
    if row["table_rel"]:
        folder = Path(row["schema_path"]) / folder
        if row["schema_rel"]:
            folder = Path(row["data_path"]) / folder
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# A column with more distinct values than this in a row group is written without a
# dictionary: ids, shas, times and messages barely repeat, and building theirs took 27 ms
# of the 180 ms that writing 130,000 agent events took (bench/agent_events.md). Agents,
# runs, models and event kinds keep theirs.
PARQUET_DICTIONARY_LIMIT = 1228
# Parquet's version 2 encodings (delta-packed integers and times, delta-length strings):
# a staged file of 0.96 MB against 2.56 MB, read back faster (bench/agent_events.md).
PARQUET_VERSION = "V2"


def copy_to_parquet(cur: Cursor, query: str, path: Path, params: Sequence[object] = ()) -> None:
    """Write the rows of `query` (bound with `params`) to a Parquet file: on the calling
    thread, outside any lake transaction."""
    cur.execute(
        f"COPY ({query}) TO {literal(str(path))} "
        f"(FORMAT parquet, DICTIONARY_SIZE_LIMIT {PARQUET_DICTIONARY_LIMIT}, "
        f"PARQUET_VERSION {PARQUET_VERSION})",
        list(params),
    )


def add_data_file(cur: Cursor, table: str, path: Path) -> None:
    """Make a Parquet file (columns named as the table's; those it lacks read as NULL)
    part of `table` in the caller's transaction: its rows are not written again. From then
    on the lake owns the file (merges and cleanup may delete it). A transaction that rolls
    back leaves the file behind: the caller deletes it, or, once this process is gone,
    the next writer's remove_uncommitted_files()."""
    cur.execute(
        f"CALL ducklake_add_data_files('{LAKE}', ?, ?, allow_missing => true)",
        [table, str(path)],
    )


# --- the files of loads that never committed ----------------------------------------------

STAGED_PREFIX = "fleetscope-"
DUCKLAKE_PREFIX = "ducklake-"
_lease_lock = threading.Lock()
_lease: tuple[int, str, IO[str]] | None = None  # (pid, lease, the locked lease file)


def _lease_dir() -> Path:
    return Path(settings.DATA_DIR) / "warehouse-leases"


def writer_lease() -> str:
    """This process's lease: held (an exclusive flock on its file) until the process ends.
    Made under a temporary name and renamed once locked, so that a sweep never sees a
    lease file its owner has not locked yet."""
    global _lease
    with _lease_lock:
        if _lease is not None and _lease[0] == os.getpid():
            return _lease[1]
        if _lease is not None:
            _lease[2].close()  # a forked child's copy; the parent still holds its lease
        lease = f"{os.getpid()}x{uuid.uuid4().hex[:12]}"
        folder = _lease_dir()
        folder.mkdir(parents=True, exist_ok=True)
        making = folder / f".{lease}.making"
        handle = open(making, "a")
        fcntl.flock(handle, fcntl.LOCK_EX)
        os.replace(making, folder / f"{lease}.lock")
        _lease = (os.getpid(), lease, handle)
        return lease


def staged_file(folder: Path) -> Path:
    """A new file name in `folder` for rows a load stages, naming this process's lease."""
    return folder / f"{STAGED_PREFIX}{writer_lease()}-{uuid.uuid4()}.parquet"


def _lease_of(name: str) -> str | None:
    """The lease a staged file's name carries (None for names of other forms)."""
    parts = name.removeprefix(STAGED_PREFIX).split("-", 1)
    if not name.startswith(STAGED_PREFIX) or len(parts) != 2 or "x" not in parts[0]:
        return None
    return parts[0]


def _lease_is_held(lease: str) -> bool:
    if _lease is not None and _lease[0] == os.getpid() and _lease[1] == lease:
        return True
    path = _lease_dir() / f"{lease}.lock"
    try:
        handle = open(path)
    except FileNotFoundError:
        return False  # its owner is gone and a sweep removed the lease already
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        handle.close()  # releases the lock this test may have taken
    return False


# Every file name the catalog knows, in every table, dropped ones included.
_KNOWN_FILES_SQL = """
SELECT path FROM {metadata}.ducklake_data_file
UNION ALL SELECT path FROM {metadata}.ducklake_delete_file
UNION ALL SELECT path FROM {metadata}.ducklake_files_scheduled_for_deletion
"""


def remove_uncommitted_files(cur: Cursor) -> list[Path]:
    """Delete the data path's Parquet files that a transaction wrote and can no longer
    commit (the module's docstring says which); the caller holds the writer lock. Returns
    the files deleted. Nothing to do with an S3 data path (loads stage no files there)."""
    data_path = settings.FLEETSCOPE_WAREHOUSE_DATA
    if data_path.startswith("s3://") or not Path(data_path).is_dir():
        return []
    embedded = is_embedded()
    candidates = []
    held: dict[str, bool] = {}
    for path in Path(data_path).rglob("*.parquet"):
        lease = _lease_of(path.name)
        if lease is not None:
            if lease not in held:
                held[lease] = _lease_is_held(lease)
            if not held[lease]:
                candidates.append(path)
        elif embedded and path.name.startswith(DUCKLAKE_PREFIX):
            candidates.append(path)
    if candidates:
        metadata = f"__ducklake_metadata_{LAKE}"
        rows = cur.execute(_KNOWN_FILES_SQL.format(metadata=metadata)).fetchall()
        known = {Path(str(row[0])).name for row in rows}
        candidates = [path for path in candidates if path.name not in known]
    for path in candidates:
        path.unlink(missing_ok=True)
    for lease_file in _lease_dir().glob("*.lock"):
        alive = held.get(lease_file.stem)
        if not (_lease_is_held(lease_file.stem) if alive is None else alive):
            lease_file.unlink(missing_ok=True)  # its process is gone
    if candidates:
        log.warning("removed %d Parquet files of loads that never committed", len(candidates))
    return candidates


on_writer_start(remove_uncommitted_files)
