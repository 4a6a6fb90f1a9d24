"""Whether a run's error rate drifts: the Mann-Kendall trend test of the rate against
time, with the Theil-Sen slope, over the buckets of an error rate.

Pure: points in, a verdict out; never queries. analytics.runs.queries.error_rate() answers
with it, and the alerts' error_drift rule judges its own buckets with it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

# Drift is decided by the p-value alone, at a strict level: a flat run scanned often must
# rarely be called drifting. Up to this many buckets the p-value is exact (the
# distribution of Mann-Kendall's S over every order of the rates); above it, the normal
# approximation with the ties correction.
DRIFT_ALPHA = 0.01
DRIFT_EXACT_MAX_BUCKETS = 10


class Trend(StrEnum):
    FLAT = "flat"
    RISING = "rising"
    FALLING = "falling"


@dataclass(frozen=True)
class ErrorPoint:
    """One bucket of an error rate: its start, attempts, errors and errors / attempts
    (0.0 for a bucket without attempts)."""

    t: datetime
    attempts: int
    errors: int
    rate: float


@dataclass(frozen=True)
class Drift:
    """The verdict over the `buckets` that had attempts: no slope nor p-value under 3."""

    trend: Trend
    slope_per_hour: float | None
    p_value: float | None
    buckets: int
    min_buckets: int
    alpha: float


def drift(points: Sequence[ErrorPoint]) -> Drift:
    """Mann-Kendall trend test of rate against time and the Theil-Sen slope, over buckets
    that had attempts (an empty bucket has no rate). `min_buckets` is the fewest buckets
    with which any trend can reach p < alpha (6 at 0.01: 5 buckets never can)."""
    measured = [p for p in points if p.attempts > 0]
    buckets, min_buckets = len(measured), _fewest_buckets_for(DRIFT_ALPHA)
    if len(measured) < 3:
        return Drift(Trend.FLAT, None, None, buckets, min_buckets, DRIFT_ALPHA)
    hours = [p.t.timestamp() / 3600 for p in measured]
    rates = [p.rate for p in measured]
    if len(set(rates)) == 1:
        return Drift(Trend.FLAT, 0.0, 1.0, buckets, min_buckets, DRIFT_ALPHA)
    from scipy import stats  # here, not at the top: importing it costs every command ~1 s

    s, p_value = mann_kendall(rates)
    slope = float(stats.theilslopes(rates, hours).slope)
    trend = Trend.FLAT
    if p_value < DRIFT_ALPHA:
        trend = Trend.RISING if s > 0 else Trend.FALLING
    return Drift(trend, slope, p_value, buckets, min_buckets, DRIFT_ALPHA)


def mann_kendall(values: list[float]) -> tuple[int, float]:
    """Mann-Kendall's S of values in time order and its two-sided p-value, P(|S| >= |s|):
    exact up to DRIFT_EXACT_MAX_BUCKETS values (ties included: S over every distinct order
    of the same values), else the normal approximation with the ties correction of the
    variance and a continuity correction (Hirsch, Slack and Smith 1982)."""
    n = len(values)
    s = sum(
        (values[j] > values[i]) - (values[j] < values[i])
        for i in range(n - 1)
        for j in range(i + 1, n)
    )
    ties = list(Counter(values).values())
    if n <= DRIFT_EXACT_MAX_BUCKETS:
        return s, _exact_p(n, ties, s)
    variance = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties)) / 18
    z = 0.0 if s == 0 else (s - math.copysign(1, s)) / math.sqrt(variance)
    return s, math.erfc(abs(z) / math.sqrt(2))


def _exact_p(n: int, ties: list[int], s: int) -> float:
    """P(|S| >= |s|) when every distinct order of the values is equally likely. S is the
    untied pairs minus twice the inversions, and the inversions of a multiset's orders
    are counted by the q-multinomial coefficient [n]_q! / prod [t]_q! (MacMahon)."""
    inversions = _q_factorial(n)
    for t in ties:
        inversions = _divide_exactly(inversions, _q_factorial(t))
    untied_pairs = n * (n - 1) // 2 - sum(t * (t - 1) // 2 for t in ties)
    total = sum(inversions)
    extreme = sum(c for k, c in enumerate(inversions) if abs(untied_pairs - 2 * k) >= abs(s))
    return extreme / total


def _q_factorial(n: int) -> list[int]:
    """Coefficients of [n]_q! = prod over k <= n of (1 + q + ... + q^(k-1))."""
    poly = [1]
    for k in range(2, n + 1):
        out = [0] * (len(poly) + k - 1)
        for i, c in enumerate(poly):
            for j in range(k):
                out[i + j] += c
        poly = out
    return poly


def _divide_exactly(dividend: list[int], divisor: list[int]) -> list[int]:
    """dividend / divisor for integer polynomials that divide exactly (leading coefficient 1)."""
    rest = list(dividend)
    quotient = [0] * (len(dividend) - len(divisor) + 1)
    for i in range(len(quotient) - 1, -1, -1):
        c = rest[i + len(divisor) - 1]
        quotient[i] = c
        for j, d in enumerate(divisor):
            rest[i + j] -= c * d
    return quotient


def _fewest_buckets_for(alpha: float) -> int:
    """The fewest untied buckets whose most extreme S has an exact p-value below alpha."""
    n = 3
    while 2 / math.factorial(n) >= alpha:
        n += 1
    return n
