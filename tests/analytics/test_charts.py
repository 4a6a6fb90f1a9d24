"""analytics/charts.py: how an axis of whole numbers ticks, and what a chart with nothing
to draw shows instead of an invented axis."""

import plotly.graph_objects as go
import pytest

from analytics import charts


@pytest.mark.parametrize(
    ("values", "dtick"),
    [
        ([0.2, 0.211, None], 1),  # a mean of 0.211 attempts still ticks 0, 1
        ([], 1),
        ([3, 7], 2),  # 7 / 5 ticks = 1.4 -> 2
        ([0, 24], 5),  # 4.8 -> 5
        ([1_388], 500),  # 277.6 -> 500
        ([31_667], 10_000),  # 6,333.4 -> 10,000
    ],
)
def test_an_integer_axis_ticks_on_whole_numbers(values: list[float | None], dtick: int) -> None:
    assert charts.integer_axis(values) == {
        "tickformat": ",d",
        "tick0": 0,
        "dtick": dtick,
        "rangemode": "tozero",
    }


def test_has_values_ignores_missing_points() -> None:
    assert not charts.has_values([])
    assert not charts.has_values([None, None])
    assert charts.has_values([None, 0])


def test_an_empty_chart_hides_its_axes_and_says_what_to_do_in_short_lines() -> None:
    fig = go.Figure()
    fig.update_layout(**charts.base_layout())
    text = "No samples in this range: pick a longer range, or check the scrape target."
    charts.show_empty(fig, text, extra="y2")
    assert (fig.layout.xaxis.visible, fig.layout.yaxis.visible) == (False, False)
    assert fig.layout.yaxis2.visible is False
    (note,) = fig.layout.annotations
    assert (
        note.text == "No samples in this range: pick a longer<br>range, or check the scrape target."
    )
    assert (note.xref, note.yref, note.x, note.y, note.showarrow) == (
        "paper",
        "paper",
        0.5,
        0.5,
        False,
    )


def test_an_empty_row_of_a_shared_axis_keeps_the_time_axis_and_centres_on_the_row() -> None:
    fig = go.Figure()
    fig.update_layout(yaxis3={"domain": [0.2, 0.4]})
    charts.show_empty(fig, "Nothing here.", x="x3", y="y3", hide_x=False)
    assert fig.layout.yaxis3.visible is False
    assert "xaxis3" not in fig.layout
    (note,) = fig.layout.annotations
    assert (note.x, note.y) == (0.5, pytest.approx(0.3))
