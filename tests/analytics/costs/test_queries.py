"""Day segments: each lies in one local day and one UTC day, across DST changes."""

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from analytics.costs.queries import Segment, day_segments


def test_a_utc_day_is_one_segment() -> None:
    assert day_segments(date(2026, 1, 14), date(2026, 1, 14), ZoneInfo("UTC")) == [
        Segment(
            datetime(2026, 1, 14, tzinfo=UTC),
            datetime(2026, 1, 15, tzinfo=UTC),
            date(2026, 1, 14),
            date(2026, 1, 14),
        )
    ]


def test_a_local_day_is_cut_at_the_utc_midnight_inside_it() -> None:
    [first, second] = day_segments(date(2026, 1, 14), date(2026, 1, 14), ZoneInfo("Asia/Kolkata"))
    assert (first.start, first.end) == (
        datetime(2026, 1, 13, 18, 30, tzinfo=UTC),
        datetime(2026, 1, 14, tzinfo=UTC),
    )
    assert (first.utc_day, second.utc_day, second.day) == (
        date(2026, 1, 13),
        date(2026, 1, 14),
        date(2026, 1, 14),
    )


def test_the_spring_forward_day_has_23_hours() -> None:
    segments = day_segments(date(2026, 3, 8), date(2026, 3, 8), ZoneInfo("America/New_York"))
    assert sum((s.end - s.start).total_seconds() for s in segments) == 23 * 3600
