"""Alert rules, one class per kind: each reads its threshold, scope and params once
(raising RuleError with a one-line reason when they make no sense) and `evaluate(facts,
at)` returns one Finding per subject it watches: is the condition true at `at`, the value
behind it, a one-line summary, and when the data says the condition began to hold.

The state machine (ok -> pending -> firing -> resolved, `for`, notifications) is
analytics.alerts.engine's; rules only answer "is it true now, and since when".

Kinds, thresholds and params (durations are strings like `5m`, or numbers of seconds):
- preemption_rate: threshold preemptions per second over `window` (default 5m), per
  instance; counters are reset-adjusted at load, so a restart is never a burst.
- kv_usage: threshold a fraction 0..1; true while every scrape's KV-cache usage (the
  mean over the instance's engines) is at or above it, judged per minute (a minute
  without samples ends the streak; a level that keeps dipping under never holds).
- commit_stall: no landed commit for longer than `min_gap` (fixed), or than `factor` x the
  run's mean gap between commits over `lookback` (default 3h) before its last commit, but
  at least `floor` (adaptive; a run with fewer than `min_commits`, default 3, in that
  lookback has no known pace yet and is not judged); only while the run still logs other events (within
  `active_within`, default 15m, as the contract defines a stall) and has not stopped.
- commit_decay: threshold a fraction; the commit rate over `window` (default 1h) fell
  below that fraction of the rate over the `baseline` (default 3h) before it, the
  baseline having at least `min_commits` (default 10), while the run is still busy.
- error_drift: the per-`bucket` (default 1h) error rate over the whole buckets of
  `window` (default 24h) before now has
  a significant rising trend (Mann-Kendall, as the error-rate API) with a Theil-Sen slope
  per hour of at least the threshold (default 0).
- target_down: the last scrape failed, or a configured target has not been scraped for
  `stale` (default 3 intervals, at least 1m).
- daily_spend: threshold USD (a team scope without one uses the team's daily budget);
  token spend of the UTC day so far, logged or priced as the cost report prices it.

Scopes: {} (every run or instance, or everything for daily_spend), {"run": name},
{"instance": name}, {"team": name} (runs by the team's run patterns, instances by the
scrape target's `team` label, spend by the team's run and source patterns).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, ClassVar

import numpy as np

from analytics.alerts.facts import MINUTE, Facts, RunSeries, epoch, floor_minute, from_epoch
from analytics.alerts.models import AlertRule, RuleKind
from analytics.runs.queries import drift
from lib.durations import parse_duration
from lib.errors import ParameterError


class RuleError(ValueError):
    """A rule that cannot be evaluated as written; the message is one line."""


@dataclass(frozen=True)
class Finding:
    subject: str
    active: bool
    value: float | None
    summary: str
    since: datetime | None = None  # when the condition began to hold, if the data says


def _minutes(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Rule(ABC):
    kind: ClassVar[RuleKind]
    subject_noun: ClassVar[str]  # what a subject names: run, instance or team
    scopes: ClassVar[tuple[str, ...]]
    needs_threshold: ClassVar[bool] = True
    known_params: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        threshold: float | None,
        scope: dict[str, Any] | None,
        params: dict[str, Any] | None,
        for_seconds: int = 0,
    ) -> None:
        self.threshold = threshold
        self.scope = dict(scope or {})
        self.params = dict(params or {})
        self.for_seconds = for_seconds
        if len(self.scope) > 1 or any(k not in self.scopes for k in self.scope):
            allowed = ", ".join(f'{{"{k}": ...}}' for k in self.scopes)
            raise RuleError(f"{self.kind} scope must be {{}} or one of {allowed}")
        if any(not isinstance(v, str) or not v for v in self.scope.values()):
            raise RuleError("scope values must be non-empty names")
        unknown = sorted(set(self.params) - set(self.known_params))
        if unknown:
            known = ", ".join(self.known_params) or "none"
            raise RuleError(f"{self.kind} does not take params {unknown} (known: {known})")
        if threshold is not None and not math.isfinite(threshold):
            raise RuleError("threshold must be a finite number")
        if self.needs_threshold and threshold is None:
            raise RuleError(f"{self.kind} needs a threshold")
        self.configure()

    @classmethod
    def from_model(cls, rule: AlertRule) -> Rule:
        return build_rule(rule.kind, rule.threshold, rule.scope, rule.params, rule.for_seconds)

    @abstractmethod
    def configure(self) -> None:
        """Read and check params (called once by __init__)."""

    def duration(self, name: str, default: str) -> timedelta:
        """A duration param: `90s`, `5m`, `1h`, or a number of seconds."""
        raw = self.params.get(name, default)
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            if not math.isfinite(raw) or raw <= 0:
                raise RuleError(f"params.{name} must be a positive duration, got {raw!r}")
            return timedelta(seconds=raw)
        try:
            return parse_duration(str(raw), name=f"params.{name}")
        except ParameterError as exc:
            raise RuleError(str(exc)) from None

    def number(self, name: str, default: float | None = None) -> float:
        raw = self.params.get(name, default)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise RuleError(f"params.{name} must be a number, got {raw!r}")
        return float(raw)

    @abstractmethod
    def horizon(self) -> timedelta:
        """How much data before an evaluation time this rule looks at."""

    @abstractmethod
    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        """One finding per watched subject, as of `at`."""


# --- serving ----------------------------------------------------------------------------


class InstanceRule(Rule):
    subject_noun = "instance"
    scopes = ("instance", "team")

    def subjects(self, facts: Facts, names: Iterable[str]) -> list[str]:
        if "instance" in self.scope:
            return [n for n in names if n == self.scope["instance"]]
        if "team" in self.scope:
            return [n for n in names if facts.instance_team(n) == self.scope["team"]]
        return list(names)


def _streak_start(active: np.ndarray, times: np.ndarray) -> float | None:
    """The time of the first element of the trailing run of True values (None if the last
    value is False)."""
    if not active.size or not active[-1]:
        return None
    off = np.flatnonzero(~active)
    return float(times[off[-1] + 1]) if off.size else float(times[0])


class PreemptionRate(InstanceRule):
    kind = RuleKind.PREEMPTION_RATE
    known_params = ("window",)

    def configure(self) -> None:
        window = self.duration("window", "5m").total_seconds()
        if window < MINUTE or window % MINUTE:
            raise RuleError("params.window must be a whole number of minutes")
        self.window_minutes = int(window // MINUTE)
        if self.threshold is not None and self.threshold < 0:
            raise RuleError("preemption_rate threshold is per second and not negative")

    def horizon(self) -> timedelta:
        return (
            timedelta(minutes=self.window_minutes)
            + timedelta(seconds=self.for_seconds)
            + (timedelta(hours=1))
        )

    def _rates(self, facts: Facts, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Per minute from the first loaded minute: the rate over the window that ends
        with that minute (per second)."""

        def compute() -> tuple[np.ndarray, np.ndarray]:
            series = facts.instances.get(name)
            first = floor_minute(epoch(facts.lo))
            last = floor_minute(epoch(facts.end))
            grid = np.arange(first, last + MINUTE, MINUTE, dtype=np.int64)
            dense = np.zeros(grid.size)
            if series is not None and series.minutes.size:
                index = (series.minutes - first) // MINUTE
                keep = (index >= 0) & (index < grid.size)
                dense[index[keep]] = series.preemptions[keep]
            cumulative = np.concatenate(([0.0], np.cumsum(dense)))
            k = self.window_minutes
            ends = np.arange(1, grid.size + 1)
            sums = cumulative[ends] - cumulative[np.maximum(ends - k, 0)]
            return grid, sums / (k * MINUTE)

        return facts.memo(("preemption_rate", name, self.window_minutes), compute)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        assert self.threshold is not None
        names = sorted(set(facts.instances) | set(facts.targets))
        findings = []
        # The window is the last whole minutes before `at`'s minute: a partial minute
        # would understate the rate.
        last_whole = floor_minute(epoch(at)) - MINUTE
        for name in self.subjects(facts, names):
            grid, rates = self._rates(facts, name)
            n = int(np.searchsorted(grid, last_whole, side="right"))
            if n == 0:
                continue
            rate = float(rates[n - 1])
            active = rates[:n] > self.threshold
            since = _streak_start(active, grid[:n])
            findings.append(
                Finding(
                    name,
                    bool(active[-1]),
                    rate,
                    f"{rate:.3g} preemptions/s over the last {self.window_minutes} min"
                    f" (threshold {self.threshold:g}/s)",
                    from_epoch(since) if since is not None else None,
                )
            )
        return findings


