"""What a run's sources tell beyond the contract's figures: where its events came from,
the tools its agents used and how often they failed, tokens by model with cache reads
and writes apart, and commits per agent with task claims apart from work.

One function per question; SQL as module constants with bound parameters. Each takes an
optional [start, end) range (analytics.queries.runs.TimeRange); commits are counted
once per sha, at the time first logged, as everywhere else.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

import warehouse
from analytics.runs.queries import commit_rate, ensure_run
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

COMMITS_BY_AGENT_SQL = f"""
WITH commits AS (
    SELECT * FROM events
    WHERE event = 'commit' AND ok IS DISTINCT FROM false AND {_IN_RANGE}
    QUALIFY commit_sha IS NULL OR row_number() OVER (
        PARTITION BY commit_sha ORDER BY ts, source, source_line) = 1
)
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
ORDER BY commits DESC, agent
"""


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


def _utc(rows: list[dict[str, Any]], *names: str) -> list[dict[str, Any]]:
    for row in rows:
        for name in names:
            if row[name] is not None:
                row[name] = row[name].astimezone(UTC)
    return rows


def sources(run: str, window: TimeRange | None = None) -> list[dict[str, Any]]:
    """Which sources the run's events came from: agent-events, claude-code, codex, git."""
    ensure_run(run)
    return _utc(warehouse.fetch_all(SOURCES_SQL, _params(run, window)), "first_ts", "last_ts")


def tools(run: str, window: TimeRange | None = None) -> dict[str, Any]:
    """Tool calls by tool, with each tool's error rate (errors over answered calls) and
    the run's overall tool error rate."""
    ensure_run(run)
    rows = warehouse.fetch_all(TOOLS_SQL, _params(run, window))
    for row in rows:
        answered = int(row["answered"])
        row["error_rate"] = int(row["errors"]) / answered if answered else None
        mean = row["mean_duration_ms"]
        row["mean_duration_ms"] = float(mean) if mean is not None else None
    answered = sum(int(r["answered"]) for r in rows)
    errors = sum(int(r["errors"]) for r in rows)
    return {
        "run": run,
        "calls": sum(int(r["calls"]) for r in rows),
        "answered": answered,
        "errors": errors,
        "error_rate": errors / answered if answered else None,
        "tools": rows,
    }


def models(run: str, window: TimeRange | None = None) -> list[dict[str, Any]]:
    """Model calls and tokens by model: uncached input, cache reads, cache writes (with
    the 5-minute and 1-hour parts where the source tells them), output and its
    reasoning part (where the source tells it)."""
    ensure_run(run)
    rows = warehouse.fetch_all(MODELS_SQL, _params(run, window))
    for row in rows:
        row["cost_usd"] = float(row["cost_usd"]) if row["cost_usd"] is not None else None
    return rows


def commits_by_agent(run: str, window: TimeRange | None = None) -> list[dict[str, Any]]:
    """Commits per agent (git: per author), task claims apart from work."""
    ensure_run(run)
    return _utc(
        warehouse.fetch_all(COMMITS_BY_AGENT_SQL, _params(run, window)), "first_ts", "last_ts"
    )


def work_and_claims(
    run: str, bucket_seconds: int, window: TimeRange | None = None
) -> dict[str, Any]:
    """Commits per bucket split into work and task claims (git runs mark claims: commits
    that only add or remove files under the claims folder). The buckets and totals are
    commit_rate's, so work + claims is always the commit rate."""
    window = window or TimeRange()
    rate = commit_rate(run, bucket_seconds, window)
    claims = {
        int(r["bucket_epoch"]): int(r["claims"])
        for r in warehouse.fetch_all(
            CLAIMS_PER_BUCKET_SQL, {**_params(run, window), "bucket": bucket_seconds}
        )
    }
    points = []
    for point in rate["points"]:
        claimed = claims.get(int(point["t"].timestamp()), 0)
        points.append({"t": point["t"], "work": point["commits"] - claimed, "claims": claimed})
    total_claims = sum(p["claims"] for p in points)
    return {
        "run": run,
        "bucket_seconds": bucket_seconds,
        "points": points,
        "work": rate["total"] - total_claims,
        "claims": total_claims,
    }
