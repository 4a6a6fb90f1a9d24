"""What alert rules look at, read from the warehouse once per evaluation (or per preview)
and shared by every rule: per-minute serving series per instance, scrape outcomes, commit
times and per-minute activity per run, and spend per hour.

A Facts object covers evaluation times in [start, end] and holds data from `start -
horizon` to `end` (never after `end`, so `evaluate_alerts --at T` sees what a live
evaluation at T would have seen). Each dataset is read on first use with one statement,
so 200 rules cost a handful of queries; rules then answer from NumPy arrays, and any
per-subject computation several rules share (a drift test, a rolling rate) is memoized
here. Definitions follow docs/agent-events.md, as warehouse/schema/events.py words
them in SQL: a commit sha counts once per run, at its first logging, and its `ok` there
decides whether it landed.

Who sees what is applied here and nowhere else: a Facts holds what its `seen`
(lib.access.Seen) may see, so a rule of a team reads only that team's runs, instances,
teams and spend (`seen_by(seen)` is a view of the same loaded data: the statements run
once for every team's rules). The system's own view (`Seen.all()`) is the default.
"""

from __future__ import annotations

import fnmatch
import math
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from django.conf import settings

import warehouse
from analytics.costs import queries as cost_queries
from analytics.costs.models import Team
from analytics.costs.report import in_team, priced_usage
from analytics.serving.models import ScrapeTarget
from analytics.serving.series import Window, read_series
from lib.access import Seen
from warehouse.schema.events import ATTEMPT_SQL, COMMIT_SQL, ERROR_SQL, SHA_COMMIT_SQL

MINUTE = 60
MAX_HORIZON = timedelta(days=7)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
T = TypeVar("T")
# (hour end epoch, run, source, person, team, USD): one priced group of an hour's calls.
SpendRow = tuple[float, str | None, str | None, str | None, str | None, float]

# Per run, the time of every commit (landed or failed) in [lo, end], deduplicated by sha
# as the contract says (the sha's first logging decides its time and `ok`), plus the last
# landed commit before lo (so a stall that began before the loaded range is still seen).
COMMITS_SQL = f"""
WITH firsts AS (
    SELECT run, min(ts) AS ts, arg_min(ok, (ts, source, source_line)) AS ok
    FROM events
    WHERE {SHA_COMMIT_SQL} AND ts <= $end
    GROUP BY run, commit_sha
    UNION ALL
    SELECT run, ts, ok FROM events
    WHERE {COMMIT_SQL} AND commit_sha IS NULL AND ts <= $end
)
SELECT run, epoch(ts) AS t, ok IS DISTINCT FROM false AS landed, false AS before
FROM firsts WHERE ts >= $lo
UNION ALL
SELECT run, epoch(max(ts)), true, true
FROM firsts WHERE ts < $lo AND ok IS DISTINCT FROM false
GROUP BY run
ORDER BY run, t
"""

# Per run and minute: events other than commits (the run is busy), attempts and errors
# among them (commits are added from COMMITS_SQL, a sha once).
ACTIVITY_SQL = f"""
SELECT run, (floor(epoch(ts) / 60) * 60)::BIGINT AS minute,
       count(*) FILTER (WHERE NOT {COMMIT_SQL}) AS busy,
       count(*) FILTER (WHERE {ATTEMPT_SQL} AND NOT {COMMIT_SQL}) AS attempts,
       count(*) FILTER (WHERE {ERROR_SQL} AND NOT {COMMIT_SQL}) AS errors
FROM events
WHERE ts >= $lo AND ts <= $end
GROUP BY ALL
ORDER BY run, minute
"""

# When a run's root agent (one never named with a parent) logged `stop`: the run ended.
ROOT_STOPS_SQL = """
WITH parented AS (SELECT DISTINCT run, agent FROM events WHERE parent IS NOT NULL)
SELECT e.run, epoch(min(e.ts)) AS t
FROM events AS e ANTI JOIN parented AS p ON e.run = p.run AND e.agent = p.agent
WHERE e.event = 'stop' AND e.ts <= $end
GROUP BY e.run
"""