class KvUsage(InstanceRule):
    kind = RuleKind.KV_USAGE

    def configure(self) -> None:
        assert self.threshold is not None
        if not 0 < self.threshold <= 1:
            raise RuleError("kv_usage threshold is a fraction between 0 and 1, e.g. 0.95")

    def horizon(self) -> timedelta:
        return timedelta(seconds=self.for_seconds) + timedelta(hours=1)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        assert self.threshold is not None
        findings = []
        minute = floor_minute(epoch(at))
        for name in self.subjects(facts, sorted(facts.instances)):
            series = facts.instances[name]
            n = int(np.searchsorted(series.minutes, minute, side="right"))
            # The current minute may not have a scrape yet: the one before stands in.
            if n == 0 or series.minutes[n - 1] < minute - MINUTE:
                findings.append(Finding(name, False, None, "no KV-cache samples"))
                continue
            low = series.kv_low
            value = float(series.kv_usage[n - 1])
            active = bool(low[n - 1] >= self.threshold)  # NaN (no samples) is False
            since = None
            if active:
                # Back to the first minute of the streak; a minute without samples ends it.
                i = n - 1
                while (
                    i > 0
                    and series.minutes[i - 1] == series.minutes[i] - MINUTE
                    and low[i - 1] >= self.threshold
                ):
                    i -= 1
                since = from_epoch(float(series.minutes[i]))
            findings.append(
                Finding(
                    name,
                    active,
                    value if not math.isnan(value) else None,
                    f"KV-cache usage {value:.1%} (threshold {self.threshold:.0%})",
                    since,
                )
            )
        return findings


