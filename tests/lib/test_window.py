"""lib/window.py: the one reading of a request's start, end and bucket."""

from datetime import UTC, datetime

import pytest

from lib.errors import ParameterError
from lib.window import TimeRange, WindowQuery, read_window


def test_start_end_and_bucket_are_read_as_the_contract_names_them() -> None:
    w = WindowQuery(start="2026-01-14T10:00:00Z", end="2026-01-14T12:30:00+02:00", bucket="15m")
    assert w.time_range() == TimeRange(
        datetime(2026, 1, 14, 10, tzinfo=UTC), datetime(2026, 1, 14, 10, 30, tzinfo=UTC)
    )
    assert w.bucket_seconds() == 900
    assert WindowQuery().bucket_seconds(default="1h") == 3600
    assert WindowQuery().bucket_seconds() is None
    assert WindowQuery().time_range() == TimeRange(None, None)


def test_a_bad_value_is_one_line_naming_the_parameter() -> None:
    with pytest.raises(ParameterError, match=r"^start must be an RFC 3339 time, got 'soon'$"):
        WindowQuery(start="soon").time_range()
    with pytest.raises(ParameterError, match=r"^start must be before end$"):
        WindowQuery(start="2026-01-14T11:00:00Z", end="2026-01-14T10:00:00Z").time_range()
    with pytest.raises(ParameterError, match=r"^bucket must look like"):
        WindowQuery(bucket="often").bucket_seconds()


def test_pages_read_from_and_to_as_aliases_the_contract_names_first() -> None:
    w = read_window({"from": "2026-01-14T10:00", "to": "2026-01-14T11:00", "bucket": "5m"})
    assert (w.start, w.end, w.bucket) == ("2026-01-14T10:00", "2026-01-14T11:00", "5m")
    both = read_window({"start": "2026-01-14T09:00", "from": "2026-01-14T10:00"})
    assert both.start == "2026-01-14T09:00"
    assert read_window({"start": ""}).start is None
