"""The rows the log adapters (Claude Code, Codex, git) build: every `events` column an
adapter can fill, one batch at a time.

Pure: no files, no warehouse queries; the columns and their types are those
warehouse/schema/events.py defines. Timestamps travel as RFC 3339 text (validated by the
parsers, `T` and `Z` upper-cased as DuckDB reads them) and are cast by DuckDB on insert;
check_name and check_count hold names and counts to lib.bounds.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ingest.parsers.timestamps import TimeProblem, normalize_rfc3339, read_rfc3339
from lib.bounds import count_problem, name_problem
from warehouse.schema.events import (
    ADAPTER_COLUMNS,
    CONTRACT_COLUMNS,
    ORIGIN_COLUMNS,
    TELEMETRY_COLUMNS,
)

BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, which some editors write first


class Reject(ValueError):
    """A log line an adapter cannot use; the message is its quarantine reason."""


def read_timestamp(doc: dict[str, Any]) -> tuple[str, float]:
    """A transcript line's `timestamp` (RFC 3339 with a zone, in an event's years) as
    (text for DuckDB to cast, epoch ms)."""
    value = doc.get("timestamp")
    if not isinstance(value, str):
        raise Reject("timestamp missing or not a string")
    try:
        parsed = read_rfc3339(value)
    except TimeProblem as exc:
        raise Reject(f"timestamp {exc}") from None
    return normalize_rfc3339(value), parsed.timestamp() * 1000.0


def check_name(value: str, what: str) -> str:
    """`value` when it is a valid name (lib.bounds.name_problem); Reject otherwise."""
    problem = name_problem(value, what)
    if problem is not None:
        raise Reject(problem)
    return value


def check_count(value: Any, what: str) -> int:
    """`value` when it is a valid count (lib.bounds.count_problem); Reject otherwise."""
    problem = count_problem(value, what)
    if problem is not None:
        raise Reject(problem)
    assert isinstance(value, int)  # count_problem found none: an integer
    return value


_ORIGIN = {column.name: column for column in ORIGIN_COLUMNS}
# The events columns an adapter fills (source_kind and ingested_at are the loader's);
# `source` (the file a row came from) may be left NULL when a batch has one source.
_COLUMNS = (
    *CONTRACT_COLUMNS,
    *ADAPTER_COLUMNS,
    *TELEMETRY_COLUMNS,
    _ORIGIN["source_line"],
    _ORIGIN["source"],
)
COLUMNS: tuple[str, ...] = tuple(column.name for column in _COLUMNS)
# Text until the insert casts them (above).
TIME_COLUMNS = frozenset(c.name for c in _COLUMNS if c.sql_type == "TIMESTAMPTZ")
_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR": pa.string(),
    "TIMESTAMPTZ": pa.string(),
}
SCHEMA = pa.schema([pa.field(c.name, _ARROW_TYPES[c.sql_type]) for c in _COLUMNS])


class EventRows:
    """One batch of events: `add()` one at a time (a dict each, columns not named are
    NULL), `table()` at the end."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, **values: Any) -> int:
        """Append one event; returns its row index."""
        self.rows.append(values)
        return len(self.rows) - 1

    def set(self, row: int, **values: Any) -> None:
        self.rows[row].update(values)

    def get(self, row: int, name: str) -> Any:
        return self.rows[row].get(name)

    def column(self, name: str) -> list[Any]:
        return [row.get(name) for row in self.rows]

    def table(self) -> pa.Table:
        # Column by column from the keys each row has: a row names ~10 of the 37 columns,
        # and Table.from_pylist looks every column up in every row (measured: a third
        # less CPU on a batch of transcript events).
        count = len(self.rows)
        columns: dict[str, list[Any]] = {}
        for index, row in enumerate(self.rows):
            for name, value in row.items():
                column = columns.get(name)
                if column is None:
                    if name not in _NAMES:
                        raise KeyError(f"not an event column: {name!r}")
                    column = columns[name] = [None] * count
                column[index] = value
        return pa.table(
            [
                pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(count, f.type)
                for f in SCHEMA
            ],
            schema=SCHEMA,
        )


_NAMES = frozenset(COLUMNS)
