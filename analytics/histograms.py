"""Quantiles from cumulative histogram buckets, exactly as Prometheus histogram_quantile().

Pure. Same special cases as Prometheus' bucketQuantile: q < 0 -> -Inf, q > 1 -> +Inf,
no +Inf bucket, fewer than two buckets or no observations -> NaN; buckets with the same
bound are merged, tiny float errors smoothed and counts forced monotonic; a rank in the
+Inf bucket answers the second-highest bound; the lowest bucket interpolates from 0
(or answers its own bound when that bound is <= 0).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable

_PRECISION = 1e-12


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
    _correct_precision(counts)
    _ensure_monotonic(counts)
    if len(bounds) < 2:
        return math.nan
    observations = counts[-1]
    if observations == 0:
        return math.nan
    rank = q * observations
    # First bucket (excluding +Inf) whose cumulative count reaches the rank.
    b = bisect.bisect_left(counts, rank, 0, len(counts) - 1)
    if b == len(bounds) - 1:
        return bounds[-2]
    if b == 0 and bounds[0] <= 0:
        return bounds[0]
    start, end, count = 0.0, bounds[b], counts[b]
    if b > 0:
        start = bounds[b - 1]
        count -= counts[b - 1]
        rank -= counts[b - 1]
    if count == 0:  # only for q == 0 over an empty lowest bucket: 0/0 is NaN in Go
        return math.nan
    return start + (end - start) * (rank / count)


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


def _correct_precision(counts: list[float]) -> None:
    prev = counts[0]
    for i in range(1, len(counts)):
        cur = counts[i]
        delta = abs(cur - prev)
        if delta == 0:
            continue
        if delta / cur <= _PRECISION:
            counts[i] = prev
        else:
            prev = cur


def _ensure_monotonic(counts: list[float]) -> None:
    highest = counts[0]
    for i in range(1, len(counts)):
        if counts[i] > highest:
            highest = counts[i]
        elif counts[i] < highest:
            counts[i] = highest
