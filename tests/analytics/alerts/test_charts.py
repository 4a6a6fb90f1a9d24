"""The rule editor's preview timeline, drawn from a Preview's incidents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from analytics import charts
from analytics.alerts.charts import NEVER_FIRED, preview_timeline_figure
from analytics.alerts.preview import Incident

T0 = datetime(2026, 1, 14, 8, 0, tzinfo=UTC)


def test_the_timeline_draws_the_pending_stretch_and_runs_a_firing_bar_to_the_end() -> None:
    resolved = Incident(
        "gpu-1", T0, T0 + timedelta(minutes=5), T0 + timedelta(minutes=14), 0.97, "KV 97%"
    )
    still_firing = Incident("gpu-2", None, T0 + timedelta(minutes=50), None, 0.99, "KV 99%")
    end = T0 + timedelta(hours=1)

    fig = orjson.loads(charts.to_json(preview_timeline_figure([resolved, still_firing], T0, end)))

    pending, firing = fig["data"]
    assert (pending["y"], pending["base"], pending["x"]) == (
        ["gpu-1"],
        ["2026-01-14T08:00:00Z"],
        [5 * 60 * 1000],
    )
    assert firing["y"] == ["gpu-1", "gpu-2"]
    assert firing["base"] == ["2026-01-14T08:05:00Z", "2026-01-14T08:50:00Z"]
    assert firing["x"] == [9 * 60 * 1000, 10 * 60 * 1000]  # gpu-2 runs to the end
    assert firing["customdata"][1] == [
        "2026-01-14T08:50:00Z",
        "2026-01-14T09:00:00Z",
        "KV 99%",
    ]
    assert fig["layout"]["yaxis"]["categoryarray"] == ["gpu-2", "gpu-1"]
    assert fig["layout"]["xaxis"]["range"] == ["2026-01-14T08:00:00Z", "2026-01-14T09:00:00Z"]


def test_a_rule_that_never_fired_says_so_on_the_range_previewed() -> None:
    end = T0 + timedelta(hours=1)
    fig = preview_timeline_figure([Incident("gpu-1", T0, None, None, 0.5, "pending")], T0, end)
    (note,) = fig.layout.annotations
    assert note.text.replace("<br>", " ") == NEVER_FIRED
    assert fig.layout.yaxis.visible is False
    assert fig.layout.xaxis.visible is None  # the range previewed is a true axis
