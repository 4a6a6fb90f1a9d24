"""The events explorer: every event of one run, newest or oldest first, filtered
(analytics/runs/events_filters.py reads the filter), a page at a time by a keyset cursor
on (ts, row id), never OFFSET; each event whole (the contract's fields, attrs, usage,
its USD as analytics.costs.calls.call_usd prices it, where it was read from). Failed
means what the runs' error rate counts (warehouse.schema.events.ERROR_SQL); an agent's
subtree follows the parent links as the agent tree reads them (a spawn's link wins).

Also the whole filter as a file (events_export.py writes it): the same WHERE, read in
time slices of about EXPORT_CHUNK events as Arrow, so memory stays at a slice however
many events match.

SQL lives here as constants; the WHERE is joined from fixed fragments, one per filter
given (values always bound), so DuckDB prunes data files by the filters that are there.
A page is read in time slices from where it starts (the cursor, else the run's end or
start as its stored totals give them): a small slice first, each next one GROWTH times
wider, until the page is full, so a top-N never sorts a whole run of millions; an export
reads slices of about EXPORT_CHUNK events each, so no query sorts more than a chunk. The
first and last slices are open-ended: rows are never lost to a stale total.
Visibility is analytics/runs/queries.ensure_run's: a run not seen is a run not found.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from analytics.costs.calls import call_usd
from analytics.costs.pricing import PriceBook
from analytics.runs.events_filters import (
    EventFilter,
    Key,
    Order,
    decode_cursor,
    encode_cursor,
    like_pattern,
)
from analytics.runs.queries import ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from warehouse.schema.events import ATTEMPT_KINDS, ATTEMPT_SQL, CONTRACT_COLUMNS, ERROR_SQL

NO_FILTER = EventFilter()
EXPORT_CHUNK = 100_000  # events per keyset chunk of an export: a few MB of Arrow
WHOLE_SLICE = 2 * EXPORT_CHUNK  # a slice of an export read in one query at most this big
FIRST_SLICE = 1 / 1024  # of the run's time span: a page's first slice (bench/explore.md)
GROWTH = 8  # each next slice of a page this many times wider: at most five for a page
SLICE_FLOOR = timedelta(seconds=1)  # no slice is narrower

# The run's time span and size, as the run totals keep them (ingest/pipelines/run_rollups.py).
SPAN_SQL = """
SELECT min(first_ts) AS first_ts, max(last_ts) AS last_ts, sum(events) AS events
FROM run_rollups WHERE run = $run
"""
_SLICE_LOW_SQL = " AND ts >= $slice_low"
_SLICE_HIGH_SQL = " AND ts < $slice_high"

# One fragment per filter, each bound by name; `run = $run` is always there.
_FILTER_SQL = {
    "kind": "event = $kind",
    "failed": f"{ERROR_SQL}",
    "succeeded": f"({ATTEMPT_SQL} AND ok IS DISTINCT FROM false)",
    "agent": "agent = $agent",
    "agents": "list_contains($agents, agent)",
    "model": "model = $model",
    "tool": "tool = $tool",
    "start": "ts >= $start",
    "end": "ts < $end",
    "q": (
        "(error_message ILIKE $q ESCAPE '\\' OR commit_message ILIKE $q ESCAPE '\\'"
        " OR handoff_notes ILIKE $q ESCAPE '\\')"
    ),
}
# After the cursor's key in each order; the bare `ts` bound lets the scan skip files.
_AFTER_SQL = {
    Order.NEWEST: "ts <= $c_ts AND (ts < $c_ts OR rowid < $c_row)",
    Order.OLDEST: "ts >= $c_ts AND (ts > $c_ts OR rowid > $c_row)",
}
_ORDER_SQL = {Order.NEWEST: "ts DESC, rowid DESC", Order.OLDEST: "ts ASC, rowid ASC"}
# A file's rows carry `ts` as text: they sort by the key columns, never by that text.
_KEY_ORDER_SQL = {
    Order.NEWEST: "key_ts DESC, key_row DESC",
    Order.OLDEST: "key_ts ASC, key_row ASC",
}

PAGE_COLUMNS = (
    "event", "ts", "agent", "id", "parent", "role", "model", "input_tokens",
    "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens",
    "reasoning_output_tokens", "cost_usd", "speed", "tool", "ok", "duration_ms", "task",
    "commit_sha", "commit_files", "commit_insertions", "commit_deletions", "commit_message",
    "push_conflict", "error_kind", "error_message", "handoff_to", "handoff_status",
    "handoff_notes", "attrs", "source_kind", "source", "source_line",
)  # fmt: skip
PAGE_SQL = (
    "SELECT rowid AS row_id, {columns} FROM events WHERE {where} ORDER BY {order} LIMIT $limit"
)

# The agent and every agent below it: each agent's parent is its spawn's (else the first
# event naming one), as analytics/runs/queries.AGENTS_SQL reads the tree.
SUBTREE_SQL = """
WITH RECURSIVE links AS MATERIALIZED (
    SELECT agent, arg_min(parent, (event <> 'spawn', ts, source_line)) AS parent
    FROM events
    WHERE run = $run AND parent IS NOT NULL
    GROUP BY agent
),
tree(agent) AS (
    SELECT $agent::VARCHAR
    UNION
    SELECT l.agent FROM links AS l JOIN tree AS t ON l.parent = t.agent
)
SELECT list(agent ORDER BY agent) AS agents FROM tree
"""

# A file's columns: the contract's fields (event first), then where each was read from.
EXPORT_COLUMNS = (
    "event",
    *(c.name for c in CONTRACT_COLUMNS if c.name != "event"),
    "source_kind",
    "source",
    "source_line",
)
# RFC 3339 UTC as lib.durations.format_time spells it (seconds, or milliseconds if any).
TS_TEXT_SQL = """CASE WHEN epoch_us(ts) % 1000000 = 0
    THEN strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ')
    ELSE strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') END"""
