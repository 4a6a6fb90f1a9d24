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

An OpenTelemetry session's page is read in one time slice (the cursor's time to the
last of the page's turn times, found by the summary's scan of the session), as its
events share their files with every other session's. bench/explore_replay.py times
both kinds of session (figures: bench/explore.md, "Session replay").
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

_COLUMNS = (
    "ts", "agent", "kind", "tool", "tool_use_id", "is_error", "captured", "text",
    "text_chars", "source", "source_line", "seq", "model",
)  # fmt: skip
# A session's transcript turns, without the results paired to a call of the session:
# each listed call carries its result (the first logged under its tool_use_id) in the
# `r_*` columns, so a page is one statement.
_TRANSCRIPT_PAGE = """
WITH every AS MATERIALIZED (
    SELECT ts, agent, kind, tool, tool_use_id, is_error, captured, text, text_chars,
           source, coalesce(source_line, 0) AS source_line, seq, CAST(NULL AS VARCHAR) AS model
    FROM session_turns
    WHERE run = $run
),
t AS (SELECT * FROM every WHERE $agent::VARCHAR IS NULL OR agent = $agent),
listed AS (
    SELECT * FROM t
    WHERE NOT (kind = 'tool_result' AND tool_use_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM t AS c WHERE c.kind = 'tool_call' AND c.tool_use_id = t.tool_use_id))
      AND {condition}
    ORDER BY {order}
    LIMIT $limit
),
results AS (
    SELECT * FROM t
    WHERE kind = 'tool_result'
      AND tool_use_id IN (SELECT tool_use_id FROM listed WHERE kind = 'tool_call')
    QUALIFY row_number() OVER (PARTITION BY tool_use_id ORDER BY ts, source, source_line, seq) = 1
),
page AS (
    SELECT l.*, {result_columns}
    FROM listed AS l
    LEFT JOIN results AS r ON l.kind = 'tool_call' AND r.tool_use_id = l.tool_use_id
),
summary AS (
    SELECT count(*) AS s_turns, coalesce(bool_or(captured), false) AS s_captured,
           list(DISTINCT agent ORDER BY agent) AS s_agents
    FROM every
),
label AS (
    SELECT arg_min(project, first_ts) FILTER (WHERE project IS NOT NULL) AS project,
           arg_min(cwd, first_ts) FILTER (WHERE cwd IS NOT NULL) AS cwd,
           arg_min(branch, first_ts) FILTER (WHERE branch IS NOT NULL) AS branch,
           arg_min(first_prompt, first_ts) FILTER (WHERE first_prompt IS NOT NULL)
               AS first_prompt,
           min(first_ts) AS first_ts, count(*) AS label_rows
    FROM session_labels WHERE run = $run
)
SELECT page.*, summary.*, label.project AS s_project, label.cwd AS s_cwd,
       label.branch AS s_branch, label.first_prompt AS s_first_prompt,
       label.first_ts AS s_first_ts, label.label_rows AS s_label_rows
FROM summary CROSS JOIN label LEFT JOIN page ON true
ORDER BY {order_l}
"""
# The same shape from a session's OpenTelemetry events (no transcript turns; no pairs),
# read between two times given as values, so DuckDB skips the files and row groups of
# other times: a session's events share their files with every other session's.
_OTLP_PAGE = """
WITH e AS (
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
      AND ($agent::VARCHAR IS NULL OR agent = $agent) AND ts >= $low AND ts <= $high
),
t AS (
    SELECT ts, agent, kind, tool, tool_use_id, is_error, text IS NOT NULL AS captured, text,
           CASE WHEN event = 'prompt' THEN coalesce(
               TRY_CAST(json_extract_string(attrs, '$.prompt_length') AS BIGINT), length(text))
           END AS text_chars,
           source, source_line, seq, model
    FROM e
)
SELECT * FROM t WHERE {condition} ORDER BY {order} LIMIT $limit
"""


def _order(direction: str, alias: str = "") -> str:
    return ", ".join(f"{alias}{c} {direction}" for c in ("ts", "source", "source_line", "seq"))


_RESULT_COLUMNS = ", ".join(f"r.{c} AS r_{c}" for c in _COLUMNS)
TRANSCRIPT_AFTER_SQL = _TRANSCRIPT_PAGE.format(
    condition=_AFTER, order=_order("ASC"), order_l=_order("ASC", "page."),
    result_columns=_RESULT_COLUMNS,
)  # fmt: skip
TRANSCRIPT_BEFORE_SQL = _TRANSCRIPT_PAGE.format(
    condition=_BEFORE, order=_order("DESC"), order_l=_order("DESC", "page."),
    result_columns=_RESULT_COLUMNS,
)  # fmt: skip
OTLP_AFTER_SQL = _OTLP_PAGE.format(condition=_AFTER, order=_order("ASC"))
OTLP_BEFORE_SQL = _OTLP_PAGE.format(condition=_BEFORE, order=_order("DESC"))