class TargetDown(InstanceRule):
    kind = RuleKind.TARGET_DOWN
    needs_threshold = False
    known_params = ("stale",)

    def configure(self) -> None:
        self.stale = self.duration("stale", "1m") if "stale" in self.params else None

    def horizon(self) -> timedelta:
        return timedelta(seconds=self.for_seconds) + timedelta(hours=1)

    def _stale_seconds(self, facts: Facts, name: str) -> float | None:
        if self.stale is not None:
            return self.stale.total_seconds()
        target = facts.targets.get(name)
        return max(60.0, 3.0 * target.interval_seconds) if target else None

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        now = epoch(at)
        findings = []
        names = sorted(set(facts.scrapes) | set(facts.targets))
        for name in self.subjects(facts, names):
            scrapes = facts.scrapes.get(name)
            n = int(np.searchsorted(scrapes.times, now, side="right")) if scrapes else 0
            stale = self._stale_seconds(facts, name)
            target = facts.targets.get(name)
            if n:
                assert scrapes is not None
                times, up = scrapes.times[:n], scrapes.up[:n]
                last_ok = times[up][-1] if up.any() else None
                if not up[-1]:
                    failed_from = _streak_start(~up, times)
                    assert failed_from is not None
                    findings.append(
                        Finding(
                            name,
                            True,
                            (now - failed_from) / 60,
                            f"scrapes failing for {_minutes(now - failed_from)}",
                            from_epoch(failed_from),
                        )
                    )
                    continue
                if stale is not None and target is not None and now - times[-1] > stale:
                    findings.append(
                        Finding(
                            name,
                            True,
                            (now - times[-1]) / 60,
                            f"not scraped for {_minutes(now - times[-1])}",
                            from_epoch(times[-1] + stale),
                        )
                    )
                    continue
                since_ok = now - last_ok if last_ok is not None else 0.0
                findings.append(Finding(name, False, since_ok / 60, "scraped"))
            elif target is not None and stale is not None:
                # No scrape in the loaded range: down once it has existed for `stale`.
                known_from = max(epoch(target.created_at), epoch(facts.lo))
                down = now - known_from > stale
                findings.append(
                    Finding(
                        name,
                        down,
                        (now - known_from) / 60,
                        f"not scraped for {_minutes(now - known_from)}" if down else "new target",
                        from_epoch(known_from + stale) if down else None,
                    )
                )
        return findings


