"""Questions about agent runs, answered per docs/agent-events.md.

One function per question; SQL lives here as module constants with bound parameters.
Every function takes an optional [start, end) range (aware UTC datetimes) and answers
with the dataclasses below (datetimes aware UTC); the drift test of the error rate is
analytics.runs.drift's. Commits are deduplicated by sha per run (counted once, at the
time first logged) everywhere: as commits and as attempts. Each question takes the
`seen` of its reader (lib.access.Seen; status.SYSTEM_VIEW for the system's own): a run
it does not see is answered as one that does not exist (ensure_run's NotFoundError).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import warehouse
from analytics.runs.drift import Drift, ErrorPoint, drift
from analytics.runs.status import SYSTEM_VIEW, CurrentStall, run_statuses
from lib.access import Seen, visible_run_sql
from lib.errors import NotFoundError, ParameterError
from lib.window import TimeRange
from warehouse.schema.events import (
    ATTEMPT_SQL,
    ERROR_SQL,
    LANDED_COMMIT_SQL,
    SHA_COMMIT_SQL,
    EventKind,
)

MAX_BUCKETS = 20_000

# Events of one run in [start, end), with repeated commit shas dropped (the first logged
# instance stays).
_RUN_EVENTS = f"""
WITH raw AS (
    SELECT * FROM events
    WHERE run = $run
      AND ($start::TIMESTAMPTZ IS NULL OR ts >= $start)
      AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)
),
deduped AS (
    SELECT * FROM raw WHERE NOT {SHA_COMMIT_SQL}
    UNION ALL
    SELECT * FROM raw WHERE {SHA_COMMIT_SQL}
    QUALIFY row_number() OVER (PARTITION BY commit_sha ORDER BY ts, source, source_line) = 1
),
run_events AS (
    SELECT *,
           {LANDED_COMMIT_SQL} AS is_commit,
           {ATTEMPT_SQL} AS is_attempt,
           {ERROR_SQL} AS is_error
    FROM deduped
)
"""

# A kind the contract does not name (EventKind) is counted as `other`.
EVENT_KINDS_SQL = (
    _RUN_EVENTS
    + """
SELECT CASE WHEN list_contains($known, event) THEN event ELSE 'other' END AS kind,
       count(*) AS events
FROM run_events
GROUP BY ALL
ORDER BY events DESC, kind
"""
)

RUN_EXISTS_SQL = "SELECT 1 AS found FROM events WHERE run = ? LIMIT 1"

# Totals per run, kept at ingest by ingest/pipelines/run_rollups.py as rows to add up
# (commits deduplicated by sha: the first logged instance stays, and its `ok` decides
# whether it landed or failed; every other event counts as logged).
RUNS_SQL = f"""
WITH totals AS (
    SELECT run,
           min(first_ts) AS first_ts,
           max(last_ts) AS last_ts,
           sum(agents)::BIGINT AS agents,
           sum(events)::BIGINT AS events,
           sum(commits)::BIGINT AS commits,
           sum(errors)::BIGINT AS errors,
           sum(input_tokens)::BIGINT AS input_tokens,
           sum(output_tokens)::BIGINT AS output_tokens,
           min(source_kind) AS source_kind
    FROM run_rollups
    WHERE {visible_run_sql("run")}
    GROUP BY run
)
SELECT * FROM totals ORDER BY last_ts DESC, run
"""

RUN_RANGE_SQL = """
SELECT min(ts) AS first_ts, max(ts) AS last_ts FROM events
WHERE run = $run
  AND ($start::TIMESTAMPTZ IS NULL OR ts >= $start)
  AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)
"""

# Buckets are aligned to the Unix epoch: floor(epoch / width) * width.
COMMIT_RATE_SQL = (
    _RUN_EVENTS
    + """
SELECT (floor(epoch(ts) / $bucket) * $bucket)::BIGINT AS bucket_epoch, count(*) AS commits
FROM run_events
WHERE is_commit
GROUP BY ALL
"""
)

ERROR_RATE_SQL = (
    _RUN_EVENTS
    + """
