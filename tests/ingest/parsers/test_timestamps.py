"""What a valid timestamp is, the same for every parser."""

import re
from datetime import UTC, datetime

import duckdb
import pytest

from ingest.parsers.event_rows import Reject, read_timestamp
from ingest.parsers.timestamps import (
    EVENT_YEARS,
    REQUEST_SECONDS_YEARS,
    RFC3339,
    TimeProblem,
    from_unix_seconds,
    normalize_rfc3339,
    parse_rfc3339,
    read_rfc3339,
)

T0 = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-14T10:00:00Z",
        "2026-01-14 10:00:00Z",
        "2026-01-14T12:00:00+02:00",
        "2026-01-14T05:00:00-05:00",
        "2026-01-14t10:00:00z",  # RFC 3339 allows either case
        "2026-01-14t10:00:00Z",
        "2026-01-14T10:00:00z",
        "2026-01-15T09:59:00+23:59",  # the largest offset
        "2026-01-13T10:01:00-23:59",
    ],
)
def test_an_rfc3339_time_with_a_zone_is_read_as_utc(text: str) -> None:
    parsed = parse_rfc3339(text)
    assert parsed == T0 and parsed.tzinfo == UTC


def test_fractions_of_a_second_are_kept() -> None:
    assert parse_rfc3339("2026-01-14T10:00:00.250Z") == T0.replace(microsecond=250_000)


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-14T10:00:00",  # no zone
        "2026-01-14",
        "2026-01-14T10:00Z",  # no seconds
        "2026-W03-3T10:00:00Z",  # an ISO week date
        "20260114T100000Z",
        "2026-01-14T10:00:00+0200",
        "2026-13-14T10:00:00Z",
        "2026-01-14T24:00:00Z",  # DuckDB reads it as the next day
        "2026-01-14T10:00:00+24:00",
        "2026-01-14T10:00:00+25:00",
        "2026-01-14T10:00:00+05:60",
        "2026-01-14T10:00:60Z",
        "\u0662026-01-14T10:00:00Z",  # a digit that is not ASCII
        "yesterday",
    ],
)
def test_anything_else_is_not_a_time(text: str) -> None:
    assert parse_rfc3339(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2026-01-14 10:00:00", "has no time zone"),
        ("2026-01-14T10:00:00+25:00", "has an offset beyond +-24h"),
        ("2026-01-14T10:00:00-24:00", "has an offset beyond +-24h"),
        ("2026-01-14T10:00:00+05:75", "has an offset beyond +-24h"),
        ("2026-01-14T10:00", "is not an RFC 3339 time"),
        ("2026-02-30T10:00:00Z", "is not an RFC 3339 time"),
        ("1969-12-31T23:59:59Z", "is outside 1970-2199"),
        ("2200-01-01T00:00:00Z", "is outside 1970-2199"),
        # In UTC these fall in the year 10000 and before the year 1: no datetime holds them.
        ("9999-12-31T23:59:59-05:00", "is outside 1970-2199"),
        ("0001-01-01T00:00:00+01:00", "is outside 1970-2199"),
    ],
)
def test_each_bad_time_has_its_reason(text: str, reason: str) -> None:
    with pytest.raises(TimeProblem, match=f"^{re.escape(reason)}$"):
        read_rfc3339(text)


def test_the_years_are_the_callers() -> None:
    assert read_rfc3339("1999-12-31T23:00:00-01:00", REQUEST_SECONDS_YEARS) == datetime(
        2000, 1, 1, tzinfo=UTC
    )
    with pytest.raises(TimeProblem, match=r"^is outside 2000-2099$"):
        read_rfc3339("1999-12-31T23:59:59Z", REQUEST_SECONDS_YEARS)


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-14T10:00:00.5+05:30",
        "2026-01-14 10:00:00Z",
        "2026-01-14t10:00:00z",
        "2026-01-14t15:30:00.123456+05:30",
        "2026-01-15T09:59:00+23:59",
    ],
)
def test_what_the_duckdb_statements_read_as_a_time_is_what_python_reads(text: str) -> None:
    con = duckdb.connect()
    assert con.execute("SELECT regexp_matches(?, ?)", [text, RFC3339]).fetchone() == (True,)
    assert con.execute("SELECT ?::VARCHAR::TIMESTAMPTZ", [normalize_rfc3339(text)]).fetchone() == (
        parse_rfc3339(text),
    )


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-14T24:00:00Z",
        "2026-01-14T10:00:00+24:00",
        "2026-01-14T10:00:00+25:00",
        "2026-01-14T10:00:00+05:60",
        "2026-01-14T10:00:00",
    ],
)
def test_the_duckdb_pattern_refuses_what_python_refuses(text: str) -> None:
    con = duckdb.connect()
    assert con.execute("SELECT regexp_matches(?, ?)", [text, RFC3339]).fetchone() == (False,)
    assert parse_rfc3339(text) is None


def test_unix_seconds_are_read_inside_their_years_only() -> None:
    assert from_unix_seconds(T0.timestamp(), REQUEST_SECONDS_YEARS) == T0
    assert from_unix_seconds(1.5, EVENT_YEARS) == datetime(1970, 1, 1, 0, 0, 1, 500_000, UTC)
    assert from_unix_seconds(1.5, REQUEST_SECONDS_YEARS) is None
    assert from_unix_seconds(T0.timestamp() * 1000, EVENT_YEARS) is None  # milliseconds
    assert from_unix_seconds(float("nan"), EVENT_YEARS) is None
    assert from_unix_seconds(float("inf"), EVENT_YEARS) is None


@pytest.mark.parametrize(
    "when",
    [
        datetime(1969, 12, 31, 23, 59, 59, 999_999, UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2199, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2200, 1, 1, tzinfo=UTC),
    ],
)
def test_the_sql_window_and_the_python_one_agree(when: datetime) -> None:
    con = duckdb.connect()
    sql = f"SELECT NOT ({EVENT_YEARS.outside_sql('t')}) FROM (SELECT ?::TIMESTAMPTZ AS t)"
    assert con.execute(sql, [when]).fetchone() == (EVENT_YEARS.holds(when),)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "timestamp missing or not a string"),
        ("2026-01-14T10:00:00", "timestamp has no time zone"),
        ("2026-01-14T10:00Z", "timestamp is not an RFC 3339 time"),
        ("1900-01-01T00:00:00Z", "timestamp is outside 1970-2199"),
        ("9999-12-31T23:59:59-05:00", "timestamp is outside 1970-2199"),
        ("9999-01-01T00:00:00Z", "timestamp is outside 1970-2199"),
        ("2026-01-14T10:00:00+25:00", "timestamp has an offset beyond +-24h"),
    ],
)
def test_a_transcript_line_without_a_valid_timestamp_is_rejected(
    value: object, reason: str
) -> None:
    with pytest.raises(Reject, match=f"^{re.escape(reason)}$"):
        read_timestamp({"timestamp": value})


def test_a_transcript_timestamp_keeps_its_text_and_gives_epoch_milliseconds() -> None:
    text = "2026-01-14T12:00:00.250+02:00"
    assert read_timestamp({"timestamp": text}) == (text, T0.timestamp() * 1000 + 250)


def test_a_lower_case_transcript_timestamp_is_upper_cased_for_duckdb() -> None:
    text = "2026-01-14t10:00:00.250z"
    expected = ("2026-01-14T10:00:00.250Z", T0.timestamp() * 1000 + 250)
    assert read_timestamp({"timestamp": text}) == expected
