"""Latency quantiles of a vLLM instance: time to first token, inter-token and end-to-end
latency, each the q-quantile per bucket and over the whole window.

Reads the histograms' bucket increases through analytics/serving/series.py and answers
as histogram_quantile(q, sum by (le) (increase(..._bucket))) does, with
analytics/serving/histograms.py; it writes no SQL of its own.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from analytics.serving.histograms import finite_quantile
from analytics.serving.series import Window, read_one
from lib.errors import ParameterError

# The latency names the API and pages take -> the modelled metric that holds the histogram.
LATENCY_METRICS = {"ttft": "ttft", "itl": "itl", "e2e": "e2e"}


@dataclass(frozen=True)
class LatencyPoint:
    t: datetime
    seconds: float | None  # None where the bucket has no observation


@dataclass(frozen=True)
class Latency:
    points: list[LatencyPoint]
    overall: float | None  # over the whole window, in seconds


def latency(
    metric: str, quantile: float, instance: str | None, w: Window, engine: str | None = None
) -> Latency:
    """q-quantile per bucket of the summed bucket increases (all engines), and over the
    whole window, as histogram_quantile(q, sum by (le) (increase(..._bucket)))."""
    if metric not in LATENCY_METRICS:
        raise ParameterError(f"metric must be one of {', '.join(LATENCY_METRICS)}, got {metric!r}")
    if not 0 <= quantile <= 1:
        raise ParameterError(f"quantile must be between 0 and 1, got {quantile}")
    per: dict[datetime, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    overall: dict[float, float] = defaultdict(float)
    for r in read_one(LATENCY_METRICS[metric], instance, engine, w):
        inc = r.increase or 0.0
        le = cast(float, r.le)  # a histogram's rows always carry their bound
        per[r.t][le] += inc
        overall[le] += inc
    points = [
        LatencyPoint(t, finite_quantile(quantile, buckets.items()))
        for t, buckets in sorted(per.items())
    ]
    whole = finite_quantile(quantile, overall.items()) if overall else None
    return Latency(points, whole)
