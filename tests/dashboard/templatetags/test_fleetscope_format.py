"""dashboard/templatetags/fleetscope_format.py: numbers as the pages print them."""

from dashboard.templatetags.fleetscope_format import compact, minutes, percent, thousands


def test_numbers() -> None:
    assert [thousands(v) for v in (0, 1234, 9876543.4, None)] == [
        "0",
        "1,234",
        "9,876,543",
        "\u2013",
    ]
    assert [compact(v) for v in (999, 1234, 126_500_000, 2.5e9, None)] == [
        "999",
        "1.2k",
        "126.5M",
        "2.5B",
        "\u2013",
    ]
    assert [percent(v) for v in (0.0523, 0, None)] == ["5.2%", "0.0%", "\u2013"]
    assert percent(2 / 9, 2) == "22.22%"


def test_minutes() -> None:
    assert [minutes(v) for v in (0.5, 42.2, 90.1, 60, 1500, None)] == [
        "30 s",
        "42 min",
        "1 h 30 min",
        "1 h 0 min",
        "1 d 1 h",
        "\u2013",
    ]
