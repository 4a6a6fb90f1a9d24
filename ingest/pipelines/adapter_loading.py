"""Loading the log adapters' event batches (Claude Code, Codex, git) into `events`, each
event once (through ingest/pipelines/run_rollups.py, which keeps the run totals), and the
per-file parser state a transcript needs to resume mid-file.

Owns the SQL that skips events already stored, looks stored events up by id and keeps
source states; must not parse any log format (the parsers fill EventRows).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.parsers.event_rows import COLUMNS, TIME_COLUMNS
from ingest.pipelines import run_rollups
from ingest.pipelines.loading import now_utc


class Dedup(StrEnum):
    """Which stored events make a new one a duplicate."""

    RUN = "run"  # the same run + id (git: a sha is stored once per run)
    SOURCE_KIND = "source_kind"  # the same id anywhere in this source kind (transcripts:
    # a resumed or forked session copies its parent's lines into a new file)


def _select_list() -> str:
    parts = []
    for name in COLUMNS:
        if name in TIME_COLUMNS:
            parts.append(f"CAST(b.{name} AS TIMESTAMPTZ) AS {name}")
        elif name == "source":
            parts.append("coalesce(b.source, $source) AS source")
        else:
            parts.append(f"b.{name}")
    return ", ".join(parts)


_INSERT_HEAD = f"""
INSERT INTO events ({", ".join(COLUMNS)}, source_kind, ingested_at)
SELECT {_select_list()}, $source_kind, $now
FROM (SELECT *, {{nth}} AS nth FROM adapter_batch) AS b
WHERE b.id IS NULL OR (b.nth = 1 AND NOT EXISTS (
    SELECT 1 FROM events AS e WHERE e.source_kind = $source_kind AND e.id = b.id {{scope}}))
"""

# The window that finds the first of repeated ids is more than half of the statement's
# CPU on a transcript batch (measured): a batch whose ids are all distinct goes without it.
_FIRST_OF = "row_number() OVER (PARTITION BY {} ORDER BY source_line)"
INSERT_RUN_SCOPED_SQL = _INSERT_HEAD.format(
    nth=_FIRST_OF.format("run, id"), scope="AND e.run = b.run"
)
INSERT_KIND_SCOPED_SQL = _INSERT_HEAD.format(nth=_FIRST_OF.format("id"), scope="")
INSERT_DISTINCT_RUN_SCOPED_SQL = _INSERT_HEAD.format(nth="1", scope="AND e.run = b.run")
INSERT_DISTINCT_KIND_SCOPED_SQL = _INSERT_HEAD.format(nth="1", scope="")


def insert_new(
    cur: warehouse.Cursor,
    rows: pa.Table,
    *,
    source_kind: str,
    source: str,
    dedup: Dedup,
) -> int:
    """Insert the batch's events that are not stored yet (the first of repeated ids in
    the batch wins), folded into the run totals; returns how many were inserted."""
    if rows.num_rows == 0:
        return 0
    repeats = _repeats_an_id(rows)
    if dedup is Dedup.RUN:
        sql = INSERT_RUN_SCOPED_SQL if repeats else INSERT_DISTINCT_RUN_SCOPED_SQL
    else:
        sql = INSERT_KIND_SCOPED_SQL if repeats else INSERT_DISTINCT_KIND_SCOPED_SQL
    cur.register("adapter_batch", rows)
    try:
        return run_rollups.insert_events(
            cur, sql, lambda stamp: {"source_kind": source_kind, "source": source, "now": stamp}
        )
    finally:
        cur.unregister("adapter_batch")


def _repeats_an_id(rows: pa.Table) -> bool:
    """True when an id occurs twice in the batch (distinct ids are distinct per run too)."""
    ids = rows.column("id")
    return bool(pc.count_distinct(ids).as_py() < len(ids) - ids.null_count)


STORED_SQL = """
SELECT id, run, agent, epoch_ms(ts) AS ts_ms, event, tool, output_tokens, attrs
FROM events
WHERE source_kind = ? AND id IN (SELECT id FROM wanted_ids)
"""


def stored_events(
    cur: warehouse.Cursor, source_kind: str, ids: Iterable[str]
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


# `tool_outcomes(id, ok, duration_ms)`: results that arrived after their call was stored.
UPDATE_TOOL_CALLS_SQL = """
UPDATE events SET ok = o.ok, duration_ms = o.duration_ms
FROM tool_outcomes AS o
WHERE events.source_kind = ? AND events.event = 'tool_call' AND events.id = o.id
"""
# The rows each UPDATE may change, for run_rollups.update_events to count before and after.
TOOL_CALLS_SCOPE = (
    "source_kind = ? AND event = 'tool_call' AND id IN (SELECT id FROM tool_outcomes)"
)

# `llm_outputs(id, output_tokens)`: a later line of a stored call reported more output
# (Claude Code repeats a response's usage on each content block as it streams).
UPDATE_LLM_OUTPUTS_SQL = """
UPDATE events SET output_tokens = o.output_tokens
FROM llm_outputs AS o
WHERE events.source_kind = ? AND events.event = 'llm_call' AND events.id = o.id
  AND coalesce(events.output_tokens, -1) < o.output_tokens
