"""Error-rate drift: Mann-Kendall verdicts checked against exact values."""

from math import factorial

import orjson
import pytest

from analytics.queries import runs
from ingest.pipelines.agent_events import ingest_body

T0 = 1768384800  # 2026-01-14T10:00:00Z, on an hour boundary


def hourly_run(name: str, errors_per_hour: list[int], attempts_per_hour: int = 10) -> None:
    lines = []
    for hour, errors in enumerate(errors_per_hour):
        for i in range(attempts_per_hour):
            doc = {
                "ts": T0 + hour * 3600 + i * 60,
                "run": name,
                "agent": "w",
                "event": "tool_call",
                "ok": i >= errors,
            }
            lines.append(orjson.dumps(doc) + b"\n")
    ingest_body(b"".join(lines))


def test_a_steadily_rising_error_rate_is_rising(lake: object) -> None:
    hourly_run("up", list(range(10)))  # 0%, 10%, ... 90%
    drift = runs.error_rate("up", 3600)["drift"]
    assert drift["trend"] == "rising"
    assert drift["slope_per_hour"] == pytest.approx(0.1)
    # tau = 1 over 10 untied points: the exact two-sided p-value is 2 / 10!.
    assert drift["p_value"] == pytest.approx(2 / factorial(10))


def test_a_falling_error_rate_is_falling(lake: object) -> None:
    hourly_run("down", list(range(9, -1, -1)))
    drift = runs.error_rate("down", 3600)["drift"]
    assert (drift["trend"], drift["slope_per_hour"]) == ("falling", pytest.approx(-0.1))


def test_noise_without_a_trend_is_flat(lake: object) -> None:
    hourly_run("flat", [1, 3, 2, 1, 3, 2, 1, 3, 2, 2])
    drift = runs.error_rate("flat", 3600)["drift"]
    assert drift["trend"] == "flat"
    assert drift["p_value"] > 0.5


def test_too_few_buckets_never_claim_a_trend(lake: object) -> None:
    hourly_run("short", [0, 1, 2, 3, 4, 5, 6])  # perfectly rising, but 7 < 8 buckets
    drift = runs.error_rate("short", 3600)["drift"]
    assert drift["trend"] == "flat"
    assert drift["p_value"] == pytest.approx(2 / factorial(7))


def test_a_constant_rate_is_flat_with_zero_slope(lake: object) -> None:
    hourly_run("same", [2] * 9)
    drift = runs.error_rate("same", 3600)["drift"]
    assert (drift["trend"], drift["slope_per_hour"], drift["p_value"]) == ("flat", 0.0, 1.0)
