"""Rules over the signals of current vLLM releases, one subject per instance (scope: one
instance, or a team): waiting_capacity, spec_acceptance, slo_attainment, engine_asleep,
corrupted_requests and admission_rejections. Each reads its instance's figures per minute
over the facts' whole range once (Facts.memo: every rule and every evaluation of a
preview shares it), through the serving queries (analytics/serving/signals.py,
spec_decode.py, slo.py: the same numbers the Serving views show), and judges the
`window` of minutes that ends with the last whole minute before the evaluation. What
each kind means and which params it takes is written once, in analytics.alerts.rules.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar, TypeVar

from analytics.alerts.facts import MINUTE, Facts, epoch, floor_minute, from_epoch
from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, RuleError
from analytics.alerts.rules.serving import InstanceRule
from analytics.serving.series import Window
from analytics.serving.signals import counters, gauge_by_label, increase_by_label
from analytics.serving.slo import SloTotals, slo_attainment
from analytics.serving.spec_decode import spec_decode
from analytics.serving.spec_decode import totals as spec_totals

T = TypeVar("T")

SLO_METRICS = ("ttft", "tpot", "e2e")
# Sleep levels vLLM reports (engine_sleep_state's `sleep_state` label): anything but awake.
AWAKE = "awake"


class SignalRule(InstanceRule):
    """A rule judged on one window of minutes ending at the last whole minute."""

    default_window: ClassVar[str] = "15m"
    known_params: ClassVar[tuple[str, ...]] = ("window",)

    def configure(self) -> None:
        window = self.duration("window", self.default_window).total_seconds()
        if window < MINUTE or window % MINUTE:
            raise RuleError("params.window must be a whole number of minutes")
        self.window_s = int(window)
        self.check()

    def check(self) -> None:
        """Kind-specific checks of the threshold and params (RuleError)."""

    def horizon(self) -> timedelta:
        return timedelta(seconds=self.window_s + self.for_seconds) + timedelta(hours=1)

    def window(self, at: datetime) -> Window:
        end = floor_minute(epoch(at))
        return Window(from_epoch(end - self.window_s), from_epoch(end), self.window_s)

    @staticmethod
    def minutes_of(facts: Facts) -> Window:
        """The facts' whole range in minutes: what every figure is read over, once."""
        end = floor_minute(epoch(facts.end)) + MINUTE
        return Window(facts.lo, from_epoch(end), MINUTE)

    @staticmethod
    def within(points: Sequence[T], w: Window) -> list[T]:
        return [p for p in points if w.start <= p.t < w.end]  # type: ignore[attr-defined]

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        w = self.window(at)
        findings = []
        for name in self.subjects(facts, facts.instance_names()):
            finding = self.judge(facts, name, w)
            if finding is not None:
                findings.append(finding)
        return findings

    @abstractmethod
    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        """The finding of one instance over the window (None: nothing to say of it)."""

    def minutes(self) -> str:
        return f"{self.window_s // 60} min"


class WaitingCapacity(SignalRule):
    """Requests waiting for KV-cache capacity (vLLM 0.12+'s waiting by reason)."""

    kind = RuleKind.WAITING_CAPACITY
    default_window = "5m"

    def check(self) -> None:
        assert self.threshold is not None
        if self.threshold < 0:
            raise RuleError("waiting_capacity threshold is a number of requests, not negative")

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        by_reason = facts.memo(
            ("waiting_by_reason", name),
            lambda: gauge_by_label("waiting_by_reason", name, self.minutes_of(facts)),
        )
        points = self.within(by_reason.get("capacity", []), w)
        if not points:
            return Finding(name, False, None, "no waiting-by-reason samples")
        mean = sum(p.mean for p in points) / len(points)
        assert self.threshold is not None
        return Finding(
            name,
            mean >= self.threshold,
            mean,
            f"{mean:.3g} requests waiting for KV capacity on average over {self.minutes()}"
            f" (threshold {self.threshold:g})",
        )


class SpecAcceptance(SignalRule):
    """Speculative decoding's acceptance rate (accepted / draft tokens) below a fraction."""

    kind = RuleKind.SPEC_ACCEPTANCE
    known_params = ("window", "min_draft_tokens")

    def check(self) -> None:
        assert self.threshold is not None
        if not 0 < self.threshold <= 1:
            raise RuleError("spec_acceptance threshold is a fraction between 0 and 1, e.g. 0.3")
        self.min_draft_tokens = self.number("min_draft_tokens", 100)

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        answer = facts.memo(
            ("spec_decode", name), lambda: spec_decode(name, self.minutes_of(facts))
        )
        points = self.within(answer.points, w)
        totals = spec_totals(
            sum(p.drafts for p in points),
            sum(p.draft_tokens for p in points),
            sum(p.accepted_tokens for p in points),
        )
        if totals.draft_tokens < self.min_draft_tokens or totals.acceptance_rate is None:
            return Finding(
                name,
                False,
                totals.acceptance_rate,
                f"{totals.draft_tokens:.0f} draft tokens in {self.minutes()}: too few to judge",
            )
        assert self.threshold is not None
        rate = totals.acceptance_rate
        return Finding(
            name,
            rate < self.threshold,
            rate,
            f"{rate:.1%} of {totals.draft_tokens:.0f} draft tokens accepted over"
            f" {self.minutes()} (threshold {self.threshold:.0%})",
        )