# --- runs -------------------------------------------------------------------------------


class RunRule(Rule):
    subject_noun = "run"
    scopes = ("run", "team")

    def watched(
        self, facts: Facts, at: datetime, lookback: timedelta
    ) -> list[tuple[str, RunSeries]]:
        """Runs in scope that logged anything in (at - lookback, at]."""
        hi = epoch(at)
        lo = hi - lookback.total_seconds()
        chosen = []
        for run, series in sorted(facts.runs.items()):
            if "run" in self.scope and run != self.scope["run"]:
                continue
            if "team" in self.scope and not facts.run_in_team(run, self.scope["team"]):
                continue
            if series.has_events(lo, hi):
                chosen.append((run, series))
        return chosen

    @staticmethod
    def still_busy(series: RunSeries, at: float, active_within: float) -> bool:
        """Not stopped, and logged a non-commit event within `active_within` of `at`."""
        if series.stopped_at is not None and series.stopped_at <= at:
            return False
        busy = series.last_busy(at)
        return busy is not None and at - (busy + MINUTE) <= active_within


class CommitStall(RunRule):
    kind = RuleKind.COMMIT_STALL
    needs_threshold = False
    known_params = ("min_gap", "factor", "floor", "lookback", "active_within", "min_commits")

    def configure(self) -> None:
        self.min_gap = self.duration("min_gap", "1m") if "min_gap" in self.params else None
        self.factor = self.number("factor") if "factor" in self.params else None
        if (self.min_gap is None) == (self.factor is None):
            raise RuleError(
                "commit_stall needs params.min_gap (fixed), or params.factor and params.floor"
                " (adaptive), not both"
            )
        if self.factor is not None and self.factor <= 0:
            raise RuleError("params.factor must be positive")
        self.floor = self.duration("floor", "5m")
        self.lookback = self.duration("lookback", "3h")
        self.min_commits = max(2, int(self.number("min_commits", 3)))
        self.active_within = self.duration("active_within", "15m")

    def horizon(self) -> timedelta:
        return self.lookback + self.active_within + timedelta(hours=6)

    def gap_threshold(self, series: RunSeries, last: float) -> tuple[float, float | None]:
        """(threshold in seconds, the run's expected gap or None)."""
        if self.min_gap is not None:
            return self.min_gap.total_seconds(), None
        assert self.factor is not None
        span = self.lookback.total_seconds()
        times = series.commit_times
        hi = int(np.searchsorted(times, last, side="right"))
        lo = int(np.searchsorted(times, last - span, side="right"))
        if hi - lo < self.min_commits:
            return math.inf, None  # too little history to know the run's pace
        expected = (times[hi - 1] - times[lo]) / (hi - lo - 1)
        return max(self.floor.total_seconds(), self.factor * expected), expected

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        now = epoch(at)
        findings = []
        for run, series in self.watched(facts, at, self.horizon()):
            last = series.last_commit(now)
            if last is None:
                first = series.minutes[0] if series.minutes.size else now
                last = float(first)
            threshold, expected = facts.memo(
                ("stall_gap", run, last, self.min_gap, self.factor, self.floor, self.lookback),
                partial(self.gap_threshold, series, last),
            )
            idle = now - last
            busy = self.still_busy(series, now, self.active_within.total_seconds())
            worked_since = (series.last_busy(now) or 0) + MINUTE > last
            stalled = idle > threshold and busy and worked_since
            rate = f"; expected gap {_minutes(expected)}" if expected else ""
            if math.isinf(threshold):
                findings.append(
                    Finding(run, False, idle / 60, "too few recent commits to know the run's pace")
                )
                continue
            findings.append(
                Finding(
                    run,
                    stalled,
                    idle / 60,
                    f"no commit for {_minutes(idle)} while agents keep working"
                    f" (threshold {_minutes(threshold)}{rate})"
                    if stalled
                    else f"last commit {_minutes(idle)} ago (threshold {_minutes(threshold)})",
                    from_epoch(last + threshold) if stalled else None,
                )
            )
        return findings


