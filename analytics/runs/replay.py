"""Session replay: what a Claude Code or Codex session said, turn by turn, in order (its
time, then the file and line it was read from, then its place in that line), one page
at a time, with each tool call's result paired to it (by tool_use_id) and the label that
names the session.

Turns come from `session_turns` (written from transcripts at ingest,
ingest/pipelines/session_loading.py). A session known only from OpenTelemetry has none:
its `prompt`, `tool_call` and `llm_call` events are read as turns instead, a prompt's text
from its attrs when the user turned content capture on, otherwise a turn marked not
captured. Visibility is analytics/runs/queries.ensure_run's: a run the reader does not
see is a run that does not exist. SQL lives here as constants with bound parameters.

The bench times `replay_page(run, seen)` (its first page) on a 5,000-turn session.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import orjson

import warehouse
from analytics.runs.queries import ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from lib.bounds import name_problem
from lib.errors import ParameterError

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
BAD_CURSOR = "cursor is not one this list gave"
NOT_CAPTURED_PROMPT = (
    "not captured (enable OTEL_LOG_USER_PROMPTS; for Codex, log_user_prompt = true under [otel])"
)
NOT_CAPTURED_OTLP = "not captured (OpenTelemetry events carry no content for this turn)"
NOT_CAPTURED_THINKING = "thinking (its text was not kept in the transcript)"
NOT_CAPTURED_TRANSCRIPT = "not captured (the transcript has no content for this turn)"

_AFTER = """($after_ts::TIMESTAMPTZ IS NULL OR ts > $after_ts OR (ts = $after_ts AND (
    source > $after_source OR (source = $after_source AND (
    source_line > $after_line OR (source_line = $after_line AND seq > $after_seq))))))"""
_BEFORE = """($before_ts::TIMESTAMPTZ IS NULL OR ts < $before_ts OR (ts = $before_ts AND (
    source < $before_source OR (source = $before_source AND (
    source_line < $before_line OR (source_line = $before_line AND seq < $before_seq))))))"""

# A session's transcript turns, without the results paired to a call of the session
# (those come with their call: RESULTS_SQL).
_TRANSCRIPT_TURNS = """
WITH t AS (
    SELECT ts, agent, kind, tool, tool_use_id, is_error, captured, text, text_chars,
           source, coalesce(source_line, 0) AS source_line, seq, CAST(NULL AS VARCHAR) AS model
    FROM session_turns
    WHERE run = $run AND ($agent::VARCHAR IS NULL OR agent = $agent)
)
SELECT * FROM t
WHERE NOT (kind = 'tool_result' AND tool_use_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM t AS c WHERE c.kind = 'tool_call' AND c.tool_use_id = t.tool_use_id))
"""
# The same shape from a session's OpenTelemetry events (no transcript turns).
_OTLP_TURNS = """
WITH t AS (
    SELECT ts, agent,
           CASE event WHEN 'llm_call' THEN 'response' ELSE event END AS kind,
           tool, CAST(NULL AS VARCHAR) AS tool_use_id, ok = false AS is_error,
           json_extract_string(attrs, '$.prompt') AS text,
           coalesce(source, '') AS source, coalesce(source_line, 0) AS source_line,
           CAST(row_number() OVER (PARTITION BY ts, source, source_line ORDER BY id) - 1
                AS INTEGER) AS seq,
           model, event, attrs
    FROM events
    WHERE run = $run AND source_kind = 'otlp' AND event IN ('prompt', 'tool_call', 'llm_call')
      AND ($agent::VARCHAR IS NULL OR agent = $agent)
)
SELECT ts, agent, kind, tool, tool_use_id, is_error, text IS NOT NULL AS captured, text,
       CASE WHEN event = 'prompt' THEN coalesce(
           TRY_CAST(json_extract_string(attrs, '$.prompt_length') AS BIGINT), length(text))
       END AS text_chars,
       source, source_line, seq, model
FROM t
"""


def _page_sql(turns: str, condition: str, order: str) -> str:
    return (
        f"SELECT * FROM ({turns}) AS turns WHERE {condition} "
        f"ORDER BY ts {order}, source {order}, source_line {order}, seq {order} LIMIT $limit"
    )


TRANSCRIPT_AFTER_SQL = _page_sql(_TRANSCRIPT_TURNS, _AFTER, "ASC")
TRANSCRIPT_BEFORE_SQL = _page_sql(_TRANSCRIPT_TURNS, _BEFORE, "DESC")
OTLP_AFTER_SQL = _page_sql(_OTLP_TURNS, _AFTER, "ASC")
OTLP_BEFORE_SQL = _page_sql(_OTLP_TURNS, _BEFORE, "DESC")

# The results of a page's calls: the first logged of each tool_use_id.
RESULTS_SQL = """
SELECT ts, agent, kind, tool, tool_use_id, is_error, captured, text, text_chars,
       source, coalesce(source_line, 0) AS source_line, seq, CAST(NULL AS VARCHAR) AS model
