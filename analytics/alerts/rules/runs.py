"""Rules over agent runs, one subject per run (scope: one run, or a team by its run
patterns): commit_stall, commit_decay, error_drift. A run is watched while it logs
events, and judged on its own commit pace and error rate; what each kind means and which
params it takes is written once, in analytics.alerts.rules.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import partial

import numpy as np

from analytics.alerts.facts import MINUTE, Facts, RunSeries, epoch, from_epoch
from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, Rule, RuleError, format_span
from analytics.runs.drift import Drift, ErrorPoint, drift


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
            rate = f"; expected gap {format_span(expected)}" if expected else ""
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
                    f"no commit for {format_span(idle)} while agents keep working"
                    f" (threshold {format_span(threshold)}{rate})"
                    if stalled
                    else f"last commit {format_span(idle)} ago"
                    f" (threshold {format_span(threshold)})",
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
                    f"{recent_per_h:.3g} commits/h over the last {format_span(window)},"
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

    def drift_of(self, series: RunSeries, end: float) -> Drift:
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
            ErrorPoint(from_epoch(float(t)), a, e, e / a if a else 0.0)
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
            slope = result.slope_per_hour
            rising = result.trend == "rising" and slope is not None and slope >= minimum
            p = result.p_value
            findings.append(
                Finding(
                    run,
                    rising,
                    slope,
                    f"error rate {result.trend}"
                    + (f", {slope * 100:+.2f} points/h" if slope is not None else "")
                    + (f" (p = {p:.2g}, {result.buckets} buckets)" if p is not None else ""),
                )
            )
        return findings
