"""Parquet data files that join the lake as they are, instead of having their rows
written again: where a table's files live, how a staged file is written, and adding it.

A load that stages its rows in Parquet itself (the agent-event ingest) writes the file with
copy_to_parquet, into local_table_dir() when the lake's data path is local, and adds it to
the table with add_data_file in its transaction. What the files hold is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from django.conf import settings

from warehouse.lake import LAKE, Cursor, WarehouseError, fetch_one, literal, not_migrated


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
    back leaves the file behind: run_maintenance() deletes it a day later."""
    cur.execute(
        f"CALL ducklake_add_data_files('{LAKE}', ?, ?, allow_missing => true)",
        [table, str(path)],
    )