FROM session_turns
WHERE run = $run AND kind = 'tool_result' AND list_contains($ids, tool_use_id)
QUALIFY row_number() OVER (PARTITION BY tool_use_id ORDER BY ts, source, source_line, seq) = 1
"""

# Where the session's turns come from, whether any content was captured, its agents.
ORIGIN_SQL = """
WITH transcript AS (
    SELECT bool_or(captured) AS captured, list(DISTINCT agent ORDER BY agent) AS agents,
           count(*) AS turns
    FROM session_turns WHERE run = $run
),
otlp AS (
    SELECT bool_or(event = 'prompt' AND json_extract_string(attrs, '$.prompt') IS NOT NULL)
               AS captured,
           list(DISTINCT agent ORDER BY agent) AS agents, count(*) AS turns
    FROM events
    WHERE run = $run AND source_kind = 'otlp' AND event IN ('prompt', 'tool_call', 'llm_call')
)
SELECT t.turns AS transcript_turns, t.captured AS transcript_captured, t.agents AS transcript_agents,
       o.turns AS otlp_turns, o.captured AS otlp_captured, o.agents AS otlp_agents,
       (SELECT min(source_kind) FROM events WHERE run = $run) AS source_kind
FROM transcript AS t, otlp AS o
"""

# A run's label: each fact from the earliest row (by first_ts) that has it.
LABEL_SQL = """
SELECT arg_min(project, first_ts) FILTER (WHERE project IS NOT NULL) AS project,
       arg_min(cwd, first_ts) FILTER (WHERE cwd IS NOT NULL) AS cwd,
       arg_min(branch, first_ts) FILTER (WHERE branch IS NOT NULL) AS branch,
       arg_min(first_prompt, first_ts) FILTER (WHERE first_prompt IS NOT NULL) AS first_prompt,
       min(first_ts) AS first_ts, count(*) AS rows
FROM session_labels WHERE run = $run
"""


@dataclass(frozen=True)
class Turn:
    """One thing a session said. `text` is None when it was not captured (`missing` says
    why); `truncated` when the stored text is shorter than `text_chars`. A tool call
    carries its `result` (None until one is logged)."""

    ts: datetime
    agent: str
    kind: str  # prompt, response, thinking, tool_call, tool_result
    tool: str | None
    tool_use_id: str | None
    text: str | None
    text_chars: int | None
    truncated: bool
    is_error: bool
    captured: bool
    missing: str | None
    source: str
    source_line: int
    seq: int
    model: str | None
    result: Turn | None = None


@dataclass(frozen=True)
class SessionLabel:
    project: str | None
    cwd: str | None
    branch: str | None
    first_prompt: str | None
    first_ts: datetime | None


@dataclass(frozen=True)
class ReplayPage:
    """A page of turns, oldest first, and the cursors of the pages beside it."""

    run: str
    origin: str | None  # "transcript", "otlp", or None (no turns)
    source_kind: str | None  # the run's events' source kind
    captured: bool
    agents: list[str]
    label: SessionLabel | None
    turns: list[Turn]
    next: str | None
    previous: str | None


def read_limit(value: int | None) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise ParameterError(f"limit must be between 1 and {MAX_LIMIT}")
    return value


Key = tuple[datetime, str, int, int]


def encode_cursor(key: Key) -> str:
    ts, source, line, seq = key
    raw = orjson.dumps([ts.astimezone(UTC).isoformat(), source, line, seq])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    """A cursor this list gave, or ParameterError (one line)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        ts, source, line, seq = orjson.loads(raw)
        moment = datetime.fromisoformat(ts)
    except (ValueError, TypeError, binascii.Error, orjson.JSONDecodeError):
        raise ParameterError(BAD_CURSOR) from None
    fits = isinstance(source, str) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in (line, seq)
    )
    if not fits or moment.tzinfo is None:
        raise ParameterError(BAD_CURSOR)
    return moment, source, line, seq


