"""lib/durations.py: durations and times out of range are one-line ParameterErrors naming
the parameter, never an OverflowError further down."""

from datetime import UTC, datetime, timedelta

import pytest

from lib.durations import MAX_DURATION, parse_bucket_seconds, parse_duration, parse_time
from lib.errors import ParameterError


def test_a_duration_up_to_ten_years_is_read() -> None:
    assert parse_duration("3650d") == timedelta(days=3650) == MAX_DURATION
    assert parse_duration("1.5h") == timedelta(minutes=90)


@pytest.mark.parametrize("text", ["99999999999999999999s", "3651d", "522w", "9" * 400 + "ms"])
def test_a_duration_past_ten_years_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ParameterError, match=r"^min_gap must be at most 3650d, got '"):
        parse_duration(text, name="min_gap")


def test_a_huge_bucket_is_refused_before_the_31_day_check_overflows() -> None:
    with pytest.raises(ParameterError, match=r"^bucket must be at most 3650d"):
        parse_bucket_seconds("99999999999999999999s")
    with pytest.raises(ParameterError, match=r"^bucket must be at most 31d, got '32d'$"):
        parse_bucket_seconds("32d")


def test_a_long_value_is_quoted_cut_short() -> None:
    with pytest.raises(ParameterError) as caught:
        parse_duration("x" * 1000, name="bucket")
    assert str(caught.value) == f"bucket must look like 30s, 5m, 1h or 1d, got '{'x' * 40}...'"


def test_times_within_the_event_years_are_read_in_utc() -> None:
    assert parse_time("2199-12-31T18:59:59-05:00") == datetime(2199, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert parse_time("1970-01-01T00:00:00Z") == datetime(1970, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:00:00-05:00",  # past datetime.max once in UTC
        "0001-01-01T00:00:00+05:00",  # before datetime.min once in UTC
        "2200-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "2199-12-31T20:00:00-05:00",  # 2200-01-01T01:00Z
    ],
)
def test_a_time_outside_the_event_years_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ParameterError) as caught:
        parse_time(text, name="start")
    assert str(caught.value) == f"start is outside 1970-2199, got {text!r}"
