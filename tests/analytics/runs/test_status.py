"""analytics/runs/status.py: finished, stalled, active or idle."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.runs.status import RunState, RunStatus, run_statuses
from tests.dashboard.runs_data import load_runs

pytestmark = pytest.mark.usefixtures("lake")

LAST_EVENT = datetime(2026, 1, 14, 12, 30, tzinfo=UTC)


def test_a_run_still_logging_with_no_commit_for_min_gap_is_stalled(lake: Path) -> None:
    load_runs()
    tiny = run_statuses(now=LAST_EVENT)["tiny"]
    assert tiny == RunStatus(
        state=RunState.STALLED,
        first_ts=datetime(2026, 1, 14, 10, tzinfo=UTC),
        last_ts=LAST_EVENT,
        attempts=9,
        last_commit=datetime(2026, 1, 14, 11, 40, tzinfo=UTC),
        stopped_at=None,
        stalled_since=datetime(2026, 1, 14, 11, 40, tzinfo=UTC),
        stalled_minutes=50.0,
    )


def test_below_min_gap_a_run_is_active_while_recent_and_idle_after(lake: Path) -> None:
    load_runs()
    gap = timedelta(hours=1)
    assert (
        run_statuses(gap, run="tiny", now=LAST_EVENT + timedelta(minutes=15))["tiny"].state
        == RunState.ACTIVE
    )
    assert (
        run_statuses(gap, run="tiny", now=LAST_EVENT + timedelta(minutes=16))["tiny"].state
        == RunState.IDLE
    )


def test_a_run_whose_root_stopped_is_finished(lake: Path) -> None:
    load_runs()
    done = run_statuses(run="done")
    assert list(done) == ["done"]
    assert (done["done"].state, done["done"].stopped_at) == (
        RunState.FINISHED,
        datetime(2026, 1, 14, 8, 20, tzinfo=UTC),
    )
    assert run_statuses(run="nope") == {}