_ATTRS_JSON_SQL = "CASE WHEN json_valid(attrs) THEN json(attrs) ELSE to_json(attrs) END"
_CSV_SELECT = ", ".join(f"{TS_TEXT_SQL} AS ts" if name == "ts" else name for name in EXPORT_COLUMNS)
_JSONL_SELECT = (
    "to_json(struct_pack("
    + ", ".join(
        f"ts := {TS_TEXT_SQL}"
        if name == "ts"
        else f"attrs := {_ATTRS_JSON_SQL}"
        if name == "attrs"
        else f"{name} := {name}"
        for name in EXPORT_COLUMNS
    )
    + "))::VARCHAR AS line"
)
# A slice read whole (any order, sorted in Arrow), unless it holds more than WHOLE_SLICE.
WHOLE_SLICE_SQL = (
    "SELECT ts AS key_ts, rowid AS key_row, {columns} FROM events WHERE {where} LIMIT $limit"
)
_ARROW_ORDER = {Order.NEWEST: "descending", Order.OLDEST: "ascending"}
EXPORT_SQL = (
    "SELECT ts AS key_ts, rowid AS key_row, {columns} FROM events"
    " WHERE {where} ORDER BY {order} LIMIT $limit"
)


@dataclass(frozen=True)
class Event:
    """One event whole: the contract's fields, its USD (None when unpriced or not a
    call), where it was read from, and its row id (its place in the order)."""

    row_id: int
    event: str
    ts: datetime
    agent: str
    fields: dict[str, Any]  # every other column of PAGE_COLUMNS, as stored
    attrs: Any  # the parsed attrs (an object), or the text if it is not JSON
    usd: float | None
    failed: bool
    subject: str | None  # a commit message's first line

    @property
    def message(self) -> str | None:
        """What the row says in a line: its error, its commit's subject, its handoff."""
        return self.fields.get("error_message") or self.subject or self.fields.get("handoff_notes")


@dataclass(frozen=True)
class EventsPage:
    events: list[Event]
    next: str | None


