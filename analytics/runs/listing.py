"""The runs list that scales: one page of the runs a reader sees, searched, filtered,
sorted and keyset-paged, with each Claude Code or Codex session's friendly label.

Reads the per-run totals (`run_rollups`, a few rows per run: the figures of RUNS_SQL in
analytics/runs/queries.py) and the session labels (`session_labels`, written at ingest by
ingest/pipelines/session_loading.py, a run's label its earliest row's, as the replay
reads it), never every event; only the `model` filter looks at events, by one column.
The search `q` is a case-insensitive substring of the run's name or label, matched with
`contains()` on a bound parameter (no LIKE pattern, so `%` and `_` are plain text). A page
is found by keyset (the sort column's value, then the run's name: no OFFSET), and the
status of only its own runs is worked out (analytics/runs/status.py; a status filter
first narrows the list with status.runs_in_state).

Must not decide what a reader or a team sees: the caller passes the reader's Seen and,
for a team filter, the team's (analytics/access/visibility.py resolves both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import warehouse
from analytics.runs.list_request import SORTS, RunListRequest, encode_cursor
from analytics.runs.status import SYSTEM_VIEW, RunStatus, run_statuses, runs_in_state
from lib.access import Seen, visible_run_sql

# A label shows this many of the first prompt's words.
LABEL_WORDS = 8

_IN_LIST = "($%s::VARCHAR[] IS NULL OR run IN (SELECT unnest($%s::VARCHAR[])))"

_LISTED = f"""
WITH totals AS (
    SELECT run,
           coalesce(min(first_ts), TIMESTAMPTZ '1970-01-01 00:00:00+00') AS first_ts,
           coalesce(max(last_ts), TIMESTAMPTZ '1970-01-01 00:00:00+00') AS last_ts,
           sum(agents)::BIGINT AS agents,
           sum(events)::BIGINT AS events,
           sum(commits)::BIGINT AS commits,
           sum(errors)::BIGINT AS errors,
           sum(input_tokens)::BIGINT AS input_tokens,
           sum(output_tokens)::BIGINT AS output_tokens,
           coalesce(min(source_kind), '') AS source_kind
    FROM run_rollups
    WHERE {visible_run_sql("run")}
      AND {_IN_LIST % ("team_runs", "team_runs")}
      AND {_IN_LIST % ("state_runs", "state_runs")}
      AND ($not_state_runs::VARCHAR[] IS NULL
           OR run NOT IN (SELECT unnest($not_state_runs::VARCHAR[])))
      AND ($model::VARCHAR IS NULL
           OR run IN (SELECT DISTINCT run FROM events WHERE model = $model))
    GROUP BY run
    HAVING ($source::VARCHAR IS NULL OR coalesce(min(source_kind), '') = $source)
       AND ($start::TIMESTAMPTZ IS NULL OR max(last_ts) >= $start)
       AND ($end::TIMESTAMPTZ IS NULL OR min(first_ts) < $end)
),
labels AS (
    SELECT run,
           arg_min(project, first_ts) FILTER (WHERE project IS NOT NULL) AS project,
           arg_min(cwd, first_ts) FILTER (WHERE cwd IS NOT NULL) AS cwd,
           arg_min(branch, first_ts) FILTER (WHERE branch IS NOT NULL) AS branch,
           arg_min(first_prompt, first_ts) FILTER (WHERE first_prompt IS NOT NULL)
               AS first_prompt
    FROM session_labels
    WHERE run IN (SELECT run FROM totals)
    GROUP BY run
),
listed AS (
    SELECT t.*, t.input_tokens + t.output_tokens AS tokens,
           l.project, l.cwd, l.branch, l.first_prompt
    FROM totals AS t LEFT JOIN labels AS l USING (run)
    WHERE $q::VARCHAR IS NULL
       OR contains(lower(t.run), $q)
       OR contains(lower(coalesce(l.project, '')), $q)
       OR contains(lower(coalesce(l.branch, '')), $q)
       OR contains(lower(coalesce(l.cwd, '')), $q)
       OR contains(lower(coalesce(l.first_prompt, '')), $q)
)
"""


def _page_sql(expression: str, sql_type: str, descending: bool) -> str:
    """The page query of one sort: a constant per (column, direction), built from SORTS'
    fixed expressions (no request value is ever formatted in)."""
    after = "<" if descending else ">"
    direction = "DESC" if descending else "ASC"
    return (
        _LISTED
        + f"""
