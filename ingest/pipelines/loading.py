"""What every ingest pipeline shares: the summary it prints, read positions committed in
the same transaction as their rows, and quarantine writes.

Owns the SQL for read_positions and quarantine; must not parse any format. A file that
cannot be read is named in the summary's `failed` (file, reason), never raised: the
other files are still loaded.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

import warehouse
from ingest.sources.files import FailedFile


@dataclass
class IngestSummary:
    accepted: int = 0
    quarantined: int = 0
    duplicates: int = 0
    files: int = 0
    bytes: int = 0
    pending_bytes: int = 0  # an unterminated last line, left for the next pass
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    # Files (or folders) that could not be read, or read to their end: the rest is loaded,
    # and the next run tries them again (`manage.py ingest` then exits 2).
    failed: list[FailedFile] = field(default_factory=list)
    _started: float = field(default_factory=time.monotonic, repr=False)

    def add(self, other: IngestSummary) -> None:
        self.accepted += other.accepted
        self.quarantined += other.quarantined
        self.duplicates += other.duplicates
        self.bytes += other.bytes
        self.failed.extend(other.failed)

    def as_dict(self) -> dict[str, Any]:
        self.seconds = round(time.monotonic() - self._started, 3)
        data = asdict(self)
        data.pop("_started")
        if not data["errors"]:
            data.pop("errors")
        return data


@dataclass(frozen=True)
class Position:
    file_key: str
    byte_offset: int
    line_no: int  # lines consumed so far


class PositionMoved(RuntimeError):
    """Another process committed this source's next chunk first; re-read and go on."""


LATEST_POSITION_SQL = """
SELECT file_key, byte_offset, line_no
FROM read_positions
WHERE source_kind = ? AND source = ?
ORDER BY committed_at DESC
LIMIT 1
"""

# Every source's newest position of one kind, for pipelines that read many files.
LATEST_POSITIONS_SQL = """
SELECT source, arg_max(file_key, committed_at) AS file_key,
       arg_max(byte_offset, committed_at) AS byte_offset,
       arg_max(line_no, committed_at) AS line_no
FROM read_positions
WHERE source_kind = ?
GROUP BY source
"""

INSERT_POSITION_SQL = """
INSERT INTO read_positions (source_kind, source, file_key, byte_offset, line_no, committed_at)
VALUES (?, ?, ?, ?, ?, ?)
"""

# `quarantine_batch(line_no, byte_offset, reason, raw_text)` -> the quarantine table.
INSERT_QUARANTINE_SQL = """
INSERT INTO quarantine (source_kind, source, line_no, byte_offset, reason, raw, ingested_at)
SELECT ?, ?, line_no, byte_offset, reason, raw_text, ?
FROM quarantine_batch
"""


def read_position(source_kind: str, source: str) -> Position | None:
    row = warehouse.fetch_one(LATEST_POSITION_SQL, [source_kind, source])
    if row is None:
        return None
    return Position(row["file_key"], int(row["byte_offset"]), int(row["line_no"]))


def read_positions(source_kind: str) -> dict[str, Position]:
    """The current position of every source of this kind, in one query."""
    return {
        row["source"]: Position(row["file_key"], int(row["byte_offset"]), int(row["line_no"]))
        for row in warehouse.fetch_all(LATEST_POSITIONS_SQL, [source_kind])
    }


def _claim_key(source_kind: str, source: str) -> str:
    return f"read_position\0{source_kind}\0{source}"


@contextmanager
def _positions_cursor(
    cur: warehouse.Cursor, source_kind: str, sources: Iterable[str]
) -> Iterator[warehouse.Cursor]:
    """Where to read these sources' stored positions inside the caller's transaction,
    having claimed them (warehouse.claim) till it ends: the transaction itself with the
    embedded catalog's one writer; with a PostgreSQL catalog a cursor that reads the newest
    snapshot, as the transaction's may predate the claim and miss the position another
    writer committed just before it."""
    if not warehouse.claim(_claim_key(source_kind, s) for s in sources):
        yield cur
        return
    fresh = warehouse.separate_cursor()
    try:
        yield fresh
    finally:
        fresh.close()


def _position_in(cur: warehouse.Cursor, source_kind: str, source: str) -> Position | None:
    with _positions_cursor(cur, source_kind, [source]) as reader:
        row = reader.execute(LATEST_POSITION_SQL, [source_kind, source]).fetchone()
    return None if row is None else Position(row[0], int(row[1]), int(row[2]))


def advance_position(
    cur: warehouse.Cursor,
    source_kind: str,
    source: str,
    expected: Position | None,
    new: Position,
) -> None:
    """Record `new` inside the caller's transaction, if nobody moved the position since
    `expected` was read; otherwise raise PositionMoved so the rows are not loaded twice."""
    check_position(cur, source_kind, source, expected)
    record_position(cur, source_kind, source, new)


def check_position(
    cur: warehouse.Cursor, source_kind: str, source: str, expected: Position | None
) -> None:
    """Raise PositionMoved unless the stored position is still `expected`. A lake
    transaction reads one snapshot, taken at its first read: checked at any point of it,
    before record_position, the answer is the same."""
    if _position_in(cur, source_kind, source) != expected:
        raise PositionMoved(source)


