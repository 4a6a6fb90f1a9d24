"""Loading the transcript adapters' turns and labels (ingest/parsers/session_turns.py)
into `session_turns` and `session_labels`, in the caller's transaction: the one that
stores the same lines' events and moves their files' read positions, so a crash keeps
all three or none.

Each turn is kept once: a turn is known by its session, agent, time, kind, position in
its line, tool call id and text (Codex writes several messages in one millisecond), so a file read again from its start (a new file key, a copy
of a session) adds nothing twice. A label row is kept per (run, source); a later chunk
of the same file fills what the first one lacked (a first prompt after a long preamble)
and never overwrites a fact. Must not parse any log format.
"""

from __future__ import annotations

import pyarrow as pa

import warehouse
from ingest.parsers.session_turns import SessionRows
from ingest.pipelines.loading import now_utc

# `turn_batch`: ingest/parsers/session_turns.TURN_SCHEMA. The first of repeated turns in
# the batch (by file and line) wins.
INSERT_TURNS_SQL = """
INSERT INTO session_turns (run, agent, ts, source_kind, source, source_line, seq, kind, tool,
                           tool_use_id, is_error, captured, text, text_chars, ingested_at)
SELECT run, agent, ts, $source_kind, source, source_line, seq, kind, tool,
       tool_use_id, is_error, captured, text, text_chars, $now
FROM (SELECT * EXCLUDE (ts), CAST(ts AS TIMESTAMPTZ) AS ts FROM turn_batch) AS b
WHERE NOT EXISTS (
    SELECT 1 FROM session_turns AS t
    WHERE t.source_kind = $source_kind AND t.run = b.run AND t.agent = b.agent
      AND t.ts = b.ts AND t.kind = b.kind AND t.seq = b.seq
      AND t.tool_use_id IS NOT DISTINCT FROM b.tool_use_id
      AND t.text IS NOT DISTINCT FROM b.text)
QUALIFY row_number() OVER (
    PARTITION BY run, agent, ts, kind, seq, tool_use_id, text ORDER BY source, source_line) = 1
"""

# `label_batch`: ingest/parsers/session_turns.LABEL_SCHEMA.
FILL_LABELS_SQL = """
UPDATE session_labels AS l SET
    project = coalesce(l.project, b.project),
    cwd = coalesce(l.cwd, b.cwd),
    branch = coalesce(l.branch, b.branch),
    first_prompt = coalesce(l.first_prompt, b.first_prompt),
    first_ts = least(l.first_ts, CAST(b.first_ts AS TIMESTAMPTZ))
FROM label_batch AS b
WHERE l.source_kind = $source_kind AND l.run = b.run AND l.source = b.source
"""
INSERT_LABELS_SQL = """
INSERT INTO session_labels (run, source_kind, source, project, cwd, branch, first_prompt,
                            first_ts, ingested_at)
SELECT b.run, $source_kind, b.source, b.project, b.cwd, b.branch, b.first_prompt,
       CAST(b.first_ts AS TIMESTAMPTZ), $now
FROM label_batch AS b
WHERE NOT EXISTS (
    SELECT 1 FROM session_labels AS l
    WHERE l.source_kind = $source_kind AND l.run = b.run AND l.source = b.source)
"""


def load_session(cur: warehouse.Cursor, rows: SessionRows, source_kind: str) -> int:
    """Store the batch's new turns and its labels; returns how many turns were new."""
    added = 0
    turns = rows.turns_table()
    if turns.num_rows:
        added = _run(cur, "turn_batch", turns, INSERT_TURNS_SQL, source_kind)
    labels = rows.labels_table()
    if labels.num_rows:
        _run(cur, "label_batch", labels, FILL_LABELS_SQL, source_kind, with_now=False)
        _run(cur, "label_batch", labels, INSERT_LABELS_SQL, source_kind)
    return added


def _run(
    cur: warehouse.Cursor,
    name: str,
    table: pa.Table,
    sql: str,
    source_kind: str,
    *,
    with_now: bool = True,
) -> int:
    params: dict[str, object] = {"source_kind": source_kind}
    if with_now:
        params["now"] = now_utc()
    cur.register(name, table)
    try:
        row = cur.execute(sql, params).fetchone()
    finally:
        cur.unregister(name)
    return int(row[0]) if row else 0