class CommitDecay(RunRule):
    kind = RuleKind.COMMIT_DECAY
    known_params = ("window", "baseline", "min_commits", "active_within")

    def configure(self) -> None:
        assert self.threshold is not None
        if not 0 < self.threshold < 1:
            raise RuleError("commit_decay threshold is a fraction between 0 and 1, e.g. 0.3")
        self.window = self.duration("window", "1h")
        self.baseline = self.duration("baseline", "3h")
        self.min_commits = self.number("min_commits", 10)
        self.active_within = self.duration("active_within", "15m")

    def horizon(self) -> timedelta:
        return self.window + self.baseline + timedelta(minutes=5)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        assert self.threshold is not None
        now = epoch(at)
        window, baseline = self.window.total_seconds(), self.baseline.total_seconds()
        findings = []
        for run, series in self.watched(facts, at, self.window):
            recent = series.commits_between(now - window, now)
            earlier = series.commits_between(now - window - baseline, now - window)
            recent_per_h = recent / window * 3600
            earlier_per_h = earlier / baseline * 3600
            ratio = recent_per_h / earlier_per_h if earlier_per_h else None
            decayed = (
                earlier >= self.min_commits
                and ratio is not None
                and ratio < self.threshold
                and self.still_busy(series, now, self.active_within.total_seconds())
            )
            findings.append(
                Finding(
                    run,
                    decayed,
                    ratio,
                    f"{recent_per_h:.3g} commits/h over the last {_minutes(window)},"
                    f" {earlier_per_h:.3g}/h before"
                    + (f" ({ratio:.0%} of it; threshold {self.threshold:.0%})" if ratio else ""),
                )
            )
        return findings


