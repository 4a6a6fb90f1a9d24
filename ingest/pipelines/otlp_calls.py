"""An API call seen both ways counts once, by its provider `request_id`: Claude Code's
OpenTelemetry `api_request` event and its transcript's response with that `requestId`
are the same call of the same run (the session).

Owns the SQL that finds, for a batch of events about to be stored, the llm_calls whose
(run, request_id) the other source already stored, and drops them from the batch: the
OTLP loader (ingest/pipelines/otlp.py) skips calls a transcript import stored, the
transcript import (ingest/pipelines/claude_code.py) skips calls OTLP stored. Whichever
arrives first is kept. Must not insert or change stored events (the callers do, through
ingest/pipelines/adapter_loading.py).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from warehouse.schema.events import EventKind

OTLP_KIND = "otlp"
TRANSCRIPT_KIND = "claude-code"

# `batch_calls(run, request_id)`: the batch's llm_calls with a request id; those of them
# stored as llm_calls of the other source kind.
STORED_CALLS_SQL = f"""
SELECT DISTINCT b.run, b.request_id
FROM batch_calls AS b
JOIN events AS e ON e.run = b.run AND e.request_id = b.request_id
WHERE e.source_kind = ? AND e.event = '{EventKind.LLM_CALL}'
"""


def without_stored_calls(cur: warehouse.Cursor, rows: pa.Table, stored_kind: str) -> pa.Table:
    """The batch less its llm_calls whose (run, request_id) an llm_call of `stored_kind`
    already has."""
    is_call = pc.and_(
        pc.equal(rows.column("event"), EventKind.LLM_CALL.value),
        pc.is_valid(rows.column("request_id")),
    )
    calls = rows.filter(pc.fill_null(is_call, False)).select(["run", "request_id"])
    if calls.num_rows == 0:
        return rows
    cur.register("batch_calls", calls)
    try:
        found = cur.execute(STORED_CALLS_SQL, [stored_kind]).to_arrow_table()
    finally:
        cur.unregister("batch_calls")
    if found.num_rows == 0:
        return rows
    known = pc.binary_join_element_wise(found.column("run"), found.column("request_id"), "\0")
    keys = pc.binary_join_element_wise(rows.column("run"), rows.column("request_id"), "\0")
    seen = pc.fill_null(pc.is_in(keys, value_set=known), False)
    return rows.filter(pc.invert(pc.and_(pc.fill_null(is_call, False), seen)))


def new_otlp_calls(cur: warehouse.Cursor, rows: pa.Table) -> pa.Table:
    """An OTLP batch less the calls a Claude Code transcript import already stored."""
    return without_stored_calls(cur, rows, TRANSCRIPT_KIND)


def new_transcript_calls(cur: warehouse.Cursor, rows: pa.Table) -> pa.Table:
    """A transcript batch less the calls Claude Code's OpenTelemetry already stored."""
    return without_stored_calls(cur, rows, OTLP_KIND)
