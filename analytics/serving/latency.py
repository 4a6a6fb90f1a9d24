"""Latency of a vLLM instance by phase: queue, prefill, decode, inference (prefill +
decode), end-to-end, time to first token, inter-token latency and the per-request time
per output token; each the q-quantile and the mean per bucket and over the whole window.

Reads the histograms' bucket, sum and count increases through analytics/serving/series.py
and answers as histogram_quantile(q, sum by (le) (increase(..._bucket))) does, with
analytics/serving/histograms.py, and the mean as increase(_sum) / increase(_count); it
writes no SQL of its own. What each name measures is ingest/parsers/vllm.py's FAMILIES.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from analytics.serving.histograms import finite_quantile
from analytics.serving.instances import model_instances
from analytics.serving.series import SeriesRow, Window, read_series
from lib.errors import ParameterError

# The latency names the API and pages take -> the modelled metric that holds the histogram.
# itl: one observation per decode step; tpot: one per request, its mean time per output
# token (vllm:request_time_per_output_token_seconds).
LATENCY_METRICS = {
    "queue": "queue_time",
    "prefill": "prefill_time",
    "decode": "decode_time",
    "inference": "inference_time",
    "e2e": "e2e",
    "ttft": "ttft",
    "itl": "itl",
    "tpot": "tpot",
}


@dataclass(frozen=True)
class LatencyPoint:
    t: datetime
    seconds: float | None  # the quantile; None where the bucket has no observation
    mean_seconds: float | None = None  # increase(_sum) / increase(_count)


@dataclass(frozen=True)
class Latency:
    points: list[LatencyPoint]
    overall: float | None  # the quantile over the whole window, in seconds
    overall_mean: float | None = None  # the mean over the whole window, in seconds


def histogram_metric(metric: str) -> str:
    """The modelled histogram of a latency name, or ParameterError naming the choices."""
    if metric not in LATENCY_METRICS:
        raise ParameterError(f"metric must be one of {', '.join(LATENCY_METRICS)}, got {metric!r}")
    return LATENCY_METRICS[metric]


def _mean(total: float, count: float) -> float | None:
    return total / count if count > 0 else None


def _sums(rows: list[SeriesRow]) -> dict[datetime, float]:
    out: dict[datetime, float] = defaultdict(float)
    for r in rows:
        out[r.t] += r.increase or 0.0
    return out


def latency(
    metric: str,
    quantile: float,
    instance: str | None,
    w: Window,
    engine: str | None = None,
    model: str | None = None,
) -> Latency:
    """q-quantile per bucket of the summed bucket increases (all engines), and over the
    whole window, as histogram_quantile(q, sum by (le) (increase(..._bucket))); means as
    sum(increase(_sum)) / sum(increase(_count)). `model` keeps the instances serving it."""
    name = histogram_metric(metric)
    if not 0 <= quantile <= 1:
        raise ParameterError(f"quantile must be between 0 and 1, got {quantile}")
    rows = read_series(
        (name, f"{name}_sum", f"{name}_count"),
        instance,
        engine,
        w,
        only=model_instances(model),
        summed=True,
    )
    per: dict[datetime, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    overall: dict[float, float] = defaultdict(float)
    for r in rows[name]:
        inc = r.increase or 0.0
        le = cast(float, r.le)  # a histogram's rows always carry their bound
        per[r.t][le] += inc
        overall[le] += inc
    sums, counts = _sums(rows[f"{name}_sum"]), _sums(rows[f"{name}_count"])
    points = [
        LatencyPoint(
            t,
            finite_quantile(quantile, buckets.items()),
            _mean(sums.get(t, 0.0), counts.get(t, 0.0)),
        )
        for t, buckets in sorted(per.items())
    ]
    whole = finite_quantile(quantile, overall.items()) if overall else None
    return Latency(points, whole, _mean(sum(sums.values()), sum(counts.values())))