SELECT * FROM listed
WHERE $after_run::VARCHAR IS NULL
   OR {expression} {after} $after_key::{sql_type}
   OR ({expression} = $after_key::{sql_type} AND run > $after_run)
ORDER BY {expression} {direction}, run ASC
LIMIT $limit
"""
    )


PAGE_SQL: dict[tuple[str, bool], str] = {
    (name, descending): _page_sql(column.expression, column.sql_type, descending)
    for name, column in SORTS.items()
    for descending in (False, True)
}

SOURCE_KINDS_SQL = f"""
SELECT DISTINCT source_kind FROM run_rollups
WHERE source_kind IS NOT NULL AND {visible_run_sql("run")}
ORDER BY source_kind
"""


@dataclass(frozen=True)
class SessionName:
    """What names a Claude Code or Codex session for people (its session_labels)."""

    project: str | None
    cwd: str | None
    branch: str | None
    first_prompt: str | None

    @property
    def text(self) -> str | None:
        """`project · branch — the first words of the first prompt`, what is known of it."""
        head = " · ".join(p for p in (self.project, self.branch) if p)
        words = (self.first_prompt or "").split()
        prompt = " ".join(words[:LABEL_WORDS]) + (" …" if len(words) > LABEL_WORDS else "")
        text = " — ".join(p for p in (head, prompt) if p)
        return text or None


@dataclass(frozen=True)
class ListedRun:
    """A run of the list: its stored totals (the fields of queries.RunTotals), its label
    when it is a session that has one, and its status (None: not known yet, shown idle)."""

    run: str
    first_ts: datetime
    last_ts: datetime
    agents: int
    events: int
    commits: int
    errors: int
    input_tokens: int
    output_tokens: int
    source_kind: str
    tokens: int
    name: SessionName | None
    status: RunStatus | None = field(default=None, compare=False)

    @property
    def label(self) -> str | None:
        return self.name.text if self.name else None


@dataclass(frozen=True)
class RunsPage:
    runs: list[ListedRun]
    next: str | None  # the cursor of the page after this one, None on the last


def _listed(row: dict[str, Any]) -> ListedRun:
    label_parts = (row["project"], row["cwd"], row["branch"], row["first_prompt"])
    return ListedRun(
        run=row["run"],
        first_ts=row["first_ts"].astimezone(UTC),
        last_ts=row["last_ts"].astimezone(UTC),
        agents=int(row["agents"]),
        events=int(row["events"]),
        commits=int(row["commits"]),
        errors=int(row["errors"]),
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        source_kind=row["source_kind"],
        tokens=int(row["tokens"]),
        name=SessionName(*label_parts) if any(p is not None for p in label_parts) else None,
    )


def list_runs_page(
    request: RunListRequest,
    seen: Seen = SYSTEM_VIEW,
    *,
    team: Seen | None = None,
    now: datetime | None = None,
) -> RunsPage:
    """The page `request` asks for, of the runs `seen` sees (and `team` covers, when
    given), with each listed run's status at `now` (the clock by default)."""
    cut = runs_in_state(request.status, now=now, seen=seen) if request.status else None
    params = {
        "seen_runs": seen.run_list(),
        "team_runs": None if team is None else (team.run_list() or []),
        "state_runs": cut.only if cut else None,
        "not_state_runs": cut.but if cut else None,
        "model": request.model,
        "source": request.source,
        "q": request.q,
        "after_key": request.after[0] if request.after else None,
        "after_run": request.after[1] if request.after else None,
        "limit": request.limit + 1,
        **request.window.params(),
    }
    sql = PAGE_SQL[(request.sort, request.descending)]
    rows = [_listed(row) for row in warehouse.fetch_all(sql, params)]
    more = len(rows) > request.limit
    rows = rows[: request.limit]
    statuses = run_statuses(runs=[r.run for r in rows], now=now, seen=seen) if rows else {}
    listed = [ListedRun(**{**vars(r), "status": statuses.get(r.run)}) for r in rows]
    following = None
    if more and listed:
        last = listed[-1]
        # Each sort's column is a field of the listed run (SORTS names them alike).
        key = getattr(last, request.column.expression)
        following = encode_cursor(request.sort_token, (key, last.run))
    return RunsPage(listed, following)


def source_kinds(seen: Seen = SYSTEM_VIEW) -> list[str]:
    """The sources the reader's runs came from (the source filter's choices)."""
    return [
        r["source_kind"]
        for r in warehouse.fetch_all(SOURCE_KINDS_SQL, {"seen_runs": seen.run_list()})
    ]
