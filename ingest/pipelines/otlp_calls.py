"""Claude Code's API calls over OpenTelemetry, settled against what is stored, by the
provider's `request_id`, before a batch is inserted.

Once: an `api_request` event and a transcript's response with that `requestId` are the
same call of the same run (the session). The OTLP loader (ingest/pipelines/otlp.py)
drops calls a transcript import stored; the transcript import
(ingest/pipelines/claude_code.py) drops calls OTLP stored: whichever arrives first is
kept.

Whose: a subagent's `claude_code.llm_request` span (a spawn row carrying the call's
request_id, ingest/parsers/otlp_claude_code.py) names the agent of that call. The
mapping is kept in `otlp_call_agents`; a batch's main-agent calls it names are moved to
that agent, and so are stored ones when the span comes after its event (deleted through
ingest/pipelines/run_rollups.py and inserted again with the batch, so the run totals
follow). Owns that SQL; the insert itself is the caller's (adapter_loading.insert_new).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.parsers.claude_code_subagents import MAIN_AGENT
from ingest.parsers.event_rows import COLUMNS, SCHEMA, TIME_COLUMNS
from ingest.pipelines import run_rollups
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
    """An OTLP batch less the calls a Claude Code transcript import already stored, each
    call the agent's the traces name (stored calls that moved added back)."""
    rows = without_stored_calls(cur, rows, TRANSCRIPT_KIND)
    spans = _span_calls(rows)
    if spans.num_rows:
        _remember_agents(cur, spans)
        moved = _take_stored_main_calls(cur, spans)
        is_spawn = pc.equal(rows.column("event"), EventKind.SPAWN.value)
        request_ids = pc.if_else(is_spawn, pa.scalar(None, pa.string()), rows.column("request_id"))
        rows = rows.set_column(rows.schema.get_field_index("request_id"), "request_id", request_ids)
        rows = pa.concat_tables([rows, moved])
    return _with_named_agents(cur, rows)


# `batch_agents(run, request_id, agent, parent)`: what a batch's subagent spans say.
INSERT_CALL_AGENTS_SQL = """
INSERT INTO otlp_call_agents (run, request_id, agent, parent)
SELECT DISTINCT ON (b.run, b.request_id) b.run, b.request_id, b.agent, b.parent
FROM batch_agents AS b
WHERE NOT EXISTS (
    SELECT 1 FROM otlp_call_agents AS a WHERE a.run = b.run AND a.request_id = b.request_id)
"""

_MAIN_CALLS = f"""
events.source_kind = ? AND events.event = '{EventKind.LLM_CALL}' AND events.agent = ?
AND EXISTS (SELECT 1 FROM batch_agents AS b
            WHERE b.run = events.run AND b.request_id = events.request_id)
"""


def _stored_as_text(name: str) -> str:
    if name in TIME_COLUMNS:  # as the batch carries times: RFC 3339 text in UTC
        return f"strftime(CAST({name} AT TIME ZONE 'UTC' AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%fZ')"
    return name


# Stored main-agent calls a batch's spans name another agent for, as batch rows.
STORED_MAIN_CALLS_SQL = f"""
SELECT {", ".join(f"{_stored_as_text(n)} AS {n}" for n in COLUMNS)}
FROM events WHERE {_MAIN_CALLS}
"""
DELETE_MAIN_CALLS_SQL = f"DELETE FROM events WHERE {_MAIN_CALLS}"

# `batch_call_ids(run, request_id)`: a batch's main-agent calls; the agents named for them.
CALL_AGENTS_SQL = """
SELECT a.run, a.request_id, a.agent, a.parent
FROM otlp_call_agents AS a JOIN batch_call_ids AS b USING (run, request_id)
"""


def _span_calls(rows: pa.Table) -> pa.Table:
    """(run, request_id, agent, parent) of the batch's spawn rows that name a call."""
    named = pc.and_(
        pc.equal(rows.column("event"), EventKind.SPAWN.value),
        pc.is_valid(rows.column("request_id")),
    )
    return rows.filter(pc.fill_null(named, False)).select(["run", "request_id", "agent", "parent"])


def _remember_agents(cur: warehouse.Cursor, spans: pa.Table) -> None:
    cur.register("batch_agents", spans)
    try:
        cur.execute(INSERT_CALL_AGENTS_SQL)
    finally:
        cur.unregister("batch_agents")


def _take_stored_main_calls(cur: warehouse.Cursor, spans: pa.Table) -> pa.Table:
    """Stored main-agent calls these spans name an agent for, deleted (their runs
    recounted) and returned as batch rows, to be inserted again as that agent's."""
    cur.register("batch_agents", spans)
    try:
        params = [OTLP_KIND, MAIN_AGENT]
        stored = cur.execute(STORED_MAIN_CALLS_SQL, params).to_arrow_table()
        if stored.num_rows:
            runs = set(stored.column("run").to_pylist())
            run_rollups.delete_events(cur, DELETE_MAIN_CALLS_SQL, params, runs)
    finally:
        cur.unregister("batch_agents")
    return stored.cast(SCHEMA)


def _with_named_agents(cur: warehouse.Cursor, rows: pa.Table) -> pa.Table:
    """The batch with each main-agent call the traces name another agent for moved to
    that agent (and its parent)."""
    main_calls = pc.fill_null(
        pc.and_(
            pc.and_(
                pc.equal(rows.column("event"), EventKind.LLM_CALL.value),
                pc.equal(rows.column("agent"), MAIN_AGENT),
            ),
            pc.is_valid(rows.column("request_id")),
        ),
        False,
    )
    calls = rows.filter(main_calls).select(["run", "request_id"])
    if calls.num_rows == 0:
        return rows
    cur.register("batch_call_ids", calls)
    try:
        found = cur.execute(CALL_AGENTS_SQL).fetchall()
    finally:
        cur.unregister("batch_call_ids")
    if not found:
        return rows
    named = {(run, request): (agent, parent) for run, request, agent, parent in found}
    keys = zip(rows.column("run").to_pylist(), rows.column("request_id").to_pylist(), strict=True)
    agents = rows.column("agent").to_pylist()
    parents = rows.column("parent").to_pylist()
    for index, (key, is_main) in enumerate(zip(keys, main_calls.to_pylist(), strict=True)):
        if is_main and key in named:
            agents[index], parents[index] = named[key]
    rows = rows.set_column(
        rows.schema.get_field_index("agent"), "agent", pa.array(agents, pa.string())
    )
    return rows.set_column(
        rows.schema.get_field_index("parent"), "parent", pa.array(parents, pa.string())
    )


def new_transcript_calls(cur: warehouse.Cursor, rows: pa.Table) -> pa.Table:
    """A transcript batch less the calls Claude Code's OpenTelemetry already stored."""
    return without_stored_calls(cur, rows, OTLP_KIND)
