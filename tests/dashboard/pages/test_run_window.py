"""dashboard/pages/run_window.py: the run page's range, bucket and stall threshold."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import RequestFactory

from dashboard.pages import run_window, time_window
from dashboard.pages.run_window import RunWindow, auto_bucket_seconds, read_run_window
from lib.errors import ParameterError

FIRST = datetime(2026, 1, 14, 10, tzinfo=UTC)
LAST = datetime(2026, 1, 14, 22, 30, tzinfo=UTC)


def window(query: str) -> RunWindow:
    return read_run_window(RequestFactory().get(f"/runs/r/?{query}"), FIRST, LAST)


def test_by_default_the_whole_run_with_an_automatic_bucket() -> None:
    w = window("")
    assert (w.last, w.start, w.end, w.bucket, w.bucket_seconds, w.min_gap, w.refresh) == (
        "all",
        None,
        None,
        "auto",
        900,
        "30m",
        "0",
    )


def test_auto_picks_the_narrowest_bucket_under_120_bars() -> None:
    assert auto_bucket_seconds(timedelta(hours=1)) == 60
    assert auto_bucket_seconds(timedelta(hours=10)) == 300
    assert auto_bucket_seconds(timedelta(hours=12, minutes=30)) == 900
    assert auto_bucket_seconds(timedelta(days=7)) == 6 * 3600
    assert auto_bucket_seconds(timedelta(days=400)) == 86400


def test_a_preset_ends_open_and_starts_that_long_before_the_last_event() -> None:
    w = window("last=6h&bucket=1h&min_gap=1h&refresh=30")
    assert (w.start, w.end, w.bucket_seconds, w.min_gap_delta, w.refresh) == (
        datetime(2026, 1, 14, 16, 30, tzinfo=UTC),
        None,
        3600,
        timedelta(hours=1),
        "30",
    )
    assert w.query() == "bucket=1h&min_gap=1h&last=6h"


def test_from_and_to_are_utc_and_travel_in_chart_urls() -> None:
    w = window("from=2026-01-14T12:00&to=2026-01-14T13:30:15")
    assert (w.start, w.end, w.last, w.bucket_seconds) == (
        datetime(2026, 1, 14, 12, tzinfo=UTC),
        datetime(2026, 1, 14, 13, 30, 15, tzinfo=UTC),
        "",
        60,
    )
    assert (w.start_local, w.end_local) == ("2026-01-14T12:00", "2026-01-14T13:30:15")
    assert "last" not in w.params()
    # The chart and fragment URLs carry the contract's names, start and end.
    assert w.params() == {
        "bucket": "auto",
        "min_gap": "30m",
        "start": "2026-01-14T12:00",
        "end": "2026-01-14T13:30:15",
    }


def test_start_and_end_are_read_as_from_and_to() -> None:
    w = window("start=2026-01-14T12:00&end=2026-01-14T13:30:15&bucket=15m")
    assert (w.start, w.end, w.last, w.bucket_seconds) == (
        datetime(2026, 1, 14, 12, tzinfo=UTC),
        datetime(2026, 1, 14, 13, 30, 15, tzinfo=UTC),
        "",
        900,
    )
    assert w.params() == window("from=2026-01-14T12:00&to=2026-01-14T13:30:15&bucket=15m").params()


def test_an_unknown_refresh_is_off_and_bad_values_are_parameter_errors() -> None:
    assert window("refresh=5").refresh == "0"
    for query in (
        "bucket=0s",
        "min_gap=x",
        "last=forever",
        "from=yesterday",
        "from=2026-01-14T13:00&to=2026-01-14T12:00",
    ):
        with pytest.raises(ParameterError):
            window(query)


def test_the_buckets_and_refresh_choices_are_every_pages() -> None:
    assert run_window.BUCKETS is time_window.BUCKETS
    assert run_window.REFRESH_OPTIONS is time_window.REFRESH_OPTIONS == ("0", "10", "30", "60")
