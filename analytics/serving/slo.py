"""SLO attainment from histogram buckets: the share of requests whose TTFT, per-request
TPOT or end-to-end latency (any latency.py name) stayed under a target, per bucket and
over the window.

attained = the increase of the cumulative bucket whose `le` is the target; when the
target is not a bucket bound, of the largest bound below it (an undercount, said in
`note`, `target_is_bucket_bound` false); total = the increase of the +Inf bucket (of
`_count` where no +Inf bucket was stored). Reads through analytics/serving/series.py; no
SQL of its own.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from analytics.serving.instances import model_instances
from analytics.serving.latency import histogram_metric
from analytics.serving.series import Window, read_series
from lib.errors import ParameterError


@dataclass(frozen=True)
class SloTotals:
    attained: float
    total: float
    ratio: float | None  # attained / total; None without observations


@dataclass(frozen=True)
class SloPoint(SloTotals):
    t: datetime


@dataclass(frozen=True)
class SloAttainment:
    points: list[SloPoint]
    overall: SloTotals
    target_is_bucket_bound: bool
    bound_seconds: float | None  # the bound counted (the largest at or below the target)
    note: str | None  # why the answer is not exact, one line


def _ratio(attained: float, total: float) -> SloTotals:
    return SloTotals(attained, total, attained / total if total > 0 else None)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def slo_attainment(
    metric: str,
    target_seconds: float,
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> SloAttainment:
    """Share of observations at or under `target_seconds`, from the bucket increases."""
    name = histogram_metric(metric)
    if not (math.isfinite(target_seconds) and target_seconds > 0):
        raise ParameterError("target_seconds must be a positive number of seconds")
    rows = read_series(
        (name, f"{name}_count"), instance, engine, w, only=model_instances(model), summed=True
    )
    buckets: dict[datetime, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows[name]:
        if r.le is not None:
            buckets[r.t][r.le] += r.increase or 0.0
    counts: dict[datetime, float] = defaultdict(float)
    for r in rows[f"{name}_count"]:
        counts[r.t] += r.increase or 0.0
    bounds = sorted({le for b in buckets.values() for le in b if math.isfinite(le)})
    exact = next((le for le in bounds if _same(le, target_seconds)), None)
    below = [le for le in bounds if le <= target_seconds]
    bound = exact if exact is not None else (below[-1] if below else None)
    points: list[SloPoint] = []
    for t in sorted(set(buckets) | set(counts)):
        b = buckets.get(t, {})
        attained = b.get(bound, 0.0) if bound is not None else 0.0
        total = b[math.inf] if math.inf in b else counts.get(t, 0.0)
        points.append(SloPoint(**vars(_ratio(attained, total)), t=t))
    overall = _ratio(sum(p.attained for p in points), sum(p.total for p in points))
    note = None
    if exact is None and bounds:
        if bound is None:
            note = (
                f"{target_seconds:g} s is below the lowest bucket bound ({bounds[0]:g} s): "
                "no observation can be counted as under it"
            )
        else:
            note = (
                f"{target_seconds:g} s is not a bucket bound: counted requests under "
                f"{bound:g} s, the largest bound below it (a lower bound on attainment)"
            )
    return SloAttainment(points, overall, exact is not None, bound, note)