# Per instance and minute, from raw samples (kept FLEETSCOPE_SERVING_RAW_RETENTION_HOURS,
# 48 h by default): the mean KV usage of the minute's scrapes, a scrape's usage being the
# mean over its engines (so an instance with more engines does not weigh its scrapes more).
KV_MINUTES_SQL = """
WITH per_scrape AS (
    SELECT instance, ts, avg(value) AS usage
    FROM serving_samples
    WHERE metric = 'kv_usage' AND ts >= $lo AND ts <= $end
    GROUP BY instance, ts
)
SELECT instance, (floor(epoch(ts) / 60) * 60)::BIGINT AS minute, avg(usage) AS mean
FROM per_scrape
GROUP BY ALL
ORDER BY instance, minute
"""

SCRAPES_SQL = """
SELECT instance, epoch(ts) AS t, up
FROM serving_scrapes
WHERE ts >= $lo AND ts <= $end
ORDER BY instance, ts
"""


def commit_lag_seconds() -> float:
    """How far behind now the newest stored scrape of a healthy target can be: scrapes are
    spooled and loaded once the oldest is FLEETSCOPE_SERVING_FLUSH_SECONDS old, which the
    next beat tick (FLEETSCOPE_SCRAPE_SECONDS) sees (ingest.scrape_targets)."""
    return float(settings.FLEETSCOPE_SERVING_FLUSH_SECONDS + settings.FLEETSCOPE_SCRAPE_SECONDS)


def epoch(when: datetime) -> float:
    return when.timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def floor_minute(seconds: float) -> int:
    return int(math.floor(seconds / MINUTE) * MINUTE)


@dataclass
class InstanceSeries:
    """Per minute (epoch seconds of the minute's start): the mean KV usage of the minute's
    scrapes (each scrape's usage the mean over its engines; NaN without samples) and the
    reset-adjusted preemption increase."""

    minutes: Ints
    kv_usage: Floats
    preemptions: Floats


@dataclass
class ScrapeSeries:
    times: Floats
    up: Bools


@dataclass
class RunSeries:
    commit_times: Floats = field(default_factory=lambda: np.empty(0))  # landed, sorted
    failed_commit_times: Floats = field(default_factory=lambda: np.empty(0))
    last_commit_before: float | None = None  # the last landed commit before the range
    minutes: Ints = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    busy: Ints = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    attempts: Ints = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    errors: Ints = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    stopped_at: float | None = None

    def last_commit(self, at: float) -> float | None:
        n = int(np.searchsorted(self.commit_times, at, side="right"))
        return float(self.commit_times[n - 1]) if n else self.last_commit_before

    def commits_between(self, lo: float, hi: float) -> int:
        """Landed commits with lo < t <= hi."""
        times = self.commit_times
        return int(
            np.searchsorted(times, hi, side="right") - np.searchsorted(times, lo, side="right")
        )

    def last_busy(self, at: float) -> float | None:
        """The latest minute (its start) with a non-commit event, at or before `at`."""
        n = int(np.searchsorted(self.minutes, at, side="right"))
        busy = self.busy[:n]
        nonzero = np.flatnonzero(busy)
        return float(self.minutes[nonzero[-1]]) if nonzero.size else None

    def has_events(self, lo: float, hi: float) -> bool:
        if self.commits_between(lo, hi):
            return True
        a, b = np.searchsorted(self.minutes, [lo, hi], side="right")
        return bool(b > a)


