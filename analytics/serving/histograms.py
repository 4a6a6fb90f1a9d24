"""Quantiles from cumulative histogram buckets, exactly as Prometheus histogram_quantile().

Pure. Same special cases as Prometheus' BucketQuantile (promql/quantile.go): q < 0 ->
-Inf, q > 1 -> +Inf, no +Inf bucket, fewer than two buckets or no observations -> NaN;
buckets with the same bound are merged; one pass then smooths differences too small to
be more than float error (almost.Equal, relative 1e-12) and forces the counts monotonic,
both measured against the last count it accepted; a rank in the +Inf bucket answers the
second-highest bound; the lowest bucket interpolates from 0 (or answers its own bound
when that bound is <= 0). Go's float division never raises: x/0 is +-Inf and 0/0 NaN,
and so it is here, so no bucket set raises.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable

_PRECISION = 1e-12  # Prometheus' smallDeltaTolerance
_MIN_NORMAL = 2.2250738585072014e-308  # math.Float64frombits(0x0010000000000000) in almost.Equal
_MAX_FLOAT = sys.float_info.max


def bucket_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float:
    """q-quantile of cumulative (upper bound, count) buckets, in the buckets' unit."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(buckets, key=lambda b: b[0])
    if not ordered or not math.isinf(ordered[-1][0]) or ordered[-1][0] < 0:
        return math.nan
    bounds, counts = _coalesce(ordered)
    _ensure_monotonic_and_ignore_small_deltas(counts)
    if len(bounds) < 2:
        return math.nan
    observations = counts[-1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = _search(counts, rank)
    if b == len(bounds) - 1:
        return bounds[-2]
    if b == 0 and bounds[0] <= 0:
        return bounds[0]
    start, end, count = 0.0, bounds[b], counts[b]
    if b > 0:
        start = bounds[b - 1]
        count -= counts[b - 1]
        rank -= counts[b - 1]
    return start + (end - start) * _divide(rank, count)


def finite_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float | None:
    """bucket_quantile(), or None where it is not a number an answer can carry (NaN, +-Inf:
    no observations, no +Inf bucket)."""
    value = bucket_quantile(q, buckets)
    return value if math.isfinite(value) else None


def _search(counts: list[float], rank: float) -> int:
    """Go's sort.Search over every bucket but +Inf: the first whose count reaches the rank
    (written out so that a NaN count steers the search as it does in Go)."""
    lo, hi = 0, len(counts) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if not counts[mid] >= rank:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _coalesce(ordered: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    bounds: list[float] = []
    counts: list[float] = []
    for bound, count in ordered:
        if bounds and bound == bounds[-1]:
            counts[-1] += count
        else:
            bounds.append(bound)
            counts.append(count)
    return bounds, counts


def _ensure_monotonic_and_ignore_small_deltas(counts: list[float]) -> None:
    """Prometheus' ensureMonotonicAndIgnoreSmallDeltas: a count almost equal to the last
    accepted one takes its value (either direction), a lower one is raised to it."""
    prev = counts[0]
    for i in range(1, len(counts)):
        cur = counts[i]
        if cur == prev:
            continue
        if _almost_equal(prev, cur):
            counts[i] = prev
        elif cur < prev:
            counts[i] = prev
        else:
            prev = cur


def _almost_equal(a: float, b: float) -> bool:
    """Prometheus' util/almost.Equal with epsilon 1e-12."""
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    abs_sum = abs(a) + abs(b)
    diff = abs(a - b)
    if a == 0 or b == 0 or abs_sum < _MIN_NORMAL:
        return diff < _PRECISION * _MIN_NORMAL
    return _divide(diff, min(abs_sum, _MAX_FLOAT)) < _PRECISION


def _divide(a: float, b: float) -> float:
    """a / b with IEEE 754 semantics, as Go divides floats: x/0 is +-Inf, 0/0 is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b