def _where(run: str, flt: EventFilter, seen_agents: list[str] | None) -> tuple[str, dict[str, Any]]:
    parts = ["run = $run"]
    params: dict[str, Any] = {"run": run}
    if flt.kind is not None:
        parts.append(_FILTER_SQL["kind"])
        params["kind"] = flt.kind
    if flt.ok is not None:
        parts.append(_FILTER_SQL["succeeded" if flt.ok else "failed"])
    if seen_agents is not None:
        parts.append(_FILTER_SQL["agents"])
        params["agents"] = seen_agents
    elif flt.agent is not None:
        parts.append(_FILTER_SQL["agent"])
        params["agent"] = flt.agent
    for name in ("model", "tool", "start", "end"):
        if (value := getattr(flt, name)) is not None:
            parts.append(_FILTER_SQL[name])
            params[name] = value
    if flt.q:
        parts.append(_FILTER_SQL["q"])
        params["q"] = like_pattern(flt.q)
    return " AND ".join(parts), params


def subtree_agents(run: str, agent: str) -> list[str]:
    """`agent` and every agent it spawned, however deep (sorted)."""
    row = warehouse.fetch_one(SUBTREE_SQL, {"run": run, "agent": agent})
    return list(row["agents"]) if row and row["agents"] else [agent]


def _filtered(run: str, flt: EventFilter, seen: Seen) -> tuple[str, dict[str, Any]]:
    ensure_run(run, seen)
    agents = subtree_agents(run, flt.agent) if flt.subtree and flt.agent else None
    return _where(run, flt, agents)


@dataclass(frozen=True)
class Span:
    """A run's first and last event time and its number of events (None: not known)."""

    first: datetime | None
    last: datetime | None
    events: int

    def width(self, fraction: float) -> timedelta:
        if self.first is None or self.last is None:
            return SLICE_FLOOR
        return max((self.last - self.first) * fraction, SLICE_FLOOR)


def _span(run: str) -> Span:
    row = warehouse.fetch_one(SPAN_SQL, {"run": run})
    if row is None:
        return Span(None, None, 0)
    return Span(row["first_ts"], row["last_ts"], int(row["events"] or 0))


Slice = tuple[datetime | None, datetime | None]  # ts >= low and ts < high; None: open


def _slices(
    span: Span, flt: EventFilter, key: Key | None, width: timedelta, growth: int
) -> Iterator[Slice]:
    """Half-open time slices that together cover every time, in the order's direction,
    from where the page (or file) starts; the first and the last are open-ended."""
    if span.first is None or span.last is None:
        yield None, None
        return
    low = max(span.first, flt.start) if flt.start else span.first
    high = min(span.last, flt.end) if flt.end else span.last
    if key is not None and flt.order is Order.NEWEST:
        high = min(high, key[0])
    elif key is not None:
        low = max(low, key[0])
    edge: datetime | None = None
    while True:
        if flt.order is Order.NEWEST:
            start = high - width
            if start <= low:
                yield None, edge
                return
            yield start, edge
            edge, high = start, start
        else:
            stop = low + width
            if stop > high:
                yield edge, None
                return
            yield edge, stop
            edge, low = stop, stop
        width *= growth


def _sliced(
    where: str, params: dict[str, Any], low: datetime | None, high: datetime | None
) -> tuple[str, dict[str, Any]]:
    bound = dict(params)
    if low is not None:
        where += _SLICE_LOW_SQL
        bound["slice_low"] = low
    if high is not None:
        where += _SLICE_HIGH_SQL
        bound["slice_high"] = high
    return where, bound


def _keyed(where: str, params: dict[str, Any], order: Order, key: Key | None) -> str:
    if key is None:
        return where
    params["c_ts"], params["c_row"] = key
    return f"{where} AND {_AFTER_SQL[order]}"


def events_page(
    run: str,
    flt: EventFilter = NO_FILTER,
    seen: Seen = SYSTEM_VIEW,
    *,
    limit: int = 50,
    cursor: str | None = None,
    book: PriceBook | None = None,
) -> EventsPage:
    """The `limit` events after `cursor` (the first page without), in the filter's order."""
    key = decode_cursor(cursor) if cursor else None
    where, params = _filtered(run, flt, seen)
    where = _keyed(where, params, flt.order, key)
    span = _span(run)
    rows: list[dict[str, Any]] = []
    for low, high in _slices(span, flt, key, span.width(FIRST_SLICE), GROWTH):
        sliced, bound = _sliced(where, params, low, high)
        bound["limit"] = limit + 1 - len(rows)
        order = _ORDER_SQL[flt.order]
        sql = PAGE_SQL.format(columns=", ".join(PAGE_COLUMNS), where=sliced, order=order)
        rows += warehouse.fetch_all(sql, bound)
        if len(rows) > limit:
            break
    book = book or PriceBook.load()
    events = [_event(row, book) for row in rows[:limit]]
    more = len(rows) > limit
    following = encode_cursor((events[-1].ts, events[-1].row_id)) if more else None
    return EventsPage(events, following)


