"""Spend per day with its tokens: each day's calls and tokens by kind equal the hand sums
of team_calls' calls, per UTC day and per day of the reader's zone, and a team's Seen
counts only its runs."""

from __future__ import annotations

from datetime import date

import pytest

from analytics.access.visibility import seen_for_team
from analytics.costs.series import build_spend_series
from lib.access import Seen
from tests.analytics.costs.team_calls import DAY, Teams, load_team_calls


@pytest.fixture
def teams(lake: object, db: None) -> Teams:
    return load_team_calls()


def test_tokens_per_utc_day_are_the_sums_of_the_days_calls(teams: object) -> None:
    series = build_spend_series(DAY, 3, "UTC", seen=Seen.all())
    assert series.days == [date(2026, 1, 12), date(2026, 1, 13), date(2026, 1, 14)]
    assert series.calls == [0, 1, 3]
    assert series.tokens == {
        "input_tokens": [0, 1_000_000, 5_400_000],
        "output_tokens": [0, 100_000, 300_000],
        "cached_input_tokens": [0, 200_000, 0],
        "cache_write_tokens": [0, 50_000, 0],
    }
    assert series.usd == [0.0, pytest.approx(2.353125), pytest.approx(9.75)]


def test_tokens_per_day_follow_the_readers_zone(teams: object) -> None:
    series = build_spend_series(DAY, 2, "Asia/Tokyo", seen=Seen.all())
    assert series.days == [date(2026, 1, 13), date(2026, 1, 14)]
    assert series.calls == [0, 4]
    assert series.tokens["input_tokens"] == [0, 6_400_000]
    assert series.tokens["cached_input_tokens"] == [0, 200_000]


def test_a_teams_days_count_its_runs_by_pattern_and_by_its_members_events(teams: Teams) -> None:
    series = build_spend_series(DAY, 2, "UTC", seen=seen_for_team(teams.web))
    assert series.calls == [1, 2]
    assert series.tokens["input_tokens"] == [1_000_000, 2_400_000]
    assert series.tokens["output_tokens"] == [100_000, 0]
    assert series.usd == [pytest.approx(2.353125), pytest.approx(3.0)]
    assert sorted(series.by_run) == ["alpha-1", "s-pair"]
