"""Rules over vLLM instances, one subject per instance (scope: one instance, or a team by
the scrape target's `team` label): preemption_rate, kv_usage, target_down. They read the
per-minute series and the scrapes that analytics.alerts.facts loaded; what each kind
means and which params it takes is written once, in analytics.alerts.rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import numpy as np

from analytics.alerts.facts import MINUTE, Facts, Ints, epoch, floor_minute, from_epoch
from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, Rule, RuleError, format_span


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

    @staticmethod
    def _last_sampled(facts: Facts, name: str) -> Ints:
        """Per minute of the series: the index of the latest minute up to it with KV
        samples (-1: none yet)."""

        def compute() -> Ints:
            means = facts.instances[name].kv_usage
            index = np.where(np.isnan(means), -1, np.arange(means.size))
            return np.maximum.accumulate(index) if index.size else index

        return facts.memo(("kv_last_sampled", name), compute)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        assert self.threshold is not None
        findings = []
        minute = floor_minute(epoch(at))
        # Stored scrapes lag by up to the commit lag: the newest minute with samples stands
        # in for the current one while a healthy target's could be that old (and the minute
        # before it, which a scrape interval may straddle).
        oldest = floor_minute(epoch(at) - facts.commit_lag_s) - MINUTE
        for name in self.subjects(facts, sorted(facts.instances)):
            series = facts.instances[name]
            n = int(np.searchsorted(series.minutes, minute, side="right"))
            last = int(self._last_sampled(facts, name)[n - 1]) if n else -1
            if last < 0 or series.minutes[last] < oldest:
                findings.append(Finding(name, False, None, "no KV-cache samples"))
                continue
            means = series.kv_usage
            value = float(means[last])
            active = value >= self.threshold
            since = None
            if active:
                # Back to the first minute of the streak; a minute without samples ends it.
                i = last
                while (
                    i > 0
                    and series.minutes[i - 1] == series.minutes[i] - MINUTE
                    and means[i - 1] >= self.threshold
                ):
                    i -= 1
                since = from_epoch(float(series.minutes[i]))
            findings.append(
                Finding(
                    name,
                    active,
                    value,
                    f"KV-cache usage {value:.1%}, the minute's mean"
                    f" (threshold {self.threshold:.0%})",
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
        """How long without a stored scrape a target is down: `stale` (default 3 of its
        intervals, at least a minute) on top of the commit lag, as long as a healthy
        target's newest stored scrape can be old (so a healthy target never flaps)."""
        if self.stale is not None:
            return self.stale.total_seconds() + facts.commit_lag_s
        target = facts.targets.get(name)
        if target is None:
            return None
        return max(60.0, 3.0 * target.interval_seconds) + facts.commit_lag_s

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
                            f"scrapes failing for {format_span(now - failed_from)}",
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
                            f"not scraped for {format_span(now - times[-1])}",
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
                        f"not scraped for {format_span(now - known_from)}"
                        if down
                        else "new target",
                        from_epoch(known_from + stale) if down else None,
                    )
                )
        return findings
