"""Plotly figures of the run page: commits per bucket with stalls shaded on the timeline,
and the error rate per bucket with its drift line. The answers of analytics.runs.queries
in (the same rows the API serialises), figures out; never queries, never builds a URL.

Given an `Explore` (the web layer's way to the events explorer), a bucket's bar opens the
explorer on exactly that bucket, [start, start + bucket) in UTC (commits: kind=commit,
errors: ok=false), and a stall's label opens the events logged during the stall.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

from analytics import charts
from analytics.runs.drift import Drift, ErrorPoint, Trend
from analytics.runs.queries import CommitPoint, CommitRate, ErrorRate, Stalls
from lib.durations import format_duration

NO_BUCKETS = "No events of this run in this range: pick a range inside the run, or all of it."
STALL_FILL = "rgba(217, 119, 6, 0.16)"  # COLORS["warn"], translucent
CURRENT_STALL_FILL = "rgba(220, 38, 38, 0.14)"  # COLORS["bad"], translucent
TREND_COLORS = {Trend.RISING: charts.COLORS["bad"], Trend.FALLING: charts.COLORS["good"]}
# The events explorer's href for filters (kind=, ok=, start=, end= as datetimes), bound
# to the run by the web layer (dashboard.pages.run_links).
Explore = Callable[..., str]
# Two-line date ticks and the axis title sit under the plot; the legend goes below them.
LAYOUT = {
    "height": 330,
    "margin": {"l": 56, "r": 56, "t": 24, "b": 96},
    "legend": {"orientation": "h", "y": -0.36, "yanchor": "top"},
    "bargap": 0,
}


def _bucket_label(bucket_seconds: int) -> str:
    return "hour" if bucket_seconds == 3600 else format_duration(bucket_seconds)


def _bars(points: Sequence[CommitPoint | ErrorPoint], bucket_seconds: int) -> dict[str, Any]:
    """Bars that span their bucket: drawn from the bucket's start, not centred on it."""
    return {
        "x": [p.t for p in points],
        "offset": 0,
        "width": bucket_seconds * 1000 * 0.92,
    }


def _stall_shape(
    start: datetime, end: datetime, fill: str, name: str, first: bool
) -> dict[str, Any]:
    return {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": start,
        "x1": end,
        "y0": 0,
        "y1": 1,
        "fillcolor": fill,
        "line": {"width": 0},
        "layer": "below",
        "name": name,
        "legendgroup": name,
        "showlegend": first,
    }


def bucket_end(start: datetime, bucket_seconds: int) -> datetime:
    """Where the bucket starting at `start` ends (exclusive)."""
    return start + timedelta(seconds=bucket_seconds)


def _link_stalls(fig: go.Figure, stalls: Stalls, explore: Explore) -> None:
    """A label over each stall (and the current one) opening the events logged during it."""
    for s in stalls.stalls:
        charts.link_annotation(
            fig,
            explore(start=s.start, end=s.end),
            **_stall_label(s.start + (s.end - s.start) / 2, f"{s.busy_events:,} events →"),
        )
    current = stalls.current
    if current is not None:
        charts.link_annotation(
            fig, explore(start=current.since), **_stall_label(current.since, "events →", "left")
        )


def _stall_label(x: datetime, text: str, anchor: str = "center") -> dict[str, Any]:
    return {
        "x": x,
        "xref": "x",
        "y": 1,
        "yref": "paper",
        "xanchor": anchor,
        "yanchor": "bottom",
        "text": text,
        "showarrow": False,
        "hovertext": "open the events logged during this stall",
        "font": {"color": charts.COLORS["warn"], "size": 11},
    }


def build_commit_rate_figure(
    rate: CommitRate,
    stalls: Stalls,
    last_event: datetime | None = None,
    explore: Explore | None = None,
) -> go.Figure:
    """Commits per bucket as bars, the running total on a second axis, every stall of at
    least min_gap shaded, and the current stall (to the run's last event) in red; with
    `explore`, each bucket with commits and each stall opens its events."""
    points = rate.points
    bucket_seconds = rate.bucket_seconds
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            name=f"commits per {_bucket_label(bucket_seconds)}",
            y=[p.commits for p in points],
            marker_color=charts.COLORS["primary"],
            hovertemplate="%{y} commits<extra></extra>",
            **_bars(points, bucket_seconds),
        )
    )
    running, total = [], 0
    for p in points:
        total += p.commits
        running.append(total)
    fig.add_trace(
        go.Scatter(
            name="total",
            x=[p.t + timedelta(seconds=bucket_seconds) for p in points],
            y=running,
            yaxis="y2",
            mode="lines",
            line={"color": charts.COLORS["secondary"], "width": 1.5},
            hovertemplate="%{y} in total<extra></extra>",
        )
    )
    gap = format_duration(stalls.min_gap_seconds)
    shapes = [
        _stall_shape(s.start, s.end, STALL_FILL, f"stall (no commit for {gap}+)", i == 0)
        for i, s in enumerate(stalls.stalls)
    ]
    current = stalls.current
    if current is not None:
        until = last_event or (current.since + timedelta(minutes=current.minutes))
        shapes.append(_stall_shape(current.since, until, CURRENT_STALL_FILL, "stalled now", True))
    fig.update_layout(
        charts.base_layout(
            shapes=shapes,
            yaxis={
                "gridcolor": "#eef0f3",
                "title": {"text": f"commits per {_bucket_label(bucket_seconds)}"},
                **charts.integer_axis(p.commits for p in points),
            },
            yaxis2={
                "overlaying": "y",
                "side": "right",
                "showgrid": False,
                "title": {"text": "total"},
                **charts.integer_axis(running),
            },
            **LAYOUT,
        )
    )
    if not points:
        charts.show_empty(fig, NO_BUCKETS, extra="y2")
    elif explore is not None:
        charts.link_points(
            fig,
            0,
            [
                explore(kind="commit", start=p.t, end=bucket_end(p.t, bucket_seconds))
                if p.commits
                else None
                for p in points
            ],
        )
        _link_stalls(fig, stalls, explore)
    return fig


