"""Questions about people and teams, from the telemetry's person and team columns.

Owns the SQL over `events` (the OTLP mappers fill person, team...) and `otlp_points` (Claude
Code's metrics): per UTC day, person and team, the sessions, tokens and commits of the
events and the increases of the metrics the events have no equivalent for (active time,
lines of code, edit decisions, and commits of sessions that logged no commit event). A
metric's increase: delta points are summed; cumulative points are differenced per series,
a drop being a restart (the new value counts from 0, as Prometheus's increase() reads a
counter), a series' first point counting whole (an OTLP cumulative series starts at 0 at
its start time). Points before the window are read only to difference the first one in it.

Every query reads only what a `Seen` covers: events of its runs; points of its runs'
sessions or of its teams (a session known only from metrics has no run). Costs are not
priced here (analytics.people.figures asks analytics.costs). Never formats a request's
value into SQL: every value is bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import warehouse
from lib.access import Seen, visible_run_sql
from warehouse.schema.events import LANDED_COMMIT_SQL

ACTIVE_TIME = "claude_code.active_time.total"
LINES_OF_CODE = "claude_code.lines_of_code.count"
EDIT_DECISION = "claude_code.code_edit_tool.decision"
COMMIT_COUNT = "claude_code.commit.count"
METRICS = (ACTIVE_TIME, LINES_OF_CODE, EDIT_DECISION, COMMIT_COUNT)

# Metric points carry their person (ingest/parsers/otlp_metrics.py reads the point's own
# user.email / user.id, where Claude Code puts them).
_POINTS = "otlp_points"
_TEAM = "($team::VARCHAR IS NULL OR team = $team)"
_PERSON = "($person::VARCHAR IS NULL OR person = $person)"
_SEEN_POINT = (
    "($seen_runs::VARCHAR[] IS NULL OR list_contains($seen_runs, session)"
    " OR list_contains($seen_teams, team))"
)
_EVENT_FILTER = (
    f"person IS NOT NULL AND ts >= $start AND ts < $end AND {_TEAM} AND {_PERSON}"
    f" AND {visible_run_sql('run')}"
)

# Commits as docs/agent-events.md defines them: landed (`ok` not false), a sha once per
# run however often it is logged.
_COMMITS = (
    f"count(*) FILTER (WHERE {LANDED_COMMIT_SQL} AND commit_sha IS NULL)"
    f" + count(DISTINCT run || chr(0) || commit_sha) FILTER (WHERE {LANDED_COMMIT_SQL})"
)

# Tokens and commits of the events, per day, person and team.
EVENT_FIGURES_SQL = f"""
SELECT ts::DATE AS day, person, team,
       coalesce(sum(input_tokens) FILTER (WHERE event = 'llm_call'), 0) AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE event = 'llm_call'), 0) AS output_tokens,
       {_COMMITS} AS commits
