"""analytics/runs/status.py: finished, stalled, active or idle."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from analytics.runs.status import CurrentStall, RunState, RunStatus, current_stall, run_statuses
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
    # Below 2 h: 11:40 (the last commit) to 12:45 is 65 minutes.
    gap = timedelta(hours=2)
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


def test_the_current_stall_counts_to_now_until_the_run_goes_quiet(lake: Path) -> None:
    load_runs()
    later = run_statuses(run="tiny", now=LAST_EVENT + timedelta(minutes=15))["tiny"]
    assert (later.state, later.stalled_minutes) == (RunState.STALLED, 65.0)
    quiet = run_statuses(run="tiny", now=LAST_EVENT + timedelta(minutes=16))["tiny"]
    assert (quiet.state, quiet.stalled_since, quiet.stalled_minutes) == (RunState.IDLE, None, None)


def test_current_stall_is_the_definition_every_page_uses() -> None:
    t0 = datetime(2026, 1, 14, 10, tzinfo=UTC)
    minutes = timedelta(minutes=1)
    base: dict[str, Any] = {
        "first_ts": t0,
        "last_commit": t0 + 10 * minutes,
        "min_gap": 30 * minutes,
    }
    stall = current_stall(**base, last_ts=t0 + 50 * minutes, stopped_at=None, now=t0 + 60 * minutes)
    assert stall == CurrentStall(t0 + 10 * minutes, 50.0)
    # Nothing logged since the commit; the root stopped; not yet min_gap; quiet too long.
    assert (
        current_stall(**base, last_ts=t0 + 10 * minutes, stopped_at=None, now=t0 + 60 * minutes)
        is None
    )
    assert (
        current_stall(**base, last_ts=t0 + 50 * minutes, stopped_at=t0, now=t0 + 60 * minutes)
        is None
    )
    assert (
        current_stall(**base, last_ts=t0 + 30 * minutes, stopped_at=None, now=t0 + 39 * minutes)
        is None
    )
    assert (
        current_stall(**base, last_ts=t0 + 50 * minutes, stopped_at=None, now=t0 + 66 * minutes)
        is None
    )
    # Before any commit it counts from the first event.
    first = current_stall(
        first_ts=t0,
        last_commit=None,
        min_gap=30 * minutes,
        last_ts=t0 + 40 * minutes,
        stopped_at=None,
        now=t0 + 45 * minutes,
    )
    assert first == CurrentStall(t0, 45.0)
