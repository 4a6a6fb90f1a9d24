"""Where each run stands, for the runs list and the run page's badge: finished, stalled,
active or idle, plus the attempts behind its error rate.

Definitions follow docs/agent-events.md, as warehouse/schema/events.py words them in SQL:
commits deduplicated by sha (counted at their first logging). The current stall is the
time since the run's last commit (or its first event, before any) while it is still
logging: not finished, something logged after that commit and within ACTIVE_WINDOW of
now, and now at least `min_gap` past the commit. It counts to now, as the commit_stall
alert does, so every page and message shows the same figure (`current_stall` is that
definition, the one place it is written). A run is finished when an agent with no parent
(the root) logged `stop`; active when it logged anything within ACTIVE_WINDOW of now;
otherwise idle.

Every reader names what its user may see (a lib.access.Seen): statuses of other runs are
not worked out at all. SYSTEM_VIEW (every run) is for the system's own readers: ingest,
load_demo, the alert facts; pages and API handlers pass the request's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import warehouse
from lib.access import Seen, visible_run_sql
from warehouse.schema.events import ATTEMPT_SQL, COMMIT_SQL, LANDED_COMMIT_SQL, SHA_COMMIT_SQL

# What the system itself sees (every run); a request sees what lib.access.seen_of says.
SYSTEM_VIEW = Seen.all()

# A run that logged within this of now is still logging (the runs list's `active`).
ACTIVE_WINDOW = timedelta(minutes=15)

RUN_STATUS_SQL = f"""
WITH run_events AS (
    SELECT * FROM events
    WHERE ($run::VARCHAR IS NULL OR run = $run) AND {visible_run_sql("run")}
      AND ($runs::VARCHAR[] IS NULL OR run IN (SELECT unnest($runs::VARCHAR[])))
),
commit_times AS (
    SELECT run, min(ts) AS ts FROM run_events
    WHERE {LANDED_COMMIT_SQL} AND commit_sha IS NOT NULL
    GROUP BY run, commit_sha
    UNION ALL
    SELECT run, ts FROM run_events
    WHERE {LANDED_COMMIT_SQL} AND commit_sha IS NULL
),
last_commits AS (
    SELECT run, max(ts) AS last_commit FROM commit_times GROUP BY run
),
parented AS (
    SELECT DISTINCT run, agent FROM run_events WHERE parent IS NOT NULL
),
root_stops AS (
    SELECT e.run, max(e.ts) AS stopped_at
    FROM run_events AS e ANTI JOIN parented AS p ON e.run = p.run AND e.agent = p.agent
    WHERE e.event = 'stop'
    GROUP BY e.run
),
totals AS (
    -- A commit sha logged again is one attempt, as everywhere else.
    SELECT run, min(ts) AS first_ts, max(ts) AS last_ts,
           count(*) FILTER (WHERE {ATTEMPT_SQL} AND NOT {SHA_COMMIT_SQL})
             + count(DISTINCT commit_sha) FILTER (WHERE {COMMIT_SQL}) AS attempts
    FROM run_events
    GROUP BY run
)
SELECT t.run, t.first_ts, t.last_ts, t.attempts, c.last_commit, s.stopped_at
FROM totals AS t
LEFT JOIN last_commits AS c USING (run)
LEFT JOIN root_stops AS s USING (run)
ORDER BY t.run
"""


class RunState(StrEnum):
    FINISHED = "finished"
    STALLED = "stalled"
    ACTIVE = "active"
    IDLE = "idle"


@dataclass(frozen=True)
class RunStatus:
    state: RunState
    first_ts: datetime
    last_ts: datetime
    attempts: int  # behind the error rate: a re-logged commit sha is one attempt
    last_commit: datetime | None
    stopped_at: datetime | None  # the root's last `stop`
    stalled_since: datetime | None  # only while stalled: current_stall's
    stalled_minutes: float | None  # to now


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def now_utc() -> datetime:
    """The clock every status is judged by (the seam tests set)."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class CurrentStall:
    since: datetime  # the last commit (or the first event, before any)
    minutes: float  # from then to now


