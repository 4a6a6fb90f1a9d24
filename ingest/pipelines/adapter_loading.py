"""Event rows built by the log adapters (Claude Code, Codex, git) and their load into
`events`, keeping each event once.

Owns the batch layout (every `events` column an adapter can fill, timestamps as RFC 3339
text that DuckDB parses on insert) and the SQL that skips events already stored. Must
not parse any log format: the parsers fill EventRows, the pipelines call insert_new().
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

import duckdb
import pyarrow as pa

from ingest.parsers.agent_events import EVENT_COLUMNS
from ingest.pipelines.loading import now_utc

# Columns added for the adapters (analytics/schema/adapters.py), after the contract's.
ADAPTER_COLUMNS: tuple[str, ...] = (
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "reasoning_output_tokens",
    "author_ts",
    "commit_author",
    "commit_claim",
)
COLUMNS: tuple[str, ...] = (*EVENT_COLUMNS, *ADAPTER_COLUMNS, "source_line")

_INTEGER = {
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "commit_files",
    "commit_insertions",
    "commit_deletions",
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "reasoning_output_tokens",
    "source_line",
}
_FLOAT = {"cost_usd", "duration_ms"}
_BOOLEAN = {"ok", "push_conflict", "commit_claim"}
# ts and author_ts travel as text and are cast on insert.
SCHEMA = pa.schema(
    [
        pa.field(
            name,
            pa.int64()
            if name in _INTEGER
            else pa.float64()
            if name in _FLOAT
            else pa.bool_()
            if name in _BOOLEAN
            else pa.string(),
        )
        for name in COLUMNS
    ]
)


class Dedup(StrEnum):
    """Which stored events make a new one a duplicate."""

    RUN = "run"  # the same run + id (git: a sha is stored once per run)
    SOURCE_KIND = "source_kind"  # the same id anywhere in this source kind (transcripts:
    # a resumed or forked session copies its parent's lines into a new file)


class EventRows:
    """Column lists for one batch; `add()` one event at a time, `table()` at the end."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, **values: Any) -> int:
        """Append one event; columns not named are NULL. Returns its row index."""
        unknown = values.keys() - self.columns.keys()
        if unknown:
            raise KeyError(f"not an event column: {sorted(unknown)}")
        for name, column in self.columns.items():
            column.append(values.get(name))
        self._size += 1
        return self._size - 1

    def set(self, row: int, **values: Any) -> None:
        for name, value in values.items():
            self.columns[name][row] = value

    def get(self, row: int, name: str) -> Any:
        return self.columns[name][row]

    def table(self) -> pa.Table:
        return pa.table(self.columns, schema=SCHEMA)


def _select_list() -> str:
    parts = []
    for name in COLUMNS:
        if name in ("ts", "author_ts"):
            parts.append(f"CAST(b.{name} AS TIMESTAMPTZ) AS {name}")
        else:
            parts.append(f"b.{name}")
    return ", ".join(parts)


_INSERT_HEAD = f"""
INSERT INTO events ({", ".join(COLUMNS)}, source_kind, source, ingested_at)
SELECT {_select_list()}, $source_kind, $source, $now
FROM (
    SELECT *, row_number() OVER (PARTITION BY {{partition}} ORDER BY source_line) AS nth
    FROM adapter_batch
) AS b
WHERE b.id IS NULL OR (b.nth = 1 AND NOT EXISTS (
    SELECT 1 FROM events AS e WHERE e.source_kind = $source_kind AND e.id = b.id {{scope}}))
"""

INSERT_RUN_SCOPED_SQL = _INSERT_HEAD.format(partition="run, id", scope="AND e.run = b.run")
INSERT_KIND_SCOPED_SQL = _INSERT_HEAD.format(partition="id", scope="")


def insert_new(
    cur: duckdb.DuckDBPyConnection,
    rows: pa.Table,
    *,
    source_kind: str,
    source: str,
    dedup: Dedup,
) -> int:
    """Insert the batch's events that are not stored yet (the first of repeated ids in
    the batch wins); returns how many were inserted."""
    if rows.num_rows == 0:
        return 0
    sql = INSERT_RUN_SCOPED_SQL if dedup is Dedup.RUN else INSERT_KIND_SCOPED_SQL
    cur.register("adapter_batch", rows)
    try:
        row = cur.execute(
            sql, {"source_kind": source_kind, "source": source, "now": now_utc()}
        ).fetchone()
    finally:
        cur.unregister("adapter_batch")
    return int(row[0]) if row else 0


STORED_SQL = """
SELECT id, run, agent, CAST(ts AS VARCHAR) AS ts, event, tool, output_tokens, attrs
FROM events
WHERE source_kind = ? AND id IN (SELECT id FROM wanted_ids)
"""


def stored_events(
    cur: duckdb.DuckDBPyConnection, source_kind: str, ids: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Events of this source kind already stored under these ids, by id (first wins)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    cur.register("wanted_ids", pa.table({"id": pa.array(wanted, pa.string())}))
    try:
        cur.execute(STORED_SQL, [source_kind])
        names = [d[0] for d in cur.description or []]
        found: dict[str, dict[str, Any]] = {}
        for values in cur.fetchall():
            row = dict(zip(names, values, strict=True))
            found.setdefault(row["id"], row)
        return found
    finally:
        cur.unregister("wanted_ids")
