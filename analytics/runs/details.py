"""What a run's sources tell beyond the contract's figures: where its events came from,
the tools its agents used and how often they failed, tokens by model with cache reads
and writes apart, and commits per agent with task claims apart from work.

One function per question; SQL as module constants with bound parameters. Each takes an
optional [start, end) range (lib.window.TimeRange) and answers with the dataclasses
below (datetimes aware UTC); commits are counted once per sha, at the time first logged,
as everywhere else. Each also takes its reader's `seen` (lib.access.Seen): a run it
does not see is answered as one that does not exist (queries.ensure_run).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import warehouse
from analytics.runs.paging import COMMIT_SORTS, AgentSort, Paging
from analytics.runs.queries import commit_rate, ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from lib.errors import ParameterError
from lib.window import TimeRange

_IN_RANGE = """
run = $run
AND ($start::TIMESTAMPTZ IS NULL OR ts >= $start)
AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)
"""

SOURCES_SQL = f"""
SELECT source_kind, count(DISTINCT source) AS sources, count(*) AS events,
       min(ts) AS first_ts, max(ts) AS last_ts
FROM events
WHERE {_IN_RANGE}
GROUP BY source_kind
ORDER BY events DESC, source_kind
"""

# `answered`: calls whose result was seen (ok known); the error rate is over those.
TOOLS_SQL = f"""
SELECT tool,
       count(*) AS calls,
       count(ok) AS answered,
       count(*) FILTER (WHERE ok = false) AS errors,
       avg(duration_ms) AS mean_duration_ms,
       count(DISTINCT agent) AS agents
FROM events
WHERE event = 'tool_call' AND {_IN_RANGE}
GROUP BY tool
ORDER BY calls DESC, tool
"""

MODELS_SQL = f"""
SELECT coalesce(model, '(unknown)') AS model,
       count(*) AS calls,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(cached_input_tokens), 0) AS cached_input_tokens,
       coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
       sum(cache_write_5m_tokens) AS cache_write_5m_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(cost_usd) AS cost_usd,
       coalesce(sum(input_tokens), 0) + coalesce(sum(cached_input_tokens), 0)
         + coalesce(sum(cache_write_tokens), 0) + coalesce(sum(output_tokens), 0)
         AS total_tokens
FROM events
WHERE event = 'llm_call' AND {_IN_RANGE}
GROUP BY ALL
ORDER BY total_tokens DESC, model
"""

# Commits per agent, sorted by one figure (largest first; by name as the tie-break) and
# cut to a page; each row carries the totals over every agent, for a page's "of N".
_COMMITS_BY_AGENT = f"""
WITH commits AS (
    SELECT * FROM events
    WHERE event = 'commit' AND ok IS DISTINCT FROM false AND {_IN_RANGE}
    QUALIFY commit_sha IS NULL OR row_number() OVER (
        PARTITION BY commit_sha ORDER BY ts, source, source_line) = 1
),
per_agent AS (
    SELECT agent,
           count(*) AS commits,
           count(*) FILTER (WHERE commit_claim) AS claims,
           count(*) FILTER (WHERE commit_claim IS NOT TRUE) AS work,
           coalesce(sum(commit_files), 0) AS files,
           coalesce(sum(commit_insertions), 0) AS insertions,
           coalesce(sum(commit_deletions), 0) AS deletions,
           min(ts) AS first_ts,
           max(ts) AS last_ts
    FROM commits
    GROUP BY agent
)
SELECT *,
       count(*) OVER () AS agents_total,
       sum(work) OVER () AS work_total,
       sum(claims) OVER () AS claims_total