FROM events
WHERE {_EVENT_FILTER}
GROUP BY ALL
"""

# The sessions (runs of events, `session.id` of points) each (day, person, team) had,
# counted distinct per day and over the whole window (`whole`: day is NULL).
SESSIONS_SQL = f"""
WITH sessions AS (
    SELECT ts::DATE AS day, person, team, run AS session FROM events WHERE {_EVENT_FILTER}
    UNION
    SELECT ts::DATE AS day, person, team, session FROM {_POINTS}
    WHERE person IS NOT NULL AND session IS NOT NULL AND ts >= $start AND ts < $end
      AND {_TEAM} AND {_PERSON} AND {_SEEN_POINT}
)
SELECT day, person, team, grouping(day) = 1 AS whole, count(DISTINCT session) AS sessions
FROM sessions
GROUP BY GROUPING SETS ((day, person, team), (person, team))
"""

# Each point's increase (see the module docstring), summed per day, person and team.
METRIC_FIGURES_SQL = f"""
WITH points AS (
    SELECT series, metric, session, person, team, temporality, ts, value,
           json_extract_string(attrs, '$.type') AS line_kind,
           json_extract_string(attrs, '$.decision') AS decision,
           lag(value) OVER (PARTITION BY series ORDER BY ts) AS previous
    FROM {_POINTS}
    WHERE kind = 'sum' AND list_contains($metrics, metric) AND ts < $end
      AND person IS NOT NULL
), increases AS (
    SELECT *,
           CASE WHEN temporality = 'delta' THEN value
                WHEN previous IS NULL OR value < previous THEN value
                ELSE value - previous END AS increase
    FROM points
    WHERE ts >= $start AND {_TEAM} AND {_PERSON} AND {_SEEN_POINT}
)
SELECT ts::DATE AS day, person, team,
       coalesce(sum(increase) FILTER (WHERE metric = '{ACTIVE_TIME}'), 0) AS active_seconds,
       coalesce(sum(increase) FILTER (
           WHERE metric = '{LINES_OF_CODE}' AND line_kind = 'added'), 0) AS lines_added,
       coalesce(sum(increase) FILTER (
           WHERE metric = '{LINES_OF_CODE}' AND line_kind = 'removed'), 0) AS lines_removed,
       coalesce(sum(increase) FILTER (
           WHERE metric = '{EDIT_DECISION}' AND decision = 'accept'), 0) AS edits_accepted,
       coalesce(sum(increase) FILTER (
           WHERE metric = '{EDIT_DECISION}' AND decision = 'reject'), 0) AS edits_rejected,
       -- the metric's commits only for sessions with no commit event: never counted twice
       coalesce(sum(increase) FILTER (
           WHERE metric = '{COMMIT_COUNT}' AND (session IS NULL OR NOT EXISTS (
               SELECT 1 FROM events AS e WHERE e.run = increases.session AND e.event = 'commit'
           ))), 0) AS metric_commits
FROM increases
GROUP BY ALL
"""

# Where the telemetry of people starts and ends (for a window open at either end).
RANGE_SQL = f"""
SELECT min(first_ts) AS first_ts, max(last_ts) AS last_ts FROM (
    SELECT min(ts) AS first_ts, max(ts) AS last_ts FROM events
    WHERE person IS NOT NULL AND {visible_run_sql("run")}
    UNION ALL
    SELECT min(ts), max(ts) FROM {_POINTS} WHERE person IS NOT NULL AND {_SEEN_POINT}
)
"""

# One person's sessions: the runs of their events, and sessions known only from metrics.
PERSON_SESSIONS_SQL = f"""
WITH seen_events AS (
    SELECT run AS session, run, team, ts, event, ok, commit_sha, input_tokens, output_tokens
    FROM events WHERE {_EVENT_FILTER}
), seen_points AS (
    SELECT session, team, ts FROM {_POINTS}
    WHERE person IS NOT NULL AND session IS NOT NULL AND ts >= $start AND ts < $end
      AND {_TEAM} AND {_PERSON} AND {_SEEN_POINT}
      AND session NOT IN (SELECT session FROM seen_events)
)
SELECT session, min(team) AS team, min(ts) AS first_ts, max(ts) AS last_ts,
       count(event) AS events,
       coalesce(sum(input_tokens) FILTER (WHERE event = 'llm_call'), 0) AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE event = 'llm_call'), 0) AS output_tokens,
       {_COMMITS} AS commits