def drift_line(
    points: Sequence[ErrorPoint], drift: Drift, at: Sequence[datetime]
) -> list[float] | None:
    """The Theil-Sen line through the measured buckets (fitted at bucket starts, intercept
    as scipy's theilslopes takes it: median(rate) - slope * median(hour)), evaluated at
    the times `at`."""
    slope = drift.slope_per_hour
    measured = [p for p in points if p.attempts > 0]
    if slope is None or len(measured) < 3:
        return None
    hours = [p.t.timestamp() / 3600 for p in measured]
    intercept = statistics.median(p.rate for p in measured) - slope * statistics.median(hours)
    return [intercept + slope * t.timestamp() / 3600 for t in at]


def drift_text(drift: Drift) -> str:
    """`rising: +0.84 pp/h, p = 0.0003` (pp: percentage points of the error rate)."""
    trend = str(drift.trend)
    if drift.slope_per_hour is None:
        return f"{trend}: too few buckets with attempts"
    text = f"{trend}: {100 * drift.slope_per_hour:+.2f} pp/h"
    if drift.p_value is not None:
        text += f", p = {drift.p_value:.2g}"
    if drift.buckets < drift.min_buckets:
        text += f" ({drift.buckets} of {drift.min_buckets} buckets needed)"
    return text


def rate_axis_top(points: Sequence[ErrorPoint]) -> float:
    """The error-rate axis ends a little above the highest rate, and at 5 % at least, so
    a run without errors is not drawn on a 0-100 % axis."""
    highest = max((p.rate for p in points if p.attempts), default=0.0)
    return max(0.05, min(1.0, highest * 1.15))


def build_error_rate_figure(errors: ErrorRate, explore: Explore | None = None) -> go.Figure:
    """Error rate per bucket (errors / attempts), attempts as faint bars behind it, and the
    drift line coloured by its verdict; with `explore`, each bucket with errors (its bar
    and its point) opens its failed events."""
    points = errors.points
    bucket_seconds = errors.bucket_seconds
    drift = errors.drift
    x = [p.t + timedelta(seconds=bucket_seconds / 2) for p in points]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            name="attempts",
            y=[p.attempts for p in points],
            yaxis="y2",
            marker_color="rgba(156, 163, 175, 0.28)",
            hovertemplate="%{y} attempts<extra></extra>",
            **_bars(points, bucket_seconds),
        )
    )
    fig.add_trace(
        go.Scatter(
            name="error rate",
            x=x,
            y=[p.rate if p.attempts else None for p in points],
            customdata=[p.errors for p in points],
            mode="lines+markers",
            line={"color": charts.COLORS["bad"], "width": 2},
            marker={"size": 5},
            hovertemplate="%{y:.2%} (%{customdata} errors)<extra></extra>",
        )
    )
    line = drift_line(points, drift, x)
    if line is not None:
        fig.add_trace(
            go.Scatter(
                name=f"drift {drift_text(drift)}",
                x=x,
                y=line,
                mode="lines",
                line={
                    "color": TREND_COLORS.get(drift.trend, charts.COLORS["muted"]),
                    "width": 2,
                    "dash": "dash",
                },
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        charts.base_layout(
            yaxis={
                "gridcolor": "#eef0f3",
                "range": [0, rate_axis_top(points)],
                "tickformat": ".0%",
                "title": {"text": "errors / attempts"},
            },
            yaxis2={
                "overlaying": "y",
                "side": "right",
                "showgrid": False,
                "title": {"text": "attempts"},
                **charts.integer_axis(p.attempts for p in points),
            },
            annotations=[
                {
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0,
                    "y": 1.0,
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "text": f"drift {drift_text(drift)}",
                    "font": {"color": TREND_COLORS.get(drift.trend, "#374151")},
                    "bgcolor": "rgba(255,255,255,0.8)",
                }
            ],
            **LAYOUT,
        )
    )
    if not points:
        fig.layout.annotations = ()  # the drift verdict has no buckets to speak of
        charts.show_empty(fig, NO_BUCKETS, extra="y2")
    elif explore is not None:
        hrefs = [
            explore(ok=False, start=p.t, end=bucket_end(p.t, bucket_seconds)) if p.errors else None
            for p in points
        ]
        charts.link_points(fig, 0, hrefs)
        charts.link_points(fig, 1, hrefs)
    return fig
