"""Where a line file's last committed batch ended, the quarantine rows of a batch (the
two writes every line-file pipeline makes inside its batch's transaction), and the
accepted/quarantined/duplicates count a batch load reports.

Positions are append-only rows of `read_positions` (analytics/schema/events.py); the
newest row for a source is its position. A file whose identity changed (replaced,
rotated) or that shrank below the position is read again from the start: the pipelines
deduplicate, so a re-read loads nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from analytics import warehouse
from ingest.parsers.requests import Rejected

LAST_POSITION_SQL = """
SELECT file_key, byte_offset, line_no
FROM read_positions
WHERE source_kind = ? AND source = ?
ORDER BY committed_at DESC, byte_offset DESC
LIMIT 1
"""

SAVE_POSITION_SQL = """
INSERT INTO read_positions (source_kind, source, file_key, byte_offset, line_no, committed_at)
VALUES (?, ?, ?, ?, ?, now())
"""

# A bad line already quarantined from the same place is not stored again, so re-posting
# a body or re-reading a file adds nothing.
QUARANTINE_SQL = """
INSERT INTO quarantine BY NAME
SELECT q.source_kind, q.source, q.line_no, q.byte_offset, q.reason, q.raw,
       now() AS ingested_at
FROM batch_quarantine AS q
WHERE NOT EXISTS (
    SELECT 1 FROM quarantine AS x
    WHERE x.source_kind = q.source_kind AND x.source = q.source
      AND x.line_no IS NOT DISTINCT FROM q.line_no AND x.raw IS NOT DISTINCT FROM q.raw
)
"""

QUARANTINE_SCHEMA = pa.schema(
    [
        ("source_kind", pa.string()),
        ("source", pa.string()),
        ("line_no", pa.int64()),
        ("byte_offset", pa.int64()),
        ("reason", pa.string()),
        ("raw", pa.string()),
    ]
)


@dataclass
class LoadResult:
    accepted: int = 0
    quarantined: int = 0
    duplicates: int = 0

    def add(self, other: LoadResult) -> None:
        self.accepted += other.accepted
        self.quarantined += other.quarantined
        self.duplicates += other.duplicates

    def as_dict(self) -> dict[str, int]:
        return {
            "accepted": self.accepted,
            "quarantined": self.quarantined,
            "duplicates": self.duplicates,
        }


@dataclass(frozen=True)
class Position:
    file_key: str
    byte_offset: int
    line_no: int


def start_position(source_kind: str, source: str, file_key: str, size: int) -> Position:
    """Where to resume reading this file: after its last committed batch, or its start."""
    row = warehouse.fetch_one(LAST_POSITION_SQL, [source_kind, source])
    if row is None or row["file_key"] != file_key or row["byte_offset"] > size:
        return Position(file_key, 0, 0)
    return Position(file_key, int(row["byte_offset"]), int(row["line_no"]))


def save_position(
    cur: duckdb.DuckDBPyConnection, source_kind: str, source: str, position: Position
) -> None:
    cur.execute(
        SAVE_POSITION_SQL,
        [source_kind, source, position.file_key, position.byte_offset, position.line_no],
    )


def quarantine(
    cur: duckdb.DuckDBPyConnection, source_kind: str, source: str, rejected: list[Rejected]
) -> int:
    """Store the batch's rejected lines; returns how many were new."""
    if not rejected:
        return 0
    table = pa.table(
        {
            "source_kind": [source_kind] * len(rejected),
            "source": [source] * len(rejected),
            "line_no": [r.line_no for r in rejected],
            "byte_offset": [r.byte_offset for r in rejected],
            "reason": [r.reason for r in rejected],
            "raw": [r.raw for r in rejected],
        },
        schema=QUARANTINE_SCHEMA,
    )
    cur.register("batch_quarantine", table)
    try:
        row = cur.execute(QUARANTINE_SQL).fetchone()
    finally:
        cur.unregister("batch_quarantine")
    return int(row[0]) if row else 0