def replay_page(
    run: str,
    seen: Seen = SYSTEM_VIEW,
    *,
    agent: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    before: str | None = None,
) -> ReplayPage:
    """The turns after `cursor` (or before `before`; the first page without either), at
    most `limit` (DEFAULT_LIMIT), of one agent when `agent` is given."""
    ensure_run(run, seen)
    size = read_limit(limit)
    if agent is not None and (problem := name_problem(agent, "agent")):
        raise ParameterError(problem)
    if cursor and before:
        raise ParameterError("give cursor or before, not both")
    after_key = decode_cursor(cursor) if cursor else None
    before_key = decode_cursor(before) if before else None
    origin_row = warehouse.fetch_one(ORIGIN_SQL, {"run": run}) or {}
    origin, captured, agents = _origin(origin_row)
    label = _label(run)
    if origin is None:
        return ReplayPage(
            run, None, origin_row.get("source_kind"), False, [], label, [], None, None
        )
    params: dict[str, Any] = {"run": run, "agent": agent or None, "limit": size + 1}
    backwards = before_key is not None
    params.update(
        _key_params("before", before_key) if backwards else _key_params("after", after_key)
    )
    if origin == "transcript":
        sql = TRANSCRIPT_BEFORE_SQL if backwards else TRANSCRIPT_AFTER_SQL
    else:
        sql = OTLP_BEFORE_SQL if backwards else OTLP_AFTER_SQL
    rows = warehouse.fetch_all(sql, params)
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        rows.reverse()
    turns = _with_results(run, [_turn(row, origin) for row in rows])
    if backwards:
        previous = _cursor_of(turns[0]) if more and turns else None
        following = _cursor_of(turns[-1]) if turns else None
    else:
        following = _cursor_of(turns[-1]) if more and turns else None
        previous = _cursor_of(turns[0]) if after_key is not None and turns else None
    return ReplayPage(
        run,
        origin,
        origin_row.get("source_kind"),
        captured,
        agents,
        label,
        turns,
        following,
        previous,
    )


def _origin(row: dict[str, Any]) -> tuple[str | None, bool, list[str]]:
    if row.get("transcript_turns"):
        return "transcript", bool(row["transcript_captured"]), list(row["transcript_agents"])
    if row.get("otlp_turns"):
        return "otlp", bool(row["otlp_captured"]), list(row["otlp_agents"])
    return None, False, []


def _label(run: str) -> SessionLabel | None:
    row = warehouse.fetch_one(LABEL_SQL, {"run": run})
    if not row or not row["rows"]:
        return None
    return SessionLabel(
        row["project"], row["cwd"], row["branch"], row["first_prompt"], _utc(row["first_ts"])
    )


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def _key_params(prefix: str, key: Key | None) -> dict[str, Any]:
    ts, source, line, seq = key if key is not None else (None, None, None, None)
    return {
        f"{prefix}_ts": ts,
        f"{prefix}_source": source,
        f"{prefix}_line": line,
        f"{prefix}_seq": seq,
    }


def _cursor_of(turn: Turn) -> str:
    return encode_cursor((turn.ts, turn.source, turn.source_line, turn.seq))


def _missing(row: dict[str, Any], origin: str) -> str | None:
    if row["captured"]:
        return None
    if origin == "otlp":
        return NOT_CAPTURED_PROMPT if row["kind"] == "prompt" else NOT_CAPTURED_OTLP
    return NOT_CAPTURED_THINKING if row["kind"] == "thinking" else NOT_CAPTURED_TRANSCRIPT


def _turn(row: dict[str, Any], origin: str) -> Turn:
    text = row["text"] if row["captured"] else None
    chars = None if row["text_chars"] is None else int(row["text_chars"])
    return Turn(
        ts=row["ts"].astimezone(UTC),
        agent=row["agent"],
        kind=row["kind"],
        tool=row["tool"],
        tool_use_id=row["tool_use_id"],
        text=text,
        text_chars=chars,
        truncated=text is not None and chars is not None and len(text) < chars,
        is_error=bool(row["is_error"]),
        captured=bool(row["captured"]),
        missing=_missing(row, origin),
        source=row["source"],
        source_line=int(row["source_line"]),
        seq=int(row["seq"]),
        model=row["model"],
    )


def _with_results(run: str, turns: list[Turn]) -> list[Turn]:
    """Each tool call of the page with its result (one bulk query for the page)."""
    ids = sorted({t.tool_use_id for t in turns if t.kind == "tool_call" and t.tool_use_id})
    if not ids:
        return turns
    rows = warehouse.fetch_all(RESULTS_SQL, {"run": run, "ids": ids})
    results = {row["tool_use_id"]: _turn(row, "transcript") for row in rows}
    return [
        replace(t, result=results[t.tool_use_id])
        if t.kind == "tool_call" and t.tool_use_id in results
        else t
        for t in turns
    ]
