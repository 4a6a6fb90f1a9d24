"""Alert rules, one class per kind: each reads its threshold, scope and params once
(raising RuleError with a one-line reason when they make no sense) and `evaluate(facts,
at)` returns one Finding per subject it watches: is the condition true at `at`, the value
behind it, a one-line summary, and when the data says the condition began to hold.

The state machine (ok -> pending -> firing -> resolved, `for`) is analytics.alerts.state's,
and notifications analytics.alerts.engine's; rules only answer "is it true now, and since
when".

This package owns the registry (RULES, build_rule) and these descriptions, which the rule
editor shows; the classes live by what they watch: serving.py (instances), runs.py,
spend.py, signals.py (current vLLM's signals), all built on base.py (Rule, Finding, RuleError), which imports none of them.

Kinds, thresholds and params (durations are strings like `5m`, or numbers of seconds):
- preemption_rate: threshold preemptions per second over `window` (default 5m), per
  instance; counters are reset-adjusted at load, so a restart is never a burst.
- kv_usage: threshold a fraction 0..1; true while the minute's mean KV-cache usage (the
  mean of its scrapes, each scrape's the mean over the instance's engines) is at or above
  it: the newest minute with samples (its scrapes stored so far), while it is within the
  commit lag (below) of now; a minute without samples ends the streak.
- commit_stall: no landed commit for longer than `min_gap` (fixed), or than `factor` x the
  run's mean gap between commits over `lookback` (default 3h) before its last commit, but
  at least `floor` (adaptive; a run with fewer than `min_commits`, default 3, in that
  lookback has no known pace yet and is not judged); only while the run still logs other
  events (within `active_within`, default 15m, as the contract defines a stall) and has
  not stopped.
- commit_decay: threshold a fraction; the commit rate over `window` (default 1h) fell
  below that fraction of the rate over the `baseline` (default 3h) before it, the
  baseline having at least `min_commits` (default 10), while the run is still busy.
- error_drift: the per-`bucket` (default 1h) error rate over the whole buckets of
  `window` (default 24h) before now has
  a significant rising trend (Mann-Kendall, as the error-rate API) with a Theil-Sen slope
  per hour of at least the threshold (default 0).
- target_down: the last scrape failed, or a configured target has not been scraped for
  `stale` (default 3 intervals, at least 1m) on top of the commit lag (scrapes are stored
  a minute at a time: FLEETSCOPE_SERVING_FLUSH_SECONDS + FLEETSCOPE_SCRAPE_SECONDS, 75 s
  by default), so a healthy target never leaves ok.
- waiting_capacity: threshold requests; the mean number of requests waiting for KV-cache
  capacity (vLLM 0.12+'s waiting by reason `capacity`) over `window` (default 5m) is at or
  above it; with `for`, a sustained backlog.
- spec_acceptance: threshold a fraction; speculative decoding's acceptance rate (accepted /
  draft tokens) over `window` (default 15m) fell below it, judged only with at least
  `min_draft_tokens` (default 100) drafted.
- slo_attainment: threshold a fraction; the share of requests whose `metric` (ttft, tpot
  or e2e, default ttft) stayed under `target` (a duration, e.g. 500ms) over `window`
  (default 15m), from the histogram buckets, fell below it; judged only with at least
  `min_requests` (default 20) requests; a target between bucket bounds counts the bound
  below it (a lower bound, said in the summary).
- engine_asleep: no threshold; an engine of the instance reported a sleep level (vLLM's
  sleep mode: weights offloaded or discarded) in the newest minute of `window` (default
  5m). An engine that does not answer at all is target_down's.
- corrupted_requests: threshold requests; more requests than it finished with corrupted
  output (NaNs in the logits) over `window` (default 5m).
- admission_rejections: threshold requests; more requests than it refused at admission
  (vLLM 0.32+'s `vllm:admission_rejections_total`, HTTP 503 at --max-num-queued-reqs or
  --max-num-queued-tokens; the summary names each reason) over `window` (default 5m).
- daily_spend: threshold USD (a team scope without one uses the team's daily budget);
  token spend of the UTC day so far, logged or priced as the cost report prices it.
  `group_by` `person` or `team` (the telemetry's person, or team name) gives a finding per
  person or team that spent that day, each firing over the threshold (needed then).

Scopes: {} (every run or instance, or everything for daily_spend), {"run": name},
{"instance": name}, {"team": name} (runs by the team's run patterns, instances by the
scrape target's `team` label, spend by the team's run and source patterns).
A rule of a team watches only what that team sees, whatever its scope: `{}` is every run
and instance of the team (a rule of no team watches everything).
"""

from __future__ import annotations

import re
from typing import Any

from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, Rule, RuleError
from analytics.alerts.rules.runs import CommitDecay, CommitStall, ErrorDrift
from analytics.alerts.rules.serving import KvUsage, PreemptionRate, TargetDown
from analytics.alerts.rules.signals import (
    AdmissionRejections,
    CorruptedRequests,
    EngineAsleep,
    SloAttainment,
    SpecAcceptance,
    WaitingCapacity,
)
from analytics.alerts.rules.spend import DailySpend

__all__ = ["RULES", "Finding", "Rule", "RuleError", "build_rule", "descriptions"]


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
        WaitingCapacity,
        SpecAcceptance,
        SloAttainment,
        EngineAsleep,
        CorruptedRequests,
        AdmissionRejections,
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


def descriptions() -> tuple[dict[str, str], str]:
    """Each kind's paragraph ("- kind: ...", continued on indented lines) and the
    "Scopes:" paragraph of this docstring, so the rule editor says what the code says."""
    doc = __doc__ or ""
    kinds: dict[str, list[str]] = {}
    scopes: list[str] = []
    current: list[str] | None = None
    for line in doc.splitlines():
        item = re.match(r"^- (\w+): (.*)$", line)
        if item and item.group(1) in RuleKind.values:
            current = kinds.setdefault(item.group(1), [])
            current.append(item.group(2))
        elif line.startswith("Scopes:"):
            current = scopes
            current.append(line.removeprefix("Scopes:").strip())
        elif current is not None and line.strip() and (line.startswith(" ") or current is scopes):
            current.append(line.strip())
        else:
            current = None
    return {kind: " ".join(parts) for kind, parts in kinds.items()}, " ".join(scopes)
