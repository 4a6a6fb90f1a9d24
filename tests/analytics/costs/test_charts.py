"""analytics/costs/charts.py: daily spend stacked by model or run, daily tokens stacked by
kind, and the empty state of a month without priced spend or calls (no January 2000
axis)."""

from datetime import date, timedelta

from analytics.costs.charts import NO_SPEND, NO_TOKENS, spend_figure, tokens_figure

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


def test_tokens_are_stacked_by_kind_input_output_cache_read_cache_write() -> None:
    tokens = {
        "input_tokens": [0, 10, 30],
        "output_tokens": [0, 1, 3],
        "cached_input_tokens": [0, 5, 0],
        "cache_write_tokens": [0, 2, 0],
    }
    fig = tokens_figure(DAYS, tokens)
    assert [(t.name, tuple(t.y)) for t in fig.data] == [
        ("input", (0, 10, 30)),
        ("output", (0, 1, 3)),
        ("cache read", (0, 5, 0)),
        ("cache write", (0, 2, 0)),
    ]
    assert fig.layout.barmode == "stack"
    assert tuple(fig.data[0].x) == ("2026-01-13", "2026-01-14", "2026-01-15")


def test_days_without_calls_say_what_to_do() -> None:
    fig = tokens_figure(DAYS, {"input_tokens": [0, 0, 0]})
    assert len(fig.data) == 0
    assert [a.text.replace("<br>", " ") for a in fig.layout.annotations] == [NO_TOKENS]