FROM (
    SELECT * FROM seen_events
    UNION ALL
    SELECT session, session, team, ts, NULL, NULL, NULL, NULL, NULL FROM seen_points
)
GROUP BY session
ORDER BY first_ts DESC, session
"""

# The runs whose events carry one of these team names (telemetry from team members).
TEAM_RUNS_SQL = "SELECT DISTINCT run FROM events WHERE list_contains($teams, team) ORDER BY run"


@dataclass(frozen=True)
class Key:
    """One (UTC day, person, team): the grain of every figure here."""

    day: date
    person: str
    team: str | None


@dataclass(frozen=True)
class EventFigures:
    input_tokens: int
    output_tokens: int
    commits: int


@dataclass(frozen=True)
class MetricFigures:
    active_seconds: float
    lines_added: int
    lines_removed: int
    edits_accepted: int
    edits_rejected: int
    metric_commits: int


@dataclass(frozen=True)
class Sessions:
    per_day: dict[Key, int]
    whole: dict[tuple[str, str | None], int]  # over the window, by (person, team)


@dataclass(frozen=True)
class PersonSession:
    session: str
    team: str | None
    first_ts: datetime
    last_ts: datetime
    events: int  # 0: known only from its metrics (no run page)
    input_tokens: int
    output_tokens: int
    commits: int
    cost_usd: float = 0.0  # filled by analytics.people.figures


@dataclass(frozen=True)
class Filter:
    """[start, end), and an optional team and person."""

    start: datetime
    end: datetime
    team: str | None = None
    person: str | None = None


def _seen_params(seen: Seen) -> dict[str, Any]:
    return {"seen_runs": seen.run_list(), "seen_teams": sorted(seen.team_names)}


def _params(where: Filter, seen: Seen) -> dict[str, Any]:
    return {
        "start": where.start,
        "end": where.end,
        "team": where.team,
        "person": where.person,
        **_seen_params(seen),
    }


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def event_figures(where: Filter, seen: Seen) -> dict[Key, EventFigures]:
    params = _params(where, seen)
    params.pop("seen_teams")
    return {
        Key(r["day"], r["person"], r["team"]): EventFigures(
            int(r["input_tokens"]), int(r["output_tokens"]), int(r["commits"])
        )
        for r in warehouse.fetch_all(EVENT_FIGURES_SQL, params)
    }


def sessions(where: Filter, seen: Seen) -> Sessions:
    per_day: dict[Key, int] = {}
    whole: dict[tuple[str, str | None], int] = {}
    for r in warehouse.fetch_all(SESSIONS_SQL, _params(where, seen)):
        if r["whole"]:
            whole[(r["person"], r["team"])] = int(r["sessions"])
        else:
            per_day[Key(r["day"], r["person"], r["team"])] = int(r["sessions"])
    return Sessions(per_day, whole)


def metric_figures(where: Filter, seen: Seen) -> dict[Key, MetricFigures]:
    params = {**_params(where, seen), "metrics": list(METRICS)}
    return {
        Key(r["day"], r["person"], r["team"]): MetricFigures(
            active_seconds=float(r["active_seconds"]),
            lines_added=int(r["lines_added"]),
            lines_removed=int(r["lines_removed"]),
            edits_accepted=int(r["edits_accepted"]),
            edits_rejected=int(r["edits_rejected"]),
            metric_commits=int(r["metric_commits"]),
        )
        for r in warehouse.fetch_all(METRIC_FIGURES_SQL, params)
    }


def telemetry_range(seen: Seen) -> tuple[datetime, datetime] | None:
    """The first and last time of any person's telemetry `seen` covers (None: none)."""
    row = warehouse.fetch_one(RANGE_SQL, _seen_params(seen))
    if row is None or row["first_ts"] is None:
        return None
    return _utc(row["first_ts"]), _utc(row["last_ts"])


def person_sessions(where: Filter, seen: Seen) -> list[PersonSession]:
    """The sessions of `where.person` in the window, latest first."""
    return [
        PersonSession(
            session=r["session"],
            team=r["team"],
            first_ts=_utc(r["first_ts"]),
            last_ts=_utc(r["last_ts"]),
            events=int(r["events"]),
            input_tokens=int(r["input_tokens"]),
            output_tokens=int(r["output_tokens"]),
            commits=int(r["commits"]),
        )
        for r in warehouse.fetch_all(PERSON_SESSIONS_SQL, _params(where, seen))
    ]


def team_runs(team_names: Iterable[str]) -> list[str]:
    """The runs with an event whose `team` is one of these names."""
    names = sorted(set(team_names))
    if not names:
        return []
    return [r["run"] for r in warehouse.fetch_all(TEAM_RUNS_SQL, {"teams": names})]
