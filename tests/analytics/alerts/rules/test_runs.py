"""The run rules against values computed by an independent path: error_drift against the
error-rate API's own drift test, commit_decay against commits counted by hand."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analytics.runs import queries as run_queries
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.rules.findings import evaluate, ingest_events
from tests.analytics.alerts.scenarios import T0

pytestmark = pytest.mark.django_db


def _errors_run(run: str, fractions: list[float]) -> None:
    """One hour per fraction: 100 tool calls, the first fraction x 100 of them failing."""
    events: list[dict[str, object]] = []
    for hour, fraction in enumerate(fractions):
        for n in range(100):
            ts = T0 + timedelta(hours=hour, seconds=30 * n + 5)
            events.append(
                {
                    "ts": ts.isoformat(),
                    "run": run,
                    "agent": "w",
                    "event": "tool_call",
                    "id": f"{hour}-{n}",
                    "ok": n >= round(fraction * 100),
                }
            )
    ingest_events(events)


def test_error_drift_fires_on_a_rising_rate_with_the_apis_own_slope(lake: Path) -> None:
    _errors_run("rising", [0.05 + 0.03 * h + (0.02 if h % 2 else 0) for h in range(12)])
    _errors_run("flat", [0.10 + (0.02 if h % 2 else 0) for h in range(12)])
    found = evaluate("error_drift", None, 12 * 60 + 10, params={"window": "12h"})

    assert found["rising"].active and not found["flat"].active
    api = run_queries.error_rate(
        "rising", 3600, run_queries.TimeRange(T0, T0 + timedelta(hours=12))
    ).drift
    assert api.trend == "rising"
    assert found["rising"].value == pytest.approx(api.slope_per_hour)
    # A minimum slope above the measured one keeps it quiet.
    steep = evaluate("error_drift", 0.05, 12 * 60 + 10, params={"window": "12h"})
    assert not steep["rising"].active


def test_commit_decay_fires_when_the_last_hour_falls_below_a_fraction_of_before(
    lake: Path,
) -> None:
    # 4 h at a commit every 20 s (180/h), then an hour at one every 200 s (18/h).
    events: list[dict[str, object]] = []
    for n in range(4 * 180 + 18):
        seconds = 20 * n if n < 720 else 4 * 3600 + 200 * (n - 719)
        ts = (T0 + timedelta(seconds=seconds)).isoformat()
        events.append({"ts": ts, "run": "decaying", "agent": "w", "event": "commit", "id": f"c{n}"})
    for n in range(5 * 60):
        ts = (T0 + timedelta(minutes=n, seconds=7)).isoformat()
        events.append(
            {"ts": ts, "run": "decaying", "agent": "w", "event": "tool_call", "id": f"t{n}"}
        )
    ingest_events(events)
    scenarios.load_fleet(
        "steady", commit_every_s=20, hours=5, gap_at=timedelta(hours=9), gap=timedelta(0)
    )
    found = evaluate("commit_decay", 0.3, 5 * 60 - 1)
    assert found["decaying"].active and not found["steady"].active
    # In (3:59, 4:59]: two commits at the old pace (3:59:20, 3:59:40) and 17 at the new
    # (4:03:20 ... 4:56:40), against 180/h over the 3 hours before: 19/180.
    assert found["decaying"].value == pytest.approx(19 / 180)
