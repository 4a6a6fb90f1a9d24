"""analytics/run_charts.py: the drift line and its words."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from analytics.runs.charts import drift_line, drift_text, rate_axis_top

T0 = datetime(2026, 1, 14, 10, tzinfo=UTC)


def test_the_drift_line_goes_through_the_median_with_the_theil_sen_slope() -> None:
    times = [T0 + timedelta(hours=h) for h in range(4)]
    points: list[dict[str, Any]] = [
        {"t": t, "attempts": 10, "rate": r}
        for t, r in zip(times, [0.1, 0.2, 0.3, 0.4], strict=True)
    ]
    drift = {"slope_per_hour": 0.1}
    line = drift_line(points, drift, times)
    assert line == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert drift_line(points[:2], drift, [T0]) is None
    assert drift_line(points, {"slope_per_hour": None}, [T0]) is None


def test_drift_text_says_the_verdict_slope_and_p_value() -> None:
    rising = {
        "trend": "rising",
        "slope_per_hour": 0.0121,
        "p_value": 3.5e-17,
        "buckets": 120,
        "min_buckets": 6,
    }
    assert drift_text(rising) == "rising: +1.21 pp/h, p = 3.5e-17"
    few = {"trend": "flat", "slope_per_hour": -0.01, "p_value": 0.5, "buckets": 5, "min_buckets": 6}
    assert drift_text(few) == "flat: -1.00 pp/h, p = 0.5 (5 of 6 buckets needed)"
    empty = {
        "trend": "flat",
        "slope_per_hour": None,
        "p_value": None,
        "buckets": 0,
        "min_buckets": 6,
    }
    assert drift_text(empty) == "flat: too few buckets with attempts"


def test_the_rate_axis_fits_the_rates_with_a_floor_of_five_percent() -> None:
    def points(*rates: float) -> list[dict[str, Any]]:
        return [{"attempts": 10, "rate": r} for r in rates] + [{"attempts": 0, "rate": 0.9}]

    assert rate_axis_top(points(0.0, 0.0)) == 0.05
    assert rate_axis_top(points(0.02, 0.2)) == pytest.approx(0.23)
    assert rate_axis_top(points(0.95)) == 1.0
    assert rate_axis_top([]) == 0.05