def current_stall(
    *,
    first_ts: datetime,
    last_ts: datetime,
    last_commit: datetime | None,
    stopped_at: datetime | None,
    min_gap: timedelta,
    now: datetime,
) -> CurrentStall | None:
    """The run's current stall (docs/agent-events.md): the time since its last commit while
    it is still logging, when that reaches `min_gap`; None otherwise."""
    since = last_commit or first_ts
    still_logging = stopped_at is None and last_ts > since and now - last_ts <= ACTIVE_WINDOW
    if not still_logging or now - since < min_gap:
        return None
    return CurrentStall(since, (now - since).total_seconds() / 60)


def run_statuses(
    min_gap: timedelta = timedelta(minutes=30),
    *,
    run: str | None = None,
    runs: list[str] | None = None,
    now: datetime | None = None,
    seen: Seen = SYSTEM_VIEW,
) -> dict[str, RunStatus]:
    """Every run's status by name that `seen` sees; only `run`'s when given, only those of
    `runs` when given (nothing of a run not seen). `now` defaults to the clock."""
    now = now or now_utc()
    statuses = {}
    params = {"run": run, "runs": runs, "seen_runs": seen.run_list()}
    for row in warehouse.fetch_all(RUN_STATUS_SQL, params):
        first_ts, last_ts = _utc(row["first_ts"]), _utc(row["last_ts"])
        last_commit, stopped_at = _utc(row["last_commit"]), _utc(row["stopped_at"])
        assert first_ts is not None and last_ts is not None
        stall = current_stall(
            first_ts=first_ts,
            last_ts=last_ts,
            last_commit=last_commit,
            stopped_at=stopped_at,
            min_gap=min_gap,
            now=now,
        )
        if stopped_at is not None:
            state = RunState.FINISHED
        elif stall is not None:
            state = RunState.STALLED
        elif now - last_ts <= ACTIVE_WINDOW:
            state = RunState.ACTIVE
        else:
            state = RunState.IDLE
        statuses[row["run"]] = RunStatus(
            state=state,
            first_ts=first_ts,
            last_ts=last_ts,
            attempts=int(row["attempts"]),
            last_commit=last_commit,
            stopped_at=stopped_at,
            stalled_since=stall.since if stall else None,
            stalled_minutes=stall.minutes if stall else None,
        )
    return statuses


# Runs with a `stop` event: only these may be finished (a column filter over events, where
# the statuses read every event of the runs they are asked about).
STOPPED_RUNS_SQL = f"""
SELECT DISTINCT run FROM events WHERE event = 'stop' AND {visible_run_sql("run")}
"""
# Runs that logged within ACTIVE_WINDOW of now: only these may be active or stalled.
RECENT_RUNS_SQL = f"""
SELECT run FROM run_rollups WHERE {visible_run_sql("run")}
GROUP BY run HAVING max(last_ts) >= $since
"""


@dataclass(frozen=True)
class StateCut:
    """The runs in one state, as a list filter: `only` these runs, or all `but` these."""

    only: list[str] | None
    but: list[str] | None


def runs_in_state(
    state: RunState, *, now: datetime | None = None, seen: Seen = SYSTEM_VIEW
) -> StateCut:
    """Which runs are in `state`, working out the statuses of the few runs that may be in
    another state than idle (by the definitions above: finished needs a root `stop`,
    active and stalled a recent event); every other run, and a run not yet rolled up, is
    idle."""
    now = now or now_utc()
    params = {"seen_runs": seen.run_list()}
    recent = [
        r["run"]
        for r in warehouse.fetch_all(RECENT_RUNS_SQL, {**params, "since": now - ACTIVE_WINDOW})
    ]
    stopped = (
        []
        if state in (RunState.ACTIVE, RunState.STALLED)
        else [r["run"] for r in warehouse.fetch_all(STOPPED_RUNS_SQL, params)]
    )
    if state is RunState.FINISHED:
        recent = []
    candidates = sorted(set(recent) | set(stopped))
    statuses = run_statuses(runs=candidates, now=now, seen=seen) if candidates else {}
    if state is RunState.IDLE:
        return StateCut(None, sorted(r for r, s in statuses.items() if s.state is not state))
    return StateCut(sorted(r for r, s in statuses.items() if s.state is state), None)
