"""dashboard/templatetags/fleetscope_format.py: numbers, sizes and durations as the pages
print them, one spelling each."""

from django.template import Context, Template

from analytics.templatetags import humanize_usd
from dashboard.templatetags.fleetscope_format import (
    binary_size,
    compact,
    count,
    duration,
    elapsed,
    minutes,
    percent,
    thousands,
)


def test_counts_have_thousands_separators_and_are_the_reports_own() -> None:
    assert [count(v) for v in (0, 1234, 9876543.4, 8321, 10**18 + 1, None)] == [
        "0",
        "1,234",
        "9,876,543",
        "8,321",
        "1,000,000,000,000,000,001",
        "\u2013",
    ]
    assert thousands is count is humanize_usd.count


def test_elapsed_seconds_read_to_the_second_under_an_hour() -> None:
    assert [elapsed(v) for v in (1770.0, 45, 600, 0.4, 3599.6, 5430, None)] == [
        "29m 30s",
        "45s",
        "10m",
        "0s",
        "1h",
        "1h 30m",
        "\u2013",
    ]


def test_numbers() -> None:
    assert [compact(v) for v in (999, 1234, 126_500_000, 2.5e9, None)] == [
        "999",
        "1.2k",
        "126.5M",
        "2.5B",
        "\u2013",
    ]
    assert [percent(v) for v in (0.0523, 0, None)] == ["5.2%", "0.0%", "\u2013"]
    assert percent(2 / 9, 2) == "22.22%"


def test_sizes_are_in_binary_units() -> None:
    # Llama 3.1 8B's KV bytes per token: 2 x 32 layers x 8 heads x 128 dims x 2 bytes.
    llama = 2 * 32 * 8 * 128 * 2
    assert [binary_size(v) for v in (512, llama, 1536 * 2**20, 40 * 2**30, 3 * 2**50, None)] == [
        "512 B",
        "128 KiB",
        "1.5 GiB",
        "40 GiB",
        "3 PiB",
        "\u2013",
    ]
    assert binary_size(1_000_000) == "976.6 KiB"  # 1e6 / 1024


def test_durations_are_spelled_as_the_api_takes_them() -> None:
    assert [duration(v) for v in (900, 3600, 86400, 90, 60.0, None)] == [
        "15m",
        "1h",
        "1d",
        "90s",
        "1m",
        "\u2013",
    ]
    assert [minutes(v) for v in (0.5, 42.2, 95.5, 60, 1500, 0.0, None)] == [
        "30s",
        "42m",
        "1h 36m",
        "1h",
        "1d 1h",
        "0s",
        "\u2013",
    ]


def test_the_filters_load_in_a_template() -> None:
    text = Template(
        "{% load fleetscope_format %}{{ n|count }} {{ n|thousands }} {{ b|binary_size }} "
        "{{ s|duration }}"
    ).render(Context({"n": 8321, "b": 131072, "s": 900}))
    assert text == "8,321 8,321 128 KiB 15m"
