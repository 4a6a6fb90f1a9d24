"""One agent of a run, as its page and `GET /api/runs/{run}/agents/{agent}` show it: its
place in the tree (role, parent, children), its figures (events, commits, errors and
attempts as the run counts them, tokens, USD), its timeline and its longest gaps.

One statement reads the agent's rows (agent_rows: the columns it needs, kept sorted by
run and agent), the run's parent links (agent_links: the few rows that name a parent or a
role) and the agent's calls grouped for pricing. The place in the tree is
analytics.runs.tree's (build_agent_tree over those links, placed with queries.PARENT_SQL /
ROLE_SQL, the aggregates of AGENTS_SQL), the USD
analytics.costs.calls' (an unpriced call is counted, never $0), the counting
warehouse.schema.events' (a commit sha counts once per run, at its first logging:
run_commits holds it). Too many events for one point each are counted per bucket of a
round width instead, per lane, so the chart stays light. Visibility is ensure_run's: a
run the reader does not see, or an agent it does not hold, is a NotFoundError.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import warehouse
from analytics.costs.calls import Cost, grouped_usage_sql, priced_groups, usage_params
from analytics.costs.pricing import PriceBook
from analytics.runs.queries import PARENT_SQL, ROLE_SQL, AgentFigures, ensure_run
from analytics.runs.status import SYSTEM_VIEW
from analytics.runs.tree import build_agent_tree, find_node
from lib.access import Seen
from lib.errors import NotFoundError
from warehouse.schema.events import (
    ATTEMPT_SQL,
    ERROR_SQL,
    LANDED_COMMIT_SQL,
    SHA_COMMIT_SQL,
    EventKind,
)

# Up to this many events, each is its own point; past it, events are counted per bucket
# (per lane) of the smallest round width that cuts the agent's span into TARGET_BUCKETS.
MAX_POINTS = 2000
TARGET_BUCKETS = 240
ROUND_WIDTHS_SECONDS = (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
    86400, 172800, 604800,
)  # fmt: skip
LONGEST_GAPS = 10
# The timeline's lanes: an error (an `error` event or a failed attempt, ERROR_SQL) in its
# own lane, every other event in its kind's; a kind the contract does not name is `other`.
ERROR_LANE = "error"
OTHER_LANE = "other"
KIND_LANES = tuple(kind.value for kind in EventKind if kind != EventKind.ERROR)

# The agent's rows, from agent_rows: the copy of the columns this page reads, sorted by
# (run, agent, ts), so the read decodes a row group or two however big the run
# (warehouse/schema/agents.py). A commit sha counts where run_commits holds its first
# logging: this agent's (run_commits names it, sorted by run and agent too), at its time.
_MINE = f"""
mine AS MATERIALIZED (
    SELECT ts, event, ok, commit_sha, tool, model, input_tokens, cached_input_tokens,
           cache_write_tokens, cache_write_1h_tokens, output_tokens, cost_usd, speed
    FROM agent_rows
    WHERE run = $run AND agent = $agent
),
firsts AS (
    SELECT commit_sha, ts FROM run_commits WHERE run = $run AND agent = $agent
),
kept AS (
    SELECT * FROM mine WHERE NOT {SHA_COMMIT_SQL}
    UNION ALL (
        SELECT m.* FROM mine AS m JOIN firsts AS f USING (commit_sha, ts)
        QUALIFY row_number() OVER (PARTITION BY commit_sha ORDER BY ts) = 1
    )
),
e AS (
    SELECT ts, tool, model, commit_sha,
           input_tokens, cached_input_tokens, cache_write_tokens, output_tokens,
           {LANDED_COMMIT_SQL} AS is_commit,
           {ATTEMPT_SQL} AS is_attempt,
           {ERROR_SQL} AS is_error,
           CASE WHEN {ERROR_SQL} THEN '{ERROR_LANE}'
                WHEN list_contains($lanes, event) THEN event
                ELSE '{OTHER_LANE}' END AS lane
    FROM kept
)"""

# The run's parent links, from agent_links: the rows of the run that name a parent or a
# role, and only those.
_LINKS = f"""
links AS (
    SELECT agent, {PARENT_SQL} AS parent, {ROLE_SQL} AS role FROM agent_links
    WHERE run = $run
    GROUP BY agent
)"""

AGENT_SQL = f"""
WITH {_MINE},
{_LINKS},
usage AS ({grouped_usage_sql("$agent", "true", relation="mine")}),
figures AS (
    SELECT count(*) AS events,
           count(*) FILTER (WHERE is_commit) AS commits,
           count(*) FILTER (WHERE is_error) AS errors,
           count(*) FILTER (WHERE is_attempt) AS attempts,
           coalesce(sum(input_tokens), 0) AS input_tokens,
           coalesce(sum(cached_input_tokens), 0) AS cached_input_tokens,
           coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
           coalesce(sum(output_tokens), 0) AS output_tokens,
           min(ts) AS first_ts,
           max(ts) AS last_ts,
           coalesce(epoch_us(max(ts)) - epoch_us(min(ts)), 0) AS span_us
    FROM e
),
widths AS (SELECT unnest($widths::BIGINT[]) AS w),
width AS (
    SELECT CASE WHEN f.events <= $max_points THEN 0
                ELSE coalesce(
                    (SELECT min(w) FROM widths WHERE w * $buckets::BIGINT * 1000000 >= f.span_us),
                    (SELECT max(w) FROM widths))
           END AS w
    FROM figures AS f
),
points AS (
    SELECT CASE WHEN width.w = 0 THEN ts
                ELSE to_timestamp(epoch_us(ts) // (width.w * 1000000) * width.w) END AS t,
           lane,
           count(*) AS n,
           min(coalesce(tool, model, commit_sha)) AS label
    FROM e CROSS JOIN width
    GROUP BY ALL
),
steps AS (SELECT lag(ts) OVER (ORDER BY ts) AS gap_start, ts AS gap_end FROM e),
gaps AS (
    SELECT gap_start, gap_end, epoch_us(gap_end) - epoch_us(gap_start) AS gap_us
    FROM steps
    WHERE gap_start IS NOT NULL AND gap_end > gap_start
    ORDER BY gap_us DESC, gap_start
    LIMIT $gaps
)
SELECT f.*, width.w AS bucket_seconds,
       (SELECT list({{'t': t, 'lane': lane, 'n': n, 'label': label}} ORDER BY t, lane)
        FROM points) AS points,
       (SELECT list({{'start': gap_start, 'end': gap_end, 'us': gap_us}}
                    ORDER BY gap_us DESC, gap_start) FROM gaps) AS gaps,
       (SELECT list({{'agent': agent, 'parent': parent, 'role': role}}) FROM links) AS links,
       (SELECT list(u) FROM usage AS u) AS usage
FROM figures AS f CROSS JOIN width
"""


@dataclass(frozen=True)
class AgentLink:
    """Another agent of the run, as the page links to it."""

    agent: str
    role: str | None


@dataclass(frozen=True)
class TimelinePoint:
    t: datetime  # the event's time, or its bucket's start when bucketed
    lane: str  # an EventKind's value (errors in `error`), or `other`
    events: int
    label: str | None  # the tool, model or sha (of the first, when several share a time)


@dataclass(frozen=True)
class Gap:
    start: datetime  # the event before the gap
    end: datetime  # the event after it
    seconds: float


@dataclass(frozen=True)
class AgentPage:
    run: str
    agent: str
    role: str | None
    parent: AgentLink | None  # None for a root
    children: list[AgentLink]  # in the tree's order
    events: int
    commits: int
    errors: int
    attempts: int
    error_rate: float | None  # errors / attempts; None without attempts
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    llm_calls: int
    usd: float | None  # None when no call could be priced
    unpriced_calls: int
    first_ts: datetime | None  # None for a parent that never logged
    last_ts: datetime | None
    bucket_seconds: int | None  # None: one point per event
    timeline: list[TimelinePoint]
    gaps: list[Gap]  # the longest first

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def _link_rows(links: list[dict[str, Any]], agent: str) -> list[AgentFigures]:
    """The tree's rows for the links: each linked agent, each parent they name and the
    agent itself (an agent naming neither parent nor role is a root: nothing else needed)."""
    places = {row["agent"]: (row["parent"], row["role"]) for row in links}
    for row in links:
        if row["parent"] is not None:
            places.setdefault(row["parent"], (None, None))
    places.setdefault(agent, (None, None))
    return [
        AgentFigures(name, parent, role, 0, 0, 0, 0, 0, 0, 0, 0, None, None, None)
        for name, (parent, role) in places.items()
    ]


def agent_page(
    run: str,
    agent: str,
    seen: Seen = SYSTEM_VIEW,
    *,
    book: PriceBook | None = None,
    max_points: int = MAX_POINTS,
    buckets: int = TARGET_BUCKETS,
) -> AgentPage:
    """The agent's page; NotFoundError for a run `seen` does not see or an agent that
    neither logged in the run nor is named there as a parent."""
    ensure_run(run, seen)
    params = {
        "run": run,
        "agent": agent,
        "lanes": list(KIND_LANES),
        "widths": list(ROUND_WIDTHS_SECONDS),
        "max_points": max_points,
        "buckets": buckets,
        "gaps": LONGEST_GAPS,
        **usage_params(),
    }
    row = warehouse.fetch_one(AGENT_SQL, params)
    assert row is not None  # an aggregate without GROUP BY answers one row
    links = row["links"] or []
    if not row["events"] and not any(link["parent"] == agent for link in links):
        raise NotFoundError(f"run {run!r} has no agent {agent!r}")
    found = find_node(build_agent_tree(_link_rows(links, agent)), agent)
    assert found is not None  # _link_rows always holds the agent
    node, parent = found
    cost = priced_groups(row["usage"] or [], book).get(agent, Cost())
    width = int(row["bucket_seconds"])
    return AgentPage(
        run=run,
        agent=agent,
        role=node.role,
        parent=AgentLink(parent.agent, parent.role) if parent else None,
        children=[AgentLink(child.agent, child.role) for child in node.children],
        events=int(row["events"]),
        commits=int(row["commits"]),
        errors=int(row["errors"]),
        attempts=int(row["attempts"]),
        error_rate=row["errors"] / row["attempts"] if row["attempts"] else None,
        input_tokens=int(row["input_tokens"]),
        cached_input_tokens=int(row["cached_input_tokens"]),
        cache_write_tokens=int(row["cache_write_tokens"]),
        output_tokens=int(row["output_tokens"]),
        llm_calls=cost.calls,
        usd=cost.usd,
        unpriced_calls=cost.unpriced_calls,
        first_ts=_utc(row["first_ts"]),
        last_ts=_utc(row["last_ts"]),
        bucket_seconds=width or None,
        timeline=[
            TimelinePoint(p["t"].astimezone(UTC), p["lane"], int(p["n"]), p["label"])
            for p in row["points"] or []
        ],
        gaps=[
            Gap(g["start"].astimezone(UTC), g["end"].astimezone(UTC), g["us"] / 1_000_000)
            for g in row["gaps"] or []
        ],
    )