FROM per_agent
ORDER BY {{order}}
LIMIT $limit OFFSET $offset
"""
COMMITS_BY_AGENT_SQL = {
    sort: _COMMITS_BY_AGENT.format(
        order="agent" if sort is AgentSort.AGENT else f"{sort} DESC, agent"
    )
    for sort in COMMIT_SORTS
}


# Task claims per bucket (epoch-aligned, as commit_rate's), commits counted once per sha.
CLAIMS_PER_BUCKET_SQL = f"""
WITH commits AS (
    SELECT * FROM events
    WHERE event = 'commit' AND ok IS DISTINCT FROM false AND {_IN_RANGE}
    QUALIFY commit_sha IS NULL OR row_number() OVER (
        PARTITION BY commit_sha ORDER BY ts, source, source_line) = 1
)
SELECT (floor(epoch(ts) / $bucket) * $bucket)::BIGINT AS bucket_epoch, count(*) AS claims
FROM commits
WHERE commit_claim
GROUP BY ALL
"""


def _params(run: str, window: TimeRange | None) -> dict[str, Any]:
    return {"run": run, **(window or TimeRange()).params()}


def _utc(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its first_ts and last_ts in UTC."""
    return {
        **row,
        "first_ts": row["first_ts"].astimezone(UTC),
        "last_ts": row["last_ts"].astimezone(UTC),
    }


def _rate(errors: int, answered: int) -> float | None:
    return errors / answered if answered else None


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None


@dataclass(frozen=True)
class Source:
    source_kind: str
    sources: int  # distinct sources (log files, repositories)
    events: int
    first_ts: datetime
    last_ts: datetime


def sources(run: str, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW) -> list[Source]:
    """Which sources the run's events came from: agent-events, claude-code, codex, git."""
    ensure_run(run, seen)
    return [Source(**_utc(row)) for row in warehouse.fetch_all(SOURCES_SQL, _params(run, window))]


@dataclass(frozen=True)
class ToolUse:
    tool: str | None
    calls: int
    answered: int  # calls whose result was seen
    errors: int
    error_rate: float | None  # errors / answered
    mean_duration_ms: float | None
    agents: int


@dataclass(frozen=True)
class Tools:
    run: str
    calls: int
    answered: int
    errors: int
    error_rate: float | None  # errors / answered, over every tool
    tools: list[ToolUse]


def tools(run: str, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW) -> Tools:
    """Tool calls by tool, with each tool's error rate (errors over answered calls) and
    the run's overall tool error rate."""
    ensure_run(run, seen)
    rows = [
        ToolUse(
            tool=row["tool"],
            calls=int(row["calls"]),
            answered=int(row["answered"]),
            errors=int(row["errors"]),
            error_rate=_rate(int(row["errors"]), int(row["answered"])),
            mean_duration_ms=_float(row["mean_duration_ms"]),
            agents=int(row["agents"]),
        )
        for row in warehouse.fetch_all(TOOLS_SQL, _params(run, window))
    ]
    answered = sum(r.answered for r in rows)
    errors = sum(r.errors for r in rows)
    calls = sum(r.calls for r in rows)
    return Tools(run, calls, answered, errors, _rate(errors, answered), rows)


@dataclass(frozen=True)
class ModelUse:
    """Calls and tokens of one model: the 5-minute and 1-hour cache writes and the
    reasoning part of the output only where the source tells them (else None)."""

    model: str  # `(unknown)` when the source names none
    calls: int
    input_tokens: int  # uncached
    cached_input_tokens: int  # cache reads
    cache_write_tokens: int
    cache_write_5m_tokens: int | None
    cache_write_1h_tokens: int | None
    output_tokens: int
    reasoning_output_tokens: int | None
    cost_usd: float | None
    total_tokens: int  # input, cache reads and writes, output


def models(
    run: str, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW
) -> list[ModelUse]:
    """Model calls and tokens by model: uncached input, cache reads, cache writes (with
    the 5-minute and 1-hour parts where the source tells them), output and its
    reasoning part (where the source tells it)."""
    ensure_run(run, seen)
    return [
        ModelUse(**{**row, "cost_usd": _float(row["cost_usd"])})
        for row in warehouse.fetch_all(MODELS_SQL, _params(run, window))
    ]