SELECT (floor(epoch(ts) / $bucket) * $bucket)::BIGINT AS bucket_epoch,
       count(*) FILTER (WHERE is_attempt) AS attempts,
       count(*) FILTER (WHERE is_error) AS errors
FROM run_events
GROUP BY ALL
"""
)

# Consecutive commits at least min_gap apart and, for each gap, how many other events were
# logged strictly inside it: each such event is matched (ASOF) to the last gap starting
# before it and kept when it is also before that gap's end. Only events between the first
# gap's start and the last gap's end are matched, so a run without stalls sorts nothing.
# Gaps are compared in microseconds: subtracting TIMESTAMPTZs goes through the ICU
# calendar, about 5 us a row. One row per gap, each with the run's last commit, first
# and last event (for the current stall); one row with no gap when there is none.
STALLS_SQL = (
    _RUN_EVENTS
    + """,
commits AS (
    SELECT ts, lag(ts) OVER (ORDER BY ts) AS previous FROM run_events WHERE is_commit
),
gaps AS (
    SELECT previous AS gap_start, ts AS gap_end FROM commits
    WHERE previous IS NOT NULL
      AND epoch_us(ts) - epoch_us(previous) >= ($min_gap * 1000000)::BIGINT
),
busy AS (
    SELECT g.gap_start, g.gap_end, count(*) AS busy_events
    FROM (
        SELECT ts FROM run_events
        WHERE NOT is_commit
          AND ts > (SELECT min(gap_start) FROM gaps)
          AND ts < (SELECT max(gap_end) FROM gaps)
    ) AS e
    ASOF JOIN gaps AS g ON e.ts > g.gap_start
    WHERE e.ts < g.gap_end
    GROUP BY g.gap_start, g.gap_end
),
ends AS (
    SELECT max(ts) FILTER (WHERE is_commit) AS last_commit,
           min(ts) AS first_event,
           max(ts) AS last_event
    FROM run_events
)
SELECT g.gap_start, g.gap_end, coalesce(b.busy_events, 0) AS busy_events,
       s.last_commit, s.first_event, s.last_event
FROM ends AS s
LEFT JOIN (gaps AS g LEFT JOIN busy AS b USING (gap_start, gap_end)) ON true
ORDER BY g.gap_start
"""
)

# An agent's place in the tree, over its rows: a spawn event is authoritative for its
# parent and role; otherwise the first event that names them (the agent page reads them
# with these same aggregates, analytics/runs/agent.py).
PARENT_SQL = (
    "arg_min(parent, (event <> 'spawn', ts, source_line)) FILTER (WHERE parent IS NOT NULL)"
)
ROLE_SQL = "arg_min(role, (event <> 'spawn', ts, source_line)) FILTER (WHERE role IS NOT NULL)"

AGENTS_SQL = (
    _RUN_EVENTS
    + f""",
figures AS (
    -- One pass over the run's events (two, one for the links and one for the figures,
    -- took 155-184 ms against 120-127 for a 500,000-event run). A spawn event is
    -- authoritative for an agent's parent and role; otherwise the first event that
    -- names them.
    SELECT agent,
           {PARENT_SQL} AS parent,
           {ROLE_SQL} AS role,
           count(*) AS events,
           count(*) FILTER (WHERE is_commit) AS commits,
           count(*) FILTER (WHERE is_error) AS errors,
           count(*) FILTER (WHERE is_attempt) AS attempts,
           coalesce(sum(input_tokens), 0) AS input_tokens,
           coalesce(sum(cached_input_tokens), 0) AS cached_input_tokens,
           coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
           coalesce(sum(output_tokens), 0) AS output_tokens,
           sum(cost_usd) AS cost_usd,
           min(ts) AS first_ts,
           max(ts) AS last_ts
    FROM run_events
    GROUP BY agent
),
named_parents AS (
    SELECT DISTINCT parent AS agent FROM figures
    WHERE parent IS NOT NULL AND parent NOT IN (SELECT agent FROM figures)
)
SELECT agent, parent, role, events, commits, errors, attempts,
       input_tokens, cached_input_tokens, cache_write_tokens, output_tokens,
       cost_usd, first_ts, last_ts
