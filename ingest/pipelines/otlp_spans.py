"""The agents of GenAI span events, assigned at load time from the stored span tree.

A span is exported when it ends, so a chat or tool span usually arrives before the
`invoke_agent` span above it, often in another request: ingest/parsers/otlp_genai.py
stores it with the placeholder agent `main`, and an agent's `spawn` with no parent.
After each load, assign_agents() walks the `parent_span_id` links of every stored span of
the traces the load touched (one recursive query), finds each span's nearest
`invoke_agent` ancestor and corrects the rows whose agent (a chat or tool span: that
ancestor's agent, else `main`) or parent (a spawn: that ancestor's agent, else none)
differ from it. The walk climbs through stored spans only: above a span whose parent has
not arrived yet, the row keeps the placeholder until it does. Spans arriving in any order
end with the same agent tree.

The corrected rows are deleted and stored again (with their ingested_at) through
ingest/pipelines/run_rollups.py: a row's agent is part of its run's agent count, which an
UPDATE's difference cannot take back. Owns that SQL; must not map spans
(ingest/parsers/otlp_genai.py) nor decide which events are new (adapter_loading).
"""

from __future__ import annotations

import pyarrow as pa

import warehouse
from ingest.parsers.event_rows import EventRows
from ingest.parsers.otlp_genai import PENDING_AGENT, SPAN_ID_PREFIX
from ingest.pipelines import run_rollups
from warehouse.schema.events import EventKind

MAX_DEPTH = 256  # links climbed at most: a span tree deeper than this (or a loop) stops here

# The span events of the touched traces (`touched_traces`), and each one's walk up its
# parent links through stored spans that are not agents: the walk ends at an agent (the
# answer), at a span not stored (yet), or at a root. Rows whose answer differs from what
# they hold come out with the agent and parent they should have.
_CORRECTIONS_SQL = f"""
WITH RECURSIVE spans AS (
    SELECT run, id, trace_id, span_id, parent_span_id, event, agent, parent
    FROM events
    WHERE source_kind = 'otlp' AND span_id IS NOT NULL AND id LIKE '{SPAN_ID_PREFIX}%'
      AND trace_id IN (SELECT trace_id FROM touched_traces)
),
walk AS (
    SELECT trace_id, span_id, parent_span_id AS above, 0 AS hops FROM spans
    UNION ALL
    SELECT w.trace_id, w.span_id, s.parent_span_id, w.hops + 1
    FROM walk AS w
    JOIN spans AS s ON s.trace_id = w.trace_id AND s.span_id = w.above
    WHERE s.event <> '{EventKind.SPAWN}' AND w.hops < {MAX_DEPTH}
),
ends AS (
    SELECT trace_id, span_id, above
    FROM walk
    QUALIFY hops = max(hops) OVER (PARTITION BY trace_id, span_id)
),
found AS (
    SELECT e.trace_id, e.span_id, a.agent AS ancestor
    FROM ends AS e
    LEFT JOIN spans AS a
      ON a.trace_id = e.trace_id AND a.span_id = e.above AND a.event = '{EventKind.SPAWN}'
),
wanted AS (
    SELECT s.run, s.id,
           CASE WHEN s.event = '{EventKind.SPAWN}' THEN s.agent
                ELSE coalesce(f.ancestor, $pending) END AS agent,
           CASE WHEN s.event = '{EventKind.SPAWN}' THEN f.ancestor ELSE s.parent END AS parent,
           s.agent AS was_agent, s.parent AS was_parent
    FROM spans AS s
    JOIN found AS f USING (trace_id, span_id)
)
SELECT run, id, agent, parent FROM wanted
WHERE agent IS DISTINCT FROM was_agent OR parent IS DISTINCT FROM was_parent
"""

# The stored rows to correct (`span_corrections`), whole, with their new agent and parent.
_CORRECTED_ROWS_SQL = """
SELECT e.* REPLACE (c.agent AS agent, c.parent AS parent)
FROM events AS e
JOIN span_corrections AS c ON c.run = e.run AND c.id = e.id
WHERE e.source_kind = 'otlp'
"""

_DELETE_CORRECTED_SQL = """
DELETE FROM events
WHERE source_kind = 'otlp'
  AND EXISTS (SELECT 1 FROM span_corrections AS c WHERE c.run = events.run AND c.id = events.id)
"""


def _is_span(event_id: str | None) -> bool:
    return event_id is not None and event_id.startswith(SPAN_ID_PREFIX)


def assign_agents(cur: warehouse.Cursor, rows: EventRows) -> int:
    """Correct the agents and parents of the stored span events of the traces whose GenAI
    spans are among `rows` (a load's events; other sources' rows with a trace id, a Claude
    Code record logged inside a span, touch nothing); returns how many rows were corrected."""
    ids = rows.column("id")
    traces = sorted(
        {t for t, i in zip(rows.column("trace_id"), ids, strict=True) if t and _is_span(i)}
    )
    if not traces:
        return 0
    cur.register("touched_traces", pa.table({"trace_id": pa.array(traces, pa.string())}))
    try:
        corrections = cur.execute(_CORRECTIONS_SQL, {"pending": PENDING_AGENT}).to_arrow_table()
    finally:
        cur.unregister("touched_traces")
    if not corrections.num_rows:
        return 0
    runs = set(corrections.column("run").to_pylist())
    cur.register("span_corrections", corrections)
    try:
        corrected = cur.execute(_CORRECTED_ROWS_SQL).to_arrow_table()
        run_rollups.delete_events(cur, _DELETE_CORRECTED_SQL, [], runs)
        totals = run_rollups.PendingTotals()
        totals.insert(cur, corrected)
        totals.add(cur)
    finally:
        cur.unregister("span_corrections")
    return corrected.num_rows
