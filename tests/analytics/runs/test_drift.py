"""analytics/runs/drift.py: Mann-Kendall verdicts checked against exact values, on its own
and through the error rate that answers with it."""

from datetime import UTC, datetime, timedelta
from itertools import permutations
from math import erfc, factorial, sqrt

import orjson
import pytest

from analytics.runs import drift as run_drift
from analytics.runs import queries as runs
from analytics.runs.drift import DRIFT_ALPHA, Drift, ErrorPoint, Trend, mann_kendall
from ingest.pipelines.agent_events import ingest_body

T0 = 1768384800  # 2026-01-14T10:00:00Z, on an hour boundary


def hourly_run(name: str, errors_per_hour: list[int], attempts_per_hour: int = 10) -> None:
    lines = []
    for hour, errors in enumerate(errors_per_hour):
        for i in range(attempts_per_hour):
            doc = {
                "ts": T0 + hour * 3600 + i * 3600 // attempts_per_hour,
                "run": name,
                "agent": "w",
                "event": "tool_call",
                "ok": i >= errors,
            }
            lines.append(orjson.dumps(doc) + b"\n")
    ingest_body(b"".join(lines))


def test_a_steadily_rising_error_rate_is_rising(lake: object) -> None:
    hourly_run("up", list(range(10)))  # 0%, 10%, ... 90%
    drift = runs.error_rate("up", 3600).drift
    assert drift.trend == "rising"
    assert drift.slope_per_hour == pytest.approx(0.1)
    # tau = 1 over 10 untied points: the exact two-sided p-value is 2 / 10!.
    assert drift.p_value == pytest.approx(2 / factorial(10))


def test_a_falling_error_rate_is_falling(lake: object) -> None:
    hourly_run("down", list(range(9, -1, -1)))
    drift = runs.error_rate("down", 3600).drift
    assert (drift.trend, drift.slope_per_hour) == ("falling", pytest.approx(-0.1))


def test_noise_without_a_trend_is_flat(lake: object) -> None:
    hourly_run("flat", [1, 3, 2, 1, 3, 2, 1, 3, 2, 2])
    drift = runs.error_rate("flat", 3600).drift
    assert drift.trend == "flat"
    assert drift.p_value is not None
    assert drift.p_value > 0.5


def test_the_p_value_alone_decides_even_on_a_short_run(lake: object) -> None:
    # A 6-hour run whose hourly error rate climbs 1 % -> 9 % (100 attempts an hour): S = 15
    # of 15 pairs; exactly one of the 6! orders is as extreme each way: p = 2 / 720.
    hourly_run("six", [1, 3, 4, 6, 7, 9], attempts_per_hour=100)
    drift = runs.error_rate("six", 3600).drift
    assert drift.trend == "rising"
    assert drift.p_value == pytest.approx(2 / factorial(6))
    # With 5 buckets no order can reach p < 0.01: the most extreme has p = 2 / 120.
    hourly_run("five", [1, 3, 4, 6, 7], attempts_per_hour=100)
    drift = runs.error_rate("five", 3600).drift
    assert (drift.trend, drift.p_value) == ("flat", pytest.approx(2 / factorial(5)))
    assert drift.min_buckets == 6


def _brute_force_p(values: list[float]) -> float:
    """P(|S| >= |s|) over every order of the values, counted one by one."""

    def s_of(xs: tuple[float, ...]) -> int:
        return sum((b > a) - (b < a) for i, a in enumerate(xs) for b in xs[i + 1 :])

    observed = abs(s_of(tuple(values)))
    orders = list(permutations(values))
    return sum(abs(s_of(o)) >= observed for o in orders) / len(orders)


@pytest.mark.parametrize(
    "values",
    [
        [0.1, 0.2, 0.2, 0.3, 0.5, 0.4, 0.6],
        [0.0, 0.0, 0.0, 0.1, 0.1, 0.2, 0.3, 0.3],
        [0.3, 0.1, 0.2, 0.1, 0.3, 0.2],
        [0.5, 0.4, 0.4, 0.1],
    ],
)
def test_the_exact_p_value_with_ties_matches_every_order_counted(values: list[float]) -> None:
    _, p_value = mann_kendall(values)
    assert p_value == pytest.approx(_brute_force_p(values))


def test_above_ten_buckets_the_normal_approximation_with_ties_applies() -> None:
    # 12 values rising but for one tied pair: S = 66 pairs - 1 tie = 65. Var(S) =
    # (12 * 11 * 29 - 2 * 1 * 9) / 18 = 3810 / 18; z = (65 - 1) / sqrt(3810 / 18);
    # two-sided p = erfc(z / sqrt 2).
    values = [1.0, 1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]
    s, p_value = mann_kendall([float(v) for v in values])
    assert s == 65
    assert p_value == pytest.approx(erfc(64 / sqrt(3810 / 18) / sqrt(2)))
    # a falling one: S = -66, z = (-66 + 1) / sqrt(12 * 11 * 29 / 18)
    s, p_value = mann_kendall([float(12 - v) for v in range(12)])
    assert s == -66
    assert p_value == pytest.approx(erfc(65 / sqrt(12 * 11 * 29 / 18) / sqrt(2)))


def test_a_constant_rate_is_flat_with_zero_slope(lake: object) -> None:
    hourly_run("same", [2] * 9)
    drift = runs.error_rate("same", 3600).drift
    assert (drift.trend, drift.slope_per_hour, drift.p_value) == ("flat", 0.0, 1.0)


def test_buckets_without_attempts_are_left_out() -> None:
    start = datetime.fromtimestamp(T0, UTC)
    empty = [ErrorPoint(start + timedelta(hours=h), 0, 0, 0.0) for h in range(6)]
    two = [ErrorPoint(start + timedelta(hours=6 + h), 10, h, h / 10) for h in range(2)]
    assert run_drift.drift(empty + two) == Drift(Trend.FLAT, None, None, 2, 6, DRIFT_ALPHA)