class ErrorDrift(RunRule):
    kind = RuleKind.ERROR_DRIFT
    needs_threshold = False
    known_params = ("window", "bucket")

    def configure(self) -> None:
        self.window = self.duration("window", "24h")
        bucket = self.duration("bucket", "1h").total_seconds()
        if bucket < MINUTE or bucket % MINUTE:
            raise RuleError("params.bucket must be a whole number of minutes")
        self.bucket = int(bucket)
        if self.window.total_seconds() < 3 * self.bucket:
            raise RuleError("params.window must hold at least 3 buckets")

    def horizon(self) -> timedelta:
        return self.window + timedelta(seconds=self.bucket)

    def drift_of(self, series: RunSeries, end: float) -> dict[str, Any]:
        """The drift test over the whole buckets of the window ending at `end` (a bucket
        boundary): a bucket still filling would be judged on a part of its attempts."""
        first = math.floor((end - self.window.total_seconds()) / self.bucket) * self.bucket
        edges = np.arange(first, end, self.bucket)
        keep = (series.minutes >= first) & (series.minutes < end)
        which = np.searchsorted(edges, series.minutes[keep], side="right") - 1
        attempts = np.bincount(which, series.attempts[keep], minlength=edges.size)
        errors = np.bincount(which, series.errors[keep], minlength=edges.size)
        for times, is_error in ((series.commit_times, False), (series.failed_commit_times, True)):
            chosen = times[(times >= first) & (times < end)]
            idx = np.searchsorted(edges, chosen, side="right") - 1
            attempts += np.bincount(idx, minlength=edges.size)
            if is_error:
                errors += np.bincount(idx, minlength=edges.size)
        points = [
            {"t": from_epoch(float(t)), "attempts": a, "errors": e, "rate": e / a if a else 0.0}
            for t, a, e in zip(edges.tolist(), attempts.tolist(), errors.tolist(), strict=True)
        ]
        return drift(points)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        now = epoch(at)
        minimum = self.threshold or 0.0
        findings = []
        for run, series in self.watched(facts, at, self.window):
            end = math.floor(now / self.bucket) * self.bucket
            result = facts.memo(
                ("drift", run, self.window, self.bucket, end),
                partial(self.drift_of, series, end),
            )
            slope = result["slope_per_hour"]
            rising = result["trend"] == "rising" and slope is not None and slope >= minimum
            p = result["p_value"]
            findings.append(
                Finding(
                    run,
                    rising,
                    slope,
                    f"error rate {result['trend']}"
                    + (f", {slope * 100:+.2f} points/h" if slope is not None else "")
                    + (f" (p = {p:.2g}, {result['buckets']} buckets)" if p is not None else ""),
                )
            )
        return findings


# --- spend ------------------------------------------------------------------------------


class DailySpend(Rule):
    kind = RuleKind.DAILY_SPEND
    subject_noun = "team"
    scopes = ("run", "team")
    needs_threshold = False

    def configure(self) -> None:
        if self.threshold is None and "team" not in self.scope:
            raise RuleError("daily_spend needs a threshold in USD (or a team with a budget)")
        if self.threshold is not None and self.threshold < 0:
            raise RuleError("daily_spend threshold is USD and not negative")

    def horizon(self) -> timedelta:
        return timedelta(days=1)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        now = epoch(at)
        team = facts.team(self.scope["team"]) if "team" in self.scope else None
        budget = self.threshold
        if budget is None and team is not None and team.daily_budget_usd is not None:
            budget = float(team.daily_budget_usd)
        if budget is None or ("team" in self.scope and team is None):
            return []
        subject = self.scope.get("team") or self.scope.get("run") or "all"
        day = at.astimezone(UTC).date()
        spent = 0.0
        for hour_end, run, source, usd in facts.spend_by_hour(day):
            if hour_end > now + 1e-3:
                continue
            if "run" in self.scope and run != self.scope["run"]:
                continue
            if team is not None and not facts.spend_in_team(team, run, source):
                continue
            spent += usd
        return [
            Finding(
                subject,
                spent > budget,
                round(spent, 6),
                f"${spent:,.2f} spent on {day.isoformat()} (UTC) of a ${budget:,.2f} budget",
            )
        ]


RULES: dict[str, type[Rule]] = {
    cls.kind.value: cls
    for cls in (
        PreemptionRate,
        KvUsage,
        CommitStall,
        CommitDecay,
        ErrorDrift,
        TargetDown,
        DailySpend,
    )
}


def build_rule(
    kind: str,
    threshold: float | None,
    scope: dict[str, Any] | None,
    params: dict[str, Any] | None,
    for_seconds: int = 0,
) -> Rule:
    cls = RULES.get(kind)
    if cls is None:
        raise RuleError(f"unknown rule kind {kind!r} (known: {', '.join(RULES)})")
    if not isinstance(scope or {}, dict) or not isinstance(params or {}, dict):
        raise RuleError("scope and params must be JSON objects")
    return cls(threshold, scope, params, for_seconds)