FROM figures
UNION ALL
SELECT agent, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL FROM named_parents
ORDER BY agent
"""
)


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def _from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def ensure_run(run: str, seen: Seen = SYSTEM_VIEW) -> None:
    """NotFoundError for a run that does not exist or that `seen` does not see (the same
    answer, so a run's existence does not leak)."""
    if not seen.sees_run(run) or warehouse.fetch_one(RUN_EXISTS_SQL, [run]) is None:
        raise NotFoundError(f"unknown run {run!r}")


@dataclass(frozen=True)
class RunTotals:
    """A run with its stored totals (commits counted once per sha, failed ones as errors)."""

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


def list_runs(seen: Seen = SYSTEM_VIEW) -> list[RunTotals]:
    """The runs `seen` sees, filtered in the query, latest first."""
    return [
        RunTotals(**{**row, "first_ts": _utc(row["first_ts"]), "last_ts": _utc(row["last_ts"])})
        for row in warehouse.fetch_all(RUNS_SQL, {"seen_runs": seen.run_list()})
    ]


RUN_NAMES_SQL = "SELECT DISTINCT run FROM run_rollups ORDER BY run"
RUN_SOURCES_SQL = "SELECT DISTINCT run, source FROM events ORDER BY run, source"


def run_names() -> list[str]:
    """Every run's name (what team run patterns are matched against)."""
    return [row["run"] for row in warehouse.fetch_all(RUN_NAMES_SQL)]


def run_sources() -> list[tuple[str, str]]:
    """Every (run, source file) pair (what team source patterns are matched against)."""
    return [(row["run"], row["source"]) for row in warehouse.fetch_all(RUN_SOURCES_SQL)]


def bucket_range(run: str, window: TimeRange, bucket_seconds: int) -> tuple[int, int] | None:
    """First and last bucket (epoch seconds) covering the window, or the run's own range."""
    row = warehouse.fetch_one(RUN_RANGE_SQL, {"run": run, **window.params()})
    first = window.start or (row["first_ts"] if row else None)
    last = (
        (window.end - timedelta(microseconds=1))
        if window.end
        else (row["last_ts"] if row else None)
    )
    if first is None or last is None:
        return None
    first_bucket = math.floor(first.timestamp() / bucket_seconds) * bucket_seconds
    last_bucket = math.floor(last.timestamp() / bucket_seconds) * bucket_seconds
    if (last_bucket - first_bucket) // bucket_seconds + 1 > MAX_BUCKETS:
        raise ParameterError(
            f"that range holds more than {MAX_BUCKETS} buckets: choose a wider bucket"
        )
    return first_bucket, last_bucket


def _bucket_starts(span: tuple[int, int] | None, bucket_seconds: int) -> range:
    return range(span[0], span[1] + 1, bucket_seconds) if span else range(0)


@dataclass(frozen=True)
class CommitPoint:
    t: datetime  # the bucket's start
    commits: int


@dataclass(frozen=True)
class CommitRate:
    run: str
    bucket_seconds: int
    points: list[CommitPoint]  # every bucket of the range, empty ones as 0
    total: int
    peak: CommitPoint | None  # the busiest bucket; the earliest one when several tie


def commit_rate(
    run: str, bucket_seconds: int, window: TimeRange = TimeRange(), *, seen: Seen = SYSTEM_VIEW
) -> CommitRate:
    ensure_run(run, seen)
    span = bucket_range(run, window, bucket_seconds)
    counts = {
        int(r["bucket_epoch"]): int(r["commits"])
        for r in warehouse.fetch_all(
            COMMIT_RATE_SQL, {"run": run, "bucket": bucket_seconds, **window.params()}
        )
    }
    points = [
        CommitPoint(_from_epoch(epoch), counts.get(epoch, 0))
        for epoch in _bucket_starts(span, bucket_seconds)
    ]
    peak = max(points, key=lambda p: (p.commits, -p.t.timestamp()), default=None)
    return CommitRate(run, bucket_seconds, points, sum(p.commits for p in points), peak)


@dataclass(frozen=True)
class ErrorRate:
    run: str
    bucket_seconds: int
    points: list[ErrorPoint]  # every bucket of the range, empty ones as 0 of 0
    drift: Drift


def error_rate(
    run: str, bucket_seconds: int, window: TimeRange = TimeRange(), *, seen: Seen = SYSTEM_VIEW
) -> ErrorRate:
    ensure_run(run, seen)
    span = bucket_range(run, window, bucket_seconds)
    rows = {
        int(r["bucket_epoch"]): (int(r["attempts"]), int(r["errors"]))
        for r in warehouse.fetch_all(
            ERROR_RATE_SQL, {"run": run, "bucket": bucket_seconds, **window.params()}
        )
    }
    points = []
    for epoch in _bucket_starts(span, bucket_seconds):
        attempts, errors = rows.get(epoch, (0, 0))
        rate = errors / attempts if attempts else 0.0
        points.append(ErrorPoint(_from_epoch(epoch), attempts, errors, rate))
    return ErrorRate(run, bucket_seconds, points, drift(points))


@dataclass(frozen=True)
class Stall:
    start: datetime  # the commit before the gap
    end: datetime  # the commit after it
    minutes: float
    busy_events: int  # events logged inside the gap


@dataclass(frozen=True)
class Stalls:
    run: str
    min_gap_seconds: int
    stalls: list[Stall]
    current: CurrentStall | None


def stalls(
    run: str,
    min_gap: timedelta,
    window: TimeRange = TimeRange(),
    now: datetime | None = None,
    *,
    seen: Seen = SYSTEM_VIEW,
) -> Stalls:
    """Gaps of at least `min_gap` between consecutive commits while the run kept logging
    other events, and the run's current stall (analytics.runs.status.current_stall: the
    time since its last commit while it is still logging, counted to now) when the window
    reaches the run's last event."""
    ensure_run(run, seen)
    params = {"run": run, "min_gap": min_gap.total_seconds(), **window.params()}
    rows = warehouse.fetch_all(STALLS_SQL, params)
    found = [
        Stall(
            r["gap_start"].astimezone(UTC),
            r["gap_end"].astimezone(UTC),
            (r["gap_end"] - r["gap_start"]).total_seconds() / 60,
            int(r["busy_events"]),
        )
        for r in rows
        if r["gap_start"] is not None and r["busy_events"] > 0
    ]
    current = None
    status = run_statuses(min_gap, run=run, now=now, seen=seen).get(run)
    if status is not None and (window.end is None or window.end > status.last_ts):
        if status.stalled_since is not None and status.stalled_minutes is not None:
            current = CurrentStall(status.stalled_since, status.stalled_minutes)
    return Stalls(run, int(min_gap.total_seconds()), found, current)


@dataclass(frozen=True)
class AgentFigures:
    """One agent of a run: its place in the tree (a spawn event's parent and role, else
    the first event's that names them) and its figures; a parent that never logged has
    no figures (zeros, no times)."""

    agent: str
    parent: str | None
    role: str | None
    events: int
    commits: int
    errors: int
    attempts: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float | None
    first_ts: datetime | None
    last_ts: datetime | None


def agents(
    run: str, window: TimeRange = TimeRange(), *, seen: Seen = SYSTEM_VIEW
) -> list[AgentFigures]:
    ensure_run(run, seen)
    rows = warehouse.fetch_all(AGENTS_SQL, {"run": run, **window.params()})
    return [
        AgentFigures(
            **{
                **row,
                "first_ts": _utc(row["first_ts"]),
                "last_ts": _utc(row["last_ts"]),
                "cost_usd": float(row["cost_usd"]) if row["cost_usd"] is not None else None,
            }
        )
        for row in rows
    ]


@dataclass(frozen=True)
class EventKindCount:
    kind: str  # an EventKind's value, or `other`
    events: int


def event_kinds(
    run: str, window: TimeRange = TimeRange(), *, seen: Seen = SYSTEM_VIEW
) -> list[EventKindCount]:
    """Events per kind (commits deduplicated by sha); unknown kinds fold into `other`."""
    ensure_run(run, seen)
    params = {"run": run, "known": [kind.value for kind in EventKind], **window.params()}
    return [EventKindCount(**row) for row in warehouse.fetch_all(EVENT_KINDS_SQL, params)]
