"""analytics/runs/charts.py: the drift line and its words."""

from datetime import UTC, datetime, timedelta

import pytest

from analytics.runs.charts import (
    NO_BUCKETS,
    build_commit_rate_figure,
    build_error_rate_figure,
    drift_line,
    drift_text,
    rate_axis_top,
)
from analytics.runs.drift import Drift, ErrorPoint, Trend
from analytics.runs.queries import CommitPoint, CommitRate, ErrorRate, Stalls

T0 = datetime(2026, 1, 14, 10, tzinfo=UTC)


def verdict(
    trend: Trend, slope_per_hour: float | None, p_value: float | None, buckets: int
) -> Drift:
    return Drift(trend, slope_per_hour, p_value, buckets, min_buckets=6, alpha=0.01)


def test_the_drift_line_goes_through_the_median_with_the_theil_sen_slope() -> None:
    times = [T0 + timedelta(hours=h) for h in range(4)]
    points = [
        ErrorPoint(t, attempts=10, errors=round(r * 10), rate=r)
        for t, r in zip(times, [0.1, 0.2, 0.3, 0.4], strict=True)
    ]
    drift = verdict(Trend.FLAT, 0.1, None, 4)
    line = drift_line(points, drift, times)
    assert line == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert drift_line(points[:2], drift, [T0]) is None
    assert drift_line(points, verdict(Trend.FLAT, None, None, 4), [T0]) is None


def test_drift_text_says_the_verdict_slope_and_p_value() -> None:
    rising = verdict(Trend.RISING, 0.0121, 3.5e-17, 120)
    assert drift_text(rising) == "rising: +1.21 pp/h, p = 3.5e-17"
    few = verdict(Trend.FLAT, -0.01, 0.5, 5)
    assert drift_text(few) == "flat: -1.00 pp/h, p = 0.5 (5 of 6 buckets needed)"
    empty = verdict(Trend.FLAT, None, None, 0)
    assert drift_text(empty) == "flat: too few buckets with attempts"


def test_the_rate_axis_fits_the_rates_with_a_floor_of_five_percent() -> None:
    def points(*rates: float) -> list[ErrorPoint]:
        measured = [ErrorPoint(T0, 10, round(r * 10), r) for r in rates]
        return [*measured, ErrorPoint(T0, 0, 0, 0.9)]

    assert rate_axis_top(points(0.0, 0.0)) == 0.05
    assert rate_axis_top(points(0.02, 0.2)) == pytest.approx(0.23)
    assert rate_axis_top(points(0.95)) == 1.0
    assert rate_axis_top([]) == 0.05


def _drift() -> Drift:
    return verdict(Trend.FLAT, None, None, 0)


def test_the_attempts_and_commit_axes_tick_on_whole_numbers() -> None:
    points = [ErrorPoint(T0, attempts=1, errors=0, rate=0.0)]
    fig = build_error_rate_figure(ErrorRate("r", 3600, points, _drift()))
    assert (fig.layout.yaxis2.tickformat, fig.layout.yaxis2.dtick) == (",d", 1)
    commits = [CommitPoint(T0, 12), CommitPoint(T0 + timedelta(hours=1), 30)]
    rate = CommitRate("r", 3600, commits, total=42, peak=commits[1])
    fig = build_commit_rate_figure(rate, Stalls("r", 1800, [], None))
    assert (fig.layout.yaxis.tickformat, fig.layout.yaxis.dtick) == (",d", 10)  # 30 / 5 = 6
    assert (fig.layout.yaxis2.tickformat, fig.layout.yaxis2.dtick) == (",d", 10)  # 42 / 5


def test_a_range_without_buckets_says_so_and_draws_no_axes() -> None:
    commits = build_commit_rate_figure(
        CommitRate("r", 3600, [], total=0, peak=None), Stalls("r", 1800, [], None)
    )
    errors = build_error_rate_figure(ErrorRate("r", 3600, [], _drift()))
    for fig in (commits, errors):
        assert [a.text.replace("<br>", " ") for a in fig.layout.annotations] == [NO_BUCKETS]
        assert (fig.layout.xaxis.visible, fig.layout.yaxis.visible) == (False, False)
        assert fig.layout.yaxis2.visible is False