"""
LLM_OUTPUTS_SCOPE = "source_kind = ? AND event = 'llm_call' AND id IN (SELECT id FROM llm_outputs)"


def update_tool_calls(
    cur: warehouse.Cursor, source_kind: str, outcomes: list[tuple[str, bool, float | None]]
) -> None:
    if not outcomes:
        return
    table = pa.table(
        {
            "id": pa.array([o[0] for o in outcomes], pa.string()),
            "ok": pa.array([o[1] for o in outcomes], pa.bool_()),
            "duration_ms": pa.array([o[2] for o in outcomes], pa.float64()),
        }
    )
    cur.register("tool_outcomes", table)
    try:
        run_rollups.update_events(cur, UPDATE_TOOL_CALLS_SQL, TOOL_CALLS_SCOPE, [source_kind])
    finally:
        cur.unregister("tool_outcomes")


def update_llm_outputs(
    cur: warehouse.Cursor, source_kind: str, outputs: list[tuple[str, int]]
) -> None:
    if not outputs:
        return
    table = pa.table(
        {
            "id": pa.array([o[0] for o in outputs], pa.string()),
            "output_tokens": pa.array([o[1] for o in outputs], pa.int64()),
        }
    )
    cur.register("llm_outputs", table)
    try:
        run_rollups.update_events(cur, UPDATE_LLM_OUTPUTS_SQL, LLM_OUTPUTS_SCOPE, [source_kind])
    finally:
        cur.unregister("llm_outputs")


# `wanted_states(source, file_key, byte_offset)`: the newest state saved at each.
STATES_SQL = """
SELECT s.source, s.file_key, s.byte_offset, arg_max(s.state, s.committed_at) AS state
FROM source_states AS s
JOIN wanted_states AS w USING (source, file_key, byte_offset)
WHERE s.source_kind = ?
GROUP BY ALL
"""

INSERT_STATE_SQL = """
INSERT INTO source_states (source_kind, source, file_key, byte_offset, state, committed_at)
VALUES (?, ?, ?, ?, ?, ?)
"""


def read_states(
    source_kind: str, wanted: list[tuple[str, str, int]]
) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The parser states saved when these files were read up to these offsets, keyed by
    (source, file_key, byte_offset); a file read from its start has none."""
    if not wanted:
        return {}
    table = pa.table(
        {
            "source": pa.array([w[0] for w in wanted], pa.string()),
            "file_key": pa.array([w[1] for w in wanted], pa.string()),
            "byte_offset": pa.array([w[2] for w in wanted], pa.int64()),
        }
    )
    cur = warehouse.cursor()
    cur.register("wanted_states", table)
    try:
        rows = cur.execute(STATES_SQL, [source_kind]).fetchall()
    finally:
        cur.unregister("wanted_states")
    return {(r[0], r[1], int(r[2])): dict(orjson.loads(r[3])) for r in rows}


def save_state(
    cur: warehouse.Cursor,
    source_kind: str,
    source: str,
    file_key: str,
    offset: int,
    state: dict[str, Any],
) -> None:
    """Save the parser state reached at `offset`, in the caller's transaction (the one
    that moves the read position there)."""
    cur.execute(
        INSERT_STATE_SQL,
        [source_kind, source, file_key, offset, orjson.dumps(state).decode(), now_utc()],
    )
