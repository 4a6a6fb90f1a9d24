"""dashboard/pages/time_window.py: a page's range, read with the API's names (start, end,
bucket; from/to as aliases), the absolute range it shows, and a bad range kept as typed."""

from datetime import UTC, datetime

import pytest
from django.test import RequestFactory

from dashboard.pages.time_window import (
    PageWindow,
    read_window,
    shown_range,
    typed_context,
)
from lib.errors import ParameterError


def window(query: str) -> PageWindow:
    return read_window(RequestFactory().get(f"/serving/?{query}"))


def test_start_end_and_bucket_travel_to_the_charts_in_the_apis_spelling() -> None:
    w = window("start=2026-01-14T10:00&end=2026-01-14T11:30&bucket=900s&refresh=30")
    assert (w.start, w.end, w.last, w.bucket_s, w.refresh) == (
        datetime(2026, 1, 14, 10, tzinfo=UTC),
        datetime(2026, 1, 14, 11, 30, tzinfo=UTC),
        None,
        900,
        "30",
    )
    assert w.query() == "start=2026-01-14T10%3A00%3A00Z&end=2026-01-14T11%3A30%3A00Z&bucket=15m"
    assert window("from=2026-01-14T10:00&to=2026-01-14T11:30&bucket=15m") == w.__class__(
        w.start, w.end, None, 900, "0"
    )
    context = w.context()
    assert (context["start_local"], context["end_local"], context["bucket"]) == (
        "2026-01-14T10:00",
        "2026-01-14T11:30",
        "15m",
    )


def test_auto_leaves_the_bucket_to_the_page_and_an_unknown_refresh_is_off() -> None:
    w = window("last=6h&bucket=auto&refresh=5")
    assert (w.last, w.bucket_s, w.refresh, w.context()["bucket"]) == ("6h", None, "0", "auto")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("start=2026-01-14T12:00&end=2026-01-14T10:00", "start must be before end"),
        ("start=yesterday", "start must be an RFC 3339 time, got 'yesterday'"),
        ("bucket=7x", "bucket must look like 30s, 5m, 1h or 1d, got '7x'"),
        ("last=forever", "last must look like 30s, 5m, 1h or 1d, got 'forever'"),
    ],
)
def test_a_bad_range_says_why(query: str, message: str) -> None:
    with pytest.raises(ParameterError) as raised:
        window(query)
    assert str(raised.value) == message


def test_the_shown_range_is_absolute() -> None:
    start, end = datetime(2026, 1, 14, 10, tzinfo=UTC), datetime(2026, 1, 14, 11, tzinfo=UTC)
    assert shown_range(start, end, 60) == {
        "shown_start": "2026-01-14T10:00:00Z",
        "shown_end": "2026-01-14T11:00:00Z",
        "shown_start_text": "2026-01-14 10:00",
        "shown_end_text": "2026-01-14 11:00",
        "shown_bucket": "1m",
    }


def test_a_bad_range_is_kept_as_typed() -> None:
    typed = typed_context(
        {"from": "yesterday", "end": "2026-01-14T10:00", "bucket": "7x", "refresh": "30"},
        "start must be an RFC 3339 time, got 'yesterday'",
        {"run": "r1"},
    )
    assert {k: typed[k] for k in ("start_local", "start_input", "end_local", "end_input")} == {
        "start_local": "yesterday",
        "start_input": "text",
        "end_local": "2026-01-14T10:00",
        "end_input": "datetime-local",
    }
    assert (typed["bucket"], typed["refresh"], typed["keep"], typed["last"]) == (
        "7x",
        "30",
        {"run": "r1"},
        "",
    )
    assert typed["problem"] == "start must be an RFC 3339 time, got 'yesterday'"
