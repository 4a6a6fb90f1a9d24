"""analytics/costs/charts.py: daily spend stacked by model or run, and the empty state of
a month without priced spend (no January 2000 axis)."""

from datetime import date, timedelta

from analytics.costs.charts import NO_SPEND, spend_figure

DAYS = [date(2026, 1, 13) + timedelta(days=n) for n in range(3)]


def test_spend_is_stacked_largest_first_and_unpriced_series_are_left_out() -> None:
    fig = spend_figure(DAYS, {"a": [0.0, 1.0, 0.0], "b": [2.0, 2.0, 0.0], "c": [0.0] * 3}, "model")
    assert [(t.name, tuple(t.y)) for t in fig.data] == [
        ("b", (2.0, 2.0, 0.0)),
        ("a", (0.0, 1.0, 0.0)),
    ]
    assert tuple(fig.data[0].x) == ("2026-01-13", "2026-01-14", "2026-01-15")
    assert not fig.layout.annotations


def test_days_without_priced_spend_say_what_to_do_and_draw_no_axes() -> None:
    fig = spend_figure(DAYS, {"mystery-1": [0.0, 0.0, 0.0]}, "model")
    assert len(fig.data) == 0
    assert [a.text.replace("<br>", " ") for a in fig.layout.annotations] == [NO_SPEND]
    assert (fig.layout.xaxis.visible, fig.layout.yaxis.visible) == (False, False)