class Facts:
    def __init__(
        self,
        start: datetime,
        end: datetime,
        horizon: timedelta,
        seen: Seen | None = None,
        *,
        _source: Facts | None = None,
    ) -> None:
        if end < start:
            raise ValueError("end before start")
        self.start = start
        self.end = end
        self.horizon = min(horizon, MAX_HORIZON)
        self.lo = datetime.fromtimestamp(
            floor_minute(epoch(start - self.horizon)), tz=UTC
        )  # minute-aligned
        self.seen = seen if seen is not None else Seen.all()
        # The Facts that loads (itself, or the one this is a view of); memoized
        # computations are per subject, the same in every view that sees the subject.
        self._source: Facts = _source if _source is not None else self
        self._memo: dict[Hashable, Any] = self._source._memo if _source is not None else {}
        self.commit_lag_s = commit_lag_seconds()

    def seen_by(self, seen: Seen) -> Facts:
        """The same range as `seen` may see it, sharing what was (and will be) loaded."""
        return Facts(self.start, self.end, self.horizon, seen, _source=self._source)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """One computation per key for every rule that asks (same run, same params...)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @property
    def _range(self) -> dict[str, Any]:
        return {"lo": self.lo, "end": self.end}

    # --- serving --------------------------------------------------------------------

    @cached_property
    def instances(self) -> dict[str, InstanceSeries]:
        every = self._source._every_instance
        return {name: s for name, s in every.items() if self.seen.sees_instance(name)}

    @cached_property
    def _every_instance(self) -> dict[str, InstanceSeries]:
        end = self.end + timedelta(microseconds=1)  # windows are [start, end)
        rows = read_series(("preemptions",), None, None, Window(self.lo, end, MINUTE))
        pre: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for row in rows["preemptions"]:
            pre[row.instance][int(row.t.timestamp())] += row.increase or 0.0
        kv: dict[str, dict[int, float]] = defaultdict(dict)
        for r in warehouse.fetch_all(KV_MINUTES_SQL, self._range):
            kv[r["instance"]][int(r["minute"])] = float(r["mean"])
        answer = {}
        for name in sorted(set(kv) | set(pre)):
            minutes = np.array(sorted(set(kv[name]) | set(pre[name])), dtype=np.int64)
            answer[name] = InstanceSeries(
                minutes=minutes,
                kv_usage=np.array([kv[name].get(m, math.nan) for m in minutes.tolist()]),
                preemptions=np.array([pre[name].get(m, 0.0) for m in minutes.tolist()]),
            )
        return answer

    @cached_property
    def scrapes(self) -> dict[str, ScrapeSeries]:
        every = self._source._every_scrape
        return {name: s for name, s in every.items() if self.seen.sees_instance(name)}

    @cached_property
    def _every_scrape(self) -> dict[str, ScrapeSeries]:
        grouped: dict[str, tuple[list[float], list[bool]]] = defaultdict(lambda: ([], []))
        for r in warehouse.fetch_all(SCRAPES_SQL, self._range):
            times, ups = grouped[r["instance"]]
            times.append(float(r["t"]))
            ups.append(bool(r["up"]))
        return {
            name: ScrapeSeries(np.array(times), np.array(ups, dtype=bool))
            for name, (times, ups) in grouped.items()
        }

    @cached_property
    def targets(self) -> dict[str, ScrapeTarget]:
        every = self._source._every_target
        return {name: t for name, t in every.items() if self.seen.sees_instance(name)}

    @cached_property
    def _every_target(self) -> dict[str, ScrapeTarget]:
        return {t.name: t for t in ScrapeTarget.objects.filter(enabled=True)}

    def instance_names(self) -> list[str]:
        return sorted(set(self.instances) | set(self.scrapes) | set(self.targets))

    def instance_team(self, instance: str) -> str | None:
        target = self.targets.get(instance)
        team = (target.labels or {}).get("team") if target else None
        return str(team) if team is not None else None

    # --- runs -----------------------------------------------------------------------

    @cached_property
    def runs(self) -> dict[str, RunSeries]:
        every = self._source._every_run
        return {run: s for run, s in every.items() if self.seen.sees_run(run)}

    @cached_property
    def _every_run(self) -> dict[str, RunSeries]:
        landed: dict[str, list[float]] = defaultdict(list)
        failed: dict[str, list[float]] = defaultdict(list)
        series: dict[str, RunSeries] = defaultdict(RunSeries)
        for r in warehouse.fetch_all(COMMITS_SQL, self._range):
            if r["before"]:
                series[r["run"]].last_commit_before = float(r["t"])
            elif r["landed"]:
                landed[r["run"]].append(float(r["t"]))
            else:
                failed[r["run"]].append(float(r["t"]))
        activity: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
        for r in warehouse.fetch_all(ACTIVITY_SQL, self._range):
            activity[r["run"]].append(
                (int(r["minute"]), int(r["busy"]), int(r["attempts"]), int(r["errors"]))
            )
        for run, rows in activity.items():
            s = series[run]
            columns = np.array(rows, dtype=np.int64).T
            s.minutes, s.busy, s.attempts, s.errors = columns[0], columns[1], columns[2], columns[3]
        for run, times in landed.items():
            series[run].commit_times = np.array(times)
        for run, times in failed.items():
            series[run].failed_commit_times = np.array(times)
        for r in warehouse.fetch_all(ROOT_STOPS_SQL, {"end": self.end}):
            if r["run"] in series:
                series[r["run"]].stopped_at = float(r["t"])
        return dict(series)

    @cached_property
    def teams(self) -> list[Team]:
        return [t for t in self._source._every_team if self.seen.sees_team(t.pk)]

    @cached_property
    def _every_team(self) -> list[Team]:
        return list(Team.objects.all())

    def team(self, name: str) -> Team | None:
        return next((t for t in self.teams if t.name == name), None)

    def run_in_team(self, run: str, team: str) -> bool:
        found = self.team(team)
        return found is not None and any(
            fnmatch.fnmatchcase(run, p) for p in found.run_patterns or []
        )

    # --- spend ----------------------------------------------------------------------

    def spend_by_hour(self, day: date) -> list[tuple[float, str | None, str | None, float]]:
        """(hour end epoch, run, source, USD) of every UTC hour of `day` up to `end` (the
        last one cut at `end`), of the runs and sources this view sees."""
        return [(r[0], r[1], r[2], r[5]) for r in self._spend(day, by_person=False)]

    def spend_by_person_hour(self, day: date) -> list[SpendRow]:
        """(hour end epoch, run, source, person, team, USD): spend_by_hour split by the
        telemetry's person and team (the daily-spend rule's group_by)."""
        return self._spend(day, by_person=True)

    def _spend(self, day: date, *, by_person: bool) -> list[SpendRow]:
        def read() -> list[SpendRow]:
            day_start = datetime.combine(day, time(), tzinfo=UTC)
            stop = min(self.end, day_start + timedelta(days=1))
            segments = []
            hour = day_start
            while hour < stop:
                segments.append(
                    cost_queries.Segment(hour, min(hour + timedelta(hours=1), stop), day, day)
                )
                hour += timedelta(hours=1)
            if not segments:
                return []
            by_source = any(t.source_patterns for t in self._source._every_team)
            # The last segment ends at `end`: include a call logged exactly then.
            last = segments[-1]
            segments[-1] = cost_queries.Segment(
                last.start, last.end + timedelta(microseconds=1), day, day
            )
            return [
                (
                    min(epoch(row.start or day_start) + 3600, epoch(self.end)),
                    row.run,
                    row.source,
                    row.person,
                    row.team,
                    usd,
                )
                for row, usd in priced_usage(segments, by_source=by_source, by_person=by_person)
            ]

        rows = self.memo(("spend", day, by_person), read)
        if self.seen.everything:
            return rows
        return [row for row in rows if self._sees_spend(row[1], row[2], row[4])]

    def _sees_spend(self, run: str | None, source: str | None, team_name: str | None) -> bool:
        """A call is seen with its run, or by a seen team whose patterns match it (or whose
        name its event carries)."""
        if run is not None and self.seen.sees_run(run):
            return True
        return any(in_team(team, run, source, team_name) for team in self.teams)

    def spend_in_team(
        self, team: Team, run: str | None, source: str | None, team_name: str | None = None
    ) -> bool:
        return in_team(team, run, source, team_name)