def _event(row: dict[str, Any], book: PriceBook) -> Event:
    ts = row["ts"].astimezone(UTC)
    fields = {k: v for k, v in row.items() if k not in ("row_id", "event", "ts", "agent", "attrs")}
    message = row["commit_message"]
    return Event(
        row_id=int(row["row_id"]),
        event=row["event"],
        ts=ts,
        agent=row["agent"],
        fields=fields,
        attrs=_attrs(row["attrs"]),
        usd=call_usd(row, book),
        failed=row["event"] == "error" or (row["event"] in ATTEMPT_KINDS and row["ok"] is False),
        subject=message.split("\n", 1)[0] if message else None,
    )


def _attrs(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def export_batches(
    run: str, flt: EventFilter, seen: Seen = SYSTEM_VIEW, *, jsonl: bool = False
) -> Iterator[pa.Table]:
    """Every event the filter matches, in its order, as Arrow tables of up to WHOLE_SLICE
    rows: EXPORT_COLUMNS for a CSV, one `line` of JSON per event when `jsonl`. The run is
    checked (NotFoundError) before the first table is asked for."""
    where, params = _filtered(run, flt, seen)
    columns = _JSONL_SELECT if jsonl else _CSV_SELECT
    return _sliced_chunks(run, flt, where, params, columns)


def _sliced_chunks(
    run: str, flt: EventFilter, where: str, params: dict[str, Any], columns: str
) -> Iterator[pa.Table]:
    """The tables of each slice of about EXPORT_CHUNK events, in order; the first table
    (even empty) names the columns, empty ones after it are left out."""
    span = _span(run)
    width = span.width(EXPORT_CHUNK / span.events if span.events > EXPORT_CHUNK else 1.0)
    first = True
    for low, high in _slices(span, flt, None, width, 1):
        sliced, bound = _sliced(where, params, low, high)
        for table in _slice_tables(sliced, bound, flt.order, columns):
            if table.num_rows or first:
                yield table
            first = False


def _slice_tables(
    where: str, bound: dict[str, Any], order: Order, columns: str
) -> Iterator[pa.Table]:
    """A slice's events in order: read whole and sorted in Arrow when it holds at most
    WHOLE_SLICE events (the common case: DuckDB's sort of the wide rows costs as much as
    reading them), else in keyset chunks that DuckDB sorts, so memory stays bounded."""
    params = {**bound, "limit": WHOLE_SLICE + 1}
    table = warehouse.fetch_arrow(WHOLE_SLICE_SQL.format(columns=columns, where=where), params)
    if table.num_rows > WHOLE_SLICE:
        del table
        yield from _chunks(where, bound, order, columns)
        return
    direction = _ARROW_ORDER[order]
    indices = pc.sort_indices(table, sort_keys=[("key_ts", direction), ("key_row", direction)])
    yield table.take(indices).drop_columns(["key_ts", "key_row"])


def _chunks(where: str, base: dict[str, Any], order: Order, columns: str) -> Iterator[pa.Table]:
    key: Key | None = None
    while True:
        params = {**base, "limit": EXPORT_CHUNK}
        sql = EXPORT_SQL.format(
            columns=columns, where=_keyed(where, params, order, key), order=_KEY_ORDER_SQL[order]
        )
        table = warehouse.fetch_arrow(sql, params)
        first = key is None
        if table.num_rows:
            last = table.slice(table.num_rows - 1)
            key = (last["key_ts"][0].as_py(), last["key_row"][0].as_py())
        if table.num_rows or first:  # an empty first table still names the columns
            yield table.drop_columns(["key_ts", "key_row"])
        if table.num_rows < EXPORT_CHUNK:
            return