# When each of the sources in the list bound second last moved.
LAST_MOVED_SQL = """
SELECT source, max(committed_at) FROM read_positions
WHERE source_kind = ? AND source IN (SELECT unnest(?::VARCHAR[]))
GROUP BY source
"""


def _moved_at(last: datetime | None) -> datetime:
    """The time to record a source's new position at: its newest position is the one with
    the latest time, so a clock stepped back (one writer's, or between two machines') must
    not date it before the last one: a microsecond after that, at the least."""
    now = now_utc()
    if last is None:
        return now
    return max(now, last + timedelta(microseconds=1))


def record_position(cur: warehouse.Cursor, source_kind: str, source: str, new: Position) -> None:
    """Record `new` inside the caller's transaction, which has checked the position
    (check_position)."""
    with _positions_cursor(cur, source_kind, [source]) as reader:
        last = dict(reader.execute(LAST_MOVED_SQL, [source_kind, [source]]).fetchall())
    cur.execute(
        INSERT_POSITION_SQL,
        [
            source_kind,
            source,
            new.file_key,
            new.byte_offset,
            new.line_no,
            _moved_at(last.get(source)),
        ],
    )


# `position_moves(source, file_key, byte_offset, line_no, committed_at)` -> read_positions.
INSERT_POSITIONS_SQL = """
INSERT INTO read_positions (source_kind, source, file_key, byte_offset, line_no, committed_at)
SELECT ?, source, file_key, byte_offset, line_no, committed_at FROM position_moves
"""

# The stored positions of the sources in the list bound second, and when each last moved.
MOVED_POSITIONS_SQL = """
SELECT source, arg_max(file_key, committed_at) AS file_key,
       arg_max(byte_offset, committed_at) AS byte_offset,
       arg_max(line_no, committed_at) AS line_no,
       max(committed_at) AS moved_at
FROM read_positions
WHERE source_kind = ? AND source IN (SELECT unnest(?::VARCHAR[]))
GROUP BY source
"""


def advance_positions(
    cur: warehouse.Cursor,
    source_kind: str,
    moves: list[tuple[str, Position | None, Position]],
) -> None:
    """advance_position for many sources at once (one check, one insert): each source's
    stored position must still be its `expected` one, or PositionMoved is raised."""
    if not moves:
        return
    with _positions_cursor(cur, source_kind, [m[0] for m in moves]) as reader:
        rows = reader.execute(MOVED_POSITIONS_SQL, [source_kind, [m[0] for m in moves]]).fetchall()
    stored = {row[0]: Position(row[1], int(row[2]), int(row[3])) for row in rows}
    moved_at = {row[0]: row[4] for row in rows}
    for source, expected, _ in moves:
        if stored.get(source) != expected:
            raise PositionMoved(source)
    table = pa.table(
        {
            "source": pa.array([m[0] for m in moves], pa.string()),
            "file_key": pa.array([m[2].file_key for m in moves], pa.string()),
            "byte_offset": pa.array([m[2].byte_offset for m in moves], pa.int64()),
            "line_no": pa.array([m[2].line_no for m in moves], pa.int64()),
            "committed_at": pa.array(
                [_moved_at(moved_at.get(m[0])) for m in moves], pa.timestamp("us", tz="UTC")
            ),
        }
    )
    cur.register("position_moves", table)
    try:
        cur.execute(INSERT_POSITIONS_SQL, [source_kind])
    finally:
        cur.unregister("position_moves")


# The first lines a run quarantined (those stored since it started), for its report.
QUARANTINED_SINCE_SQL = """
SELECT source, line_no, reason
FROM quarantine
WHERE source_kind = ? AND ingested_at >= ?
ORDER BY ingested_at, source, line_no
LIMIT ?
"""


@dataclass(frozen=True)
class QuarantinedLine:
    source: str
    line_no: int | None
    reason: str

    @property
    def line(self) -> str:
        where = self.source if self.line_no is None else f"{self.source}:{self.line_no}"
        return f"{where}: {self.reason}"


def quarantined_since(source_kind: str, since: datetime, limit: int) -> list[QuarantinedLine]:
    """The first `limit` lines of this kind quarantined at or after `since`."""
    rows = warehouse.fetch_all(QUARANTINED_SINCE_SQL, [source_kind, since, limit])
    return [QuarantinedLine(r["source"], r["line_no"], r["reason"]) for r in rows]


def insert_quarantine(cur: warehouse.Cursor, source_kind: str, source: str, rows: pa.Table) -> int:
    """Store rejected lines (line_no, byte_offset, reason, raw_text); returns how many."""
    if rows.num_rows == 0:
        return 0
    cur.register("quarantine_batch", rows)
    try:
        cur.execute(INSERT_QUARANTINE_SQL, [source_kind, source, now_utc()])
    finally:
        cur.unregister("quarantine_batch")
    return rows.num_rows


def now_utc() -> datetime:
    return datetime.now(UTC)
