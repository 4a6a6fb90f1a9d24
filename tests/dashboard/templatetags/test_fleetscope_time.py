"""fleetscope_time: a UTC time printed inside <time datetime>, whatever zone it came in."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.template import Context, Template, TemplateSyntaxError

from dashboard.templatetags.fleetscope_time import timetag, zone_label

PARIS_WINTER = timezone(timedelta(hours=1))


def test_a_utc_time_is_printed_to_the_minute_with_its_instant_in_datetime() -> None:
    at = datetime(2026, 1, 14, 10, 10, 30, tzinfo=UTC)
    assert timetag(at) == (
        '<time datetime="2026-01-14T10:10:30Z" data-precision="minute">2026-01-14 10:10</time>'
    )


def test_an_aware_time_elsewhere_is_printed_in_utc() -> None:
    at = datetime(2026, 1, 14, 11, 10, 30, 250_000, tzinfo=PARIS_WINTER)
    assert timetag(at, "second") == (
        '<time datetime="2026-01-14T10:10:30.250Z" data-precision="second">'
        "2026-01-14 10:10:30</time>"
    )


def test_a_naive_time_is_taken_as_utc_and_each_precision_has_its_text() -> None:
    at = datetime(2026, 1, 14, 23, 59, 1)
    assert timetag(at, "date").endswith(">2026-01-14</time>")
    assert timetag(at, "clock").endswith(">23:59:01</time>")
    assert 'datetime="2026-01-14T23:59:01Z"' in timetag(at, "clock")


def test_a_missing_time_is_an_en_dash_and_a_bad_precision_says_which_exist() -> None:
    assert timetag(None) == "\u2013"
    with pytest.raises(TemplateSyntaxError, match="minute, second, date, clock, got 'hour'"):
        timetag(datetime(2026, 1, 14, tzinfo=UTC), "hour")


def test_in_a_template_the_tag_is_not_escaped_and_the_zone_label_is_utc() -> None:
    rendered = Template("{% load fleetscope_time %}{{ at|timetag }} {% zone_label %}").render(
        Context({"at": datetime(2026, 1, 14, 10, 10, tzinfo=UTC)})
    )
    assert rendered == (
        '<time datetime="2026-01-14T10:10:00Z" data-precision="minute">2026-01-14 10:10</time> '
        '<span class="tz" data-zone-label>UTC</span>'
    )
    assert zone_label() == '<span class="tz" data-zone-label>UTC</span>'