@dataclass(frozen=True)
class AgentCommits:
    agent: str  # git: the author
    commits: int
    claims: int  # task claims: commits that only add or remove files under the claims folder
    work: int  # every other commit
    files: int
    insertions: int
    deletions: int
    first_ts: datetime
    last_ts: datetime


_TOTALS = ("agents_total", "work_total", "claims_total")


def _commits_by_agent(
    run: str, window: TimeRange | None, sort: AgentSort, paging: Paging | None, seen: Seen
) -> list[dict[str, Any]]:
    if sort not in COMMITS_BY_AGENT_SQL:
        raise ParameterError(f"commits per agent cannot be sorted by {sort}")
    ensure_run(run, seen)
    params = {**_params(run, window), "limit": None, "offset": 0}
    if paging is not None:
        params.update(paging.params())
    return warehouse.fetch_all(COMMITS_BY_AGENT_SQL[sort], params)


def _agent_commits(row: dict[str, Any]) -> AgentCommits:
    return AgentCommits(**_utc({k: v for k, v in row.items() if k not in _TOTALS}))


def commits_by_agent(
    run: str,
    window: TimeRange | None = None,
    sort: AgentSort = AgentSort.COMMITS,
    paging: Paging | None = None,
    *,
    seen: Seen = SYSTEM_VIEW,
) -> list[AgentCommits]:
    """Commits per agent (git: per author), task claims apart from work; every agent, or
    a page of them."""
    return [_agent_commits(row) for row in _commits_by_agent(run, window, sort, paging, seen)]


@dataclass(frozen=True)
class AgentCommitsPage:
    agents: int  # every agent with a commit in the range, not only this page's
    work: int  # over every agent
    claims: int
    sort: AgentSort
    paging: Paging
    rows: list[AgentCommits]

    @property
    def last(self) -> int:
        """The 1-based number of the page's last row."""
        return self.paging.offset + len(self.rows)


def commits_by_agent_page(
    run: str,
    window: TimeRange | None,
    sort: AgentSort,
    paging: Paging,
    *,
    seen: Seen = SYSTEM_VIEW,
) -> AgentCommitsPage:
    """A page of commits per agent, with the totals over every agent."""
    rows = _commits_by_agent(run, window, sort, paging, seen)
    if not rows and paging.offset:
        # Past the last agent: the totals still come from the first row.
        rows_for_totals = _commits_by_agent(run, window, sort, Paging(1, 0), seen)
    else:
        rows_for_totals = rows
    first = rows_for_totals[0] if rows_for_totals else dict.fromkeys(_TOTALS, 0)
    return AgentCommitsPage(
        agents=int(first["agents_total"]),
        work=int(first["work_total"]),
        claims=int(first["claims_total"]),
        sort=sort,
        paging=paging,
        rows=[_agent_commits(row) for row in rows],
    )


@dataclass(frozen=True)
class WorkClaimsPoint:
    t: datetime  # the bucket's start
    work: int
    claims: int


@dataclass(frozen=True)
class WorkAndClaims:
    run: str
    bucket_seconds: int
    points: list[WorkClaimsPoint]
    work: int
    claims: int


def work_and_claims(
    run: str, bucket_seconds: int, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW
) -> WorkAndClaims:
    """Commits per bucket split into work and task claims (git runs mark claims: commits
    that only add or remove files under the claims folder). The buckets and totals are
    commit_rate's, so work + claims is always the commit rate."""
    window = window or TimeRange()
    rate = commit_rate(run, bucket_seconds, window, seen=seen)
    claims = {
        int(r["bucket_epoch"]): int(r["claims"])
        for r in warehouse.fetch_all(
            CLAIMS_PER_BUCKET_SQL, {**_params(run, window), "bucket": bucket_seconds}
        )
    }
    points = []
    for point in rate.points:
        claimed = claims.get(int(point.t.timestamp()), 0)
        points.append(WorkClaimsPoint(point.t, point.commits - claimed, claimed))
    total_claims = sum(p.claims for p in points)
    return WorkAndClaims(run, bucket_seconds, points, rate.total - total_claims, total_claims)