class SloAttainment(SignalRule):
    """The share of requests under a latency target below a fraction."""

    kind = RuleKind.SLO_ATTAINMENT
    known_params = ("window", "metric", "target", "min_requests")

    def check(self) -> None:
        assert self.threshold is not None
        if not 0 < self.threshold <= 1:
            raise RuleError("slo_attainment threshold is a fraction between 0 and 1, e.g. 0.95")
        self.metric = str(self.params.get("metric", "ttft"))
        if self.metric not in SLO_METRICS:
            raise RuleError(f"params.metric must be one of {', '.join(SLO_METRICS)}")
        if "target" not in self.params:
            raise RuleError("slo_attainment needs params.target, a duration such as 500ms")
        self.target_s = self.duration("target", "1s").total_seconds()
        if self.target_s <= 0:
            raise RuleError("params.target must be a positive duration")
        self.min_requests = self.number("min_requests", 20)

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        answer = facts.memo(
            ("slo", self.metric, self.target_s, name),
            lambda: slo_attainment(self.metric, self.target_s, name, self.minutes_of(facts)),
        )
        points = self.within(answer.points, w)
        attained, total = sum(p.attained for p in points), sum(p.total for p in points)
        totals = SloTotals(attained, total, attained / total if total > 0 else None)
        if totals.total < self.min_requests or totals.ratio is None:
            return Finding(
                name,
                False,
                totals.ratio,
                f"{totals.total:.0f} requests in {self.minutes()}: too few to judge",
            )
        assert self.threshold is not None
        approx = "" if answer.target_is_bucket_bound else " (target between buckets: a lower bound)"
        return Finding(
            name,
            totals.ratio < self.threshold,
            totals.ratio,
            f"{totals.ratio:.1%} of {totals.total:.0f} requests had {self.metric} under"
            f" {self.target_s:g} s over {self.minutes()}{approx} (threshold {self.threshold:.0%})",
        )


class EngineAsleep(SignalRule):
    """An engine put to sleep (vLLM's sleep mode: weights offloaded or discarded)."""

    kind = RuleKind.ENGINE_ASLEEP
    needs_threshold = False
    default_window = "5m"

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        by_state = facts.memo(
            ("sleep_state", name),
            lambda: gauge_by_label("sleep_state", name, self.minutes_of(facts)),
        )
        recent = {state: self.within(points, w) for state, points in by_state.items()}
        recent = {state: points for state, points in recent.items() if points}
        # The state of the newest minute with samples in the window.
        newest = max((points[-1].t for points in recent.values()), default=None)
        asleep = sorted(
            state
            for state, points in recent.items()
            if state != AWAKE and points[-1].t == newest and points[-1].max >= 1
        )
        if not recent:
            return Finding(name, False, None, "no sleep-state samples")
        return Finding(
            name,
            bool(asleep),
            float(len(asleep)),
            f"engine asleep: {', '.join(asleep)}" if asleep else "awake",
        )


class CorruptedRequests(SignalRule):
    """Requests vLLM finished with corrupted output (NaNs in the logits)."""

    kind = RuleKind.CORRUPTED_REQUESTS
    default_window = "5m"

    def check(self) -> None:
        assert self.threshold is not None
        if self.threshold < 0:
            raise RuleError("corrupted_requests threshold is a number of requests, not negative")

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        rows = facts.memo(
            ("corrupted", name),
            lambda: counters(("corrupted_requests",), name, self.minutes_of(facts)),
        )
        total = sum(p.increase for p in self.within(rows["corrupted_requests"], w))
        assert self.threshold is not None
        return Finding(
            name,
            total > self.threshold,
            total,
            f"{total:.0f} corrupted requests over {self.minutes()} (threshold {self.threshold:g})",
        )


class AdmissionRejections(SignalRule):
    """Requests vLLM's frontend refused at its queue caps (vLLM 0.32+), by reason."""

    kind = RuleKind.ADMISSION_REJECTIONS
    default_window = "5m"

    def check(self) -> None:
        assert self.threshold is not None
        if self.threshold < 0:
            raise RuleError("admission_rejections threshold is a number of requests, not negative")

    def judge(self, facts: Facts, name: str, w: Window) -> Finding | None:
        by_reason = facts.memo(
            ("admission_rejections", name),
            lambda: increase_by_label("admission_rejections", name, self.minutes_of(facts)),
        )
        if not by_reason:
            return Finding(name, False, None, "no admission-rejection counter (vLLM 0.32+)")
        totals = {
            reason or "no reason": sum(p.increase for p in self.within(points, w))
            for reason, points in sorted(by_reason.items())
        }
        total = sum(totals.values())
        reasons = ", ".join(f"{reason} {n:.0f}" for reason, n in totals.items() if n)
        assert self.threshold is not None
        return Finding(
            name,
            total > self.threshold,
            total,
            f"{total:.0f} requests refused at admission over {self.minutes()}"
            f"{f' ({reasons})' if reasons else ''} (threshold {self.threshold:g})",
        )