# Asked only of a session without transcript turns, in one scan of its events: its
# OpenTelemetry figures, where its events came from, and the times its page lies between
# (`low` to `high`: the first and last of the `limit` turn times beyond the cursor, so a
# page is read in one slice whatever the session's length; a time's turns all fall in).
_OTLP_SUMMARY = """
WITH s AS MATERIALIZED (
    SELECT ts, agent, event, attrs, source_kind,
           source_kind = 'otlp' AND event IN ('prompt', 'tool_call', 'llm_call') AS turn
    FROM events WHERE run = $run
),
ahead AS (
    SELECT ts FROM s
    WHERE turn AND ($agent::VARCHAR IS NULL OR agent = $agent) AND {beyond}
    ORDER BY ts {direction}
    LIMIT $limit
)
SELECT count(*) FILTER (WHERE turn) AS turns,
       coalesce(bool_or(turn AND event = 'prompt'
                        AND json_extract_string(attrs, '$.prompt') IS NOT NULL), false)
           AS captured,
       list(DISTINCT agent ORDER BY agent) FILTER (WHERE turn) AS agents,
       min(source_kind) AS source_kind,
       (SELECT min(ts) FROM ahead) AS low, (SELECT max(ts) FROM ahead) AS high
FROM s
"""
OTLP_AFTER_SUMMARY_SQL = _OTLP_SUMMARY.format(
    beyond="($after_ts::TIMESTAMPTZ IS NULL OR ts > $after_ts)", direction="ASC"
)
OTLP_BEFORE_SUMMARY_SQL = _OTLP_SUMMARY.format(beyond="ts < $before_ts", direction="DESC")


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
    size = read_limit(limit)
    if agent is not None and (problem := name_problem(agent, "agent")):
        raise ParameterError(problem)
    if cursor and before:
        raise ParameterError("give cursor or before, not both")
    after_key = decode_cursor(cursor) if cursor else None
    before_key = decode_cursor(before) if before else None
    if not seen.sees_run(run):
        ensure_run(run, seen)  # the NotFoundError of a run that does not exist
    backwards = before_key is not None
    params: dict[str, Any] = {"run": run, "agent": agent or None, "limit": size + 1}
    params.update(
        _key_params("before", before_key) if backwards else _key_params("after", after_key)
    )
    sql = TRANSCRIPT_BEFORE_SQL if backwards else TRANSCRIPT_AFTER_SQL
    rows = warehouse.fetch_all(sql, params)
    first = rows[0] if rows else {}
    origin, source_kind = "transcript", None
    label = _label({k[2:]: v for k, v in first.items() if k.startswith("s_")})
    captured, agents = bool(first.get("s_captured")), list(first.get("s_agents") or [])
    if not first.get("s_turns"):
        summary = _otlp_summary(params, backwards)
        source_kind = summary.get("source_kind")
        if not summary.get("turns"):
            ensure_run(run, seen)  # turns are stored with events: only a run without may not exist
            return ReplayPage(run, None, source_kind, False, [], label, [], None, None)
        origin = "otlp"
        captured, agents = bool(summary.get("captured")), list(summary.get("agents") or [])
        rows = _otlp_rows(params, summary, backwards)
    rows = [row for row in rows if row["ts"] is not None]
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        rows.reverse()
    turns = [_with_result(row, origin) for row in rows]
    if backwards:
        previous = _cursor_of(turns[0]) if more and turns else None
        following = _cursor_of(turns[-1]) if turns else None
    else:
        following = _cursor_of(turns[-1]) if more and turns else None
        previous = _cursor_of(turns[0]) if after_key is not None and turns else None
    return ReplayPage(run, origin, source_kind, captured, agents, label, turns, following, previous)


def _otlp_summary(params: dict[str, Any], backwards: bool) -> dict[str, Any]:
    side = "before_ts" if backwards else "after_ts"
    bound = {k: params[k] for k in ("run", "agent", "limit", side)}
    sql = OTLP_BEFORE_SUMMARY_SQL if backwards else OTLP_AFTER_SUMMARY_SQL
    return warehouse.fetch_one(sql, bound) or {}


def _otlp_rows(
    params: dict[str, Any], summary: dict[str, Any], backwards: bool
) -> list[dict[str, Any]]:
    """The page's rows, read between the first and last of the summary's times and the
    cursor's own (the cursor's time may hold turns after it when no later time does)."""
    cursor_ts = params["before_ts" if backwards else "after_ts"]
    times = [t for t in (summary.get("low"), summary.get("high"), cursor_ts) if t is not None]
    if not times:
        return []
    sql = OTLP_BEFORE_SQL if backwards else OTLP_AFTER_SQL
    return warehouse.fetch_all(sql, {**params, "low": min(times), "high": max(times)})


def _label(row: dict[str, Any]) -> SessionLabel | None:
    if not row.get("label_rows"):
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


def _with_result(row: dict[str, Any], origin: str) -> Turn:
    """A listed row's turn, with its call's result from the row's `r_*` columns."""
    turn = _turn(row, origin)
    if row.get("r_ts") is None:
        return turn
    result = {name[2:]: value for name, value in row.items() if name.startswith("r_")}
    return replace(turn, result=_turn(result, origin))
