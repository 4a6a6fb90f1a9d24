"""Plotly figures of the Serving and Overview pages. Rows in, figures out; never queries.

Each figure is a set of named time series on one UTC time axis: one builder per chart of
the instance page (KV usage, queue, preemptions, prefix cache, latency, throughput) and
of the fleet page, each taking the rows its question in analytics/serving/ answers. The
Overview figure stacks a run's commits and error rate over the instances' KV usage and
preemptions on one shared axis, so a slowdown in landing lines up with its cause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analytics import charts
from analytics.serving.latency import LatencyPoint
from analytics.serving.queries import (
    IncreasePoint,
    KvPoint,
    PreemptionPoint,
    PrefixPoint,
    QueuePoint,
    ThroughputPoint,
)

Series = Sequence[tuple[datetime, float | None]]

PALETTE = (
    charts.COLORS["primary"],
    charts.COLORS["secondary"],
    charts.COLORS["good"],
    charts.COLORS["warn"],
    charts.COLORS["bad"],
    "#0891b2",
    "#be185d",
    "#4d7c0f",
)


def _trace(name: str, points: Series, index: int, kind: str, dash: str | None = None) -> Any:
    xs = [t for t, _ in points]
    ys = [v for _, v in points]
    color = PALETTE[index % len(PALETTE)]
    if kind == "bar":
        return go.Bar(x=xs, y=ys, name=name, marker={"color": color})
    return go.Scatter(
        x=xs,
        y=ys,
        name=name,
        mode="lines",
        line={"color": color, "width": 2, "dash": dash},
        connectgaps=False,
    )


# What an empty chart says: what to do to see something.
NO_SAMPLES = (
    "No samples in this range: pick a longer range, or check that this instance is being scraped."
)
NO_INSTANCES = (
    "No instance scraped in this range: pick a longer range, or register a vLLM server"
    " with manage.py scrape URL."
)


def time_series_figure(
    series: Mapping[str, Series],
    *,
    y_title: str,
    kind: str = "line",
    y_format: str | None = None,
    y_range: tuple[float, float] | None = None,
    integer: bool = False,
    empty_text: str = NO_SAMPLES,
) -> go.Figure:
    """One trace per named series; `y_format` e.g. ".0%" for fractions, `integer` for
    counts (whole-number ticks). Nothing to draw: `empty_text` and no axes."""
    fig = go.Figure()
    for i, (name, points) in enumerate(series.items()):
        fig.add_trace(_trace(name, points, i, kind))
    yaxis: dict[str, Any] = {
        "gridcolor": "#eef0f3",
        "rangemode": "tozero",
        "title": {"text": y_title},
    }
    if y_format:
        yaxis["tickformat"] = y_format
    if y_range:
        yaxis["range"] = list(y_range)
    if integer:
        yaxis.update(charts.integer_axis(v for points in series.values() for _, v in points))
    fig.update_layout(**charts.base_layout(yaxis=yaxis, barmode="stack"))
    if not any(charts.has_values(v for _, v in points) for points in series.values()):
        charts.show_empty(fig, empty_text)
    return fig


def _usage(points: Sequence[KvPoint]) -> Series:
    return [(p.t, p.usage) for p in points]


def _preemptions(points: Sequence[PreemptionPoint]) -> Series:
    return [(p.t, p.preemptions) for p in points]


def kv_figure(mean: Sequence[KvPoint], by_engine: Mapping[str, Sequence[KvPoint]]) -> go.Figure:
    """KV-cache usage of the instance (kv_usage() points), and of each engine when given."""
    series = {"mean": _usage(mean)}
    for engine, points in by_engine.items():
        series[f"engine {engine}"] = _usage(points)
    return time_series_figure(series, y_title="usage", y_format=".0%", y_range=(0, 1.05))


def queue_figure(points: Sequence[QueuePoint]) -> go.Figure:
    """Running and waiting requests (queue() points)."""
    return time_series_figure(
        {
            "running": [(p.t, p.running) for p in points],
            "waiting": [(p.t, p.waiting) for p in points],
        },
        y_title="requests (mean)",
    )


def preemptions_figure(points: Sequence[PreemptionPoint]) -> go.Figure:
    """Preemptions per bucket, as bars (preemptions().points)."""
    return time_series_figure(
        {"preemptions": _preemptions(points)}, y_title="preemptions", kind="bar", integer=True
    )


NO_REJECTIONS = (
    "No admission rejections in this range: vLLM 0.32+ counts the requests it refuses at"
    " --max-num-queued-reqs or --max-num-queued-tokens."
)


def rejections_figure(by_reason: Mapping[str, Sequence[IncreasePoint]]) -> go.Figure:
    """Admission rejections per bucket, stacked by reason (increase_by_label() points)."""
    return time_series_figure(
        {
            reason or "no reason": [(p.t, p.increase) for p in pts]
            for reason, pts in by_reason.items()
        },
        y_title="rejected requests",
        kind="bar",
        integer=True,
        empty_text=NO_REJECTIONS,
    )


def prefix_cache_figure(points: Sequence[PrefixPoint]) -> go.Figure:
    """Prefix-cache hit rate (prefix_cache().points)."""
    return time_series_figure(
        {"hit rate": [(p.t, p.hit_rate) for p in points]},
        y_title="hits / queries",
        y_format=".0%",
        y_range=(0, 1.05),
    )


def latency_figure(by_quantile: Mapping[float, Sequence[LatencyPoint]]) -> go.Figure:
    """One line per quantile, named p50, p95...: quantile -> latency().points."""
    series = {
        f"p{round(q * 100)}": [(p.t, p.seconds) for p in points]
        for q, points in by_quantile.items()
    }
    return time_series_figure(series, y_title="seconds")


def throughput_figure(points: Sequence[ThroughputPoint]) -> go.Figure:
    """Prompt and generation tokens per second (throughput() points)."""
    return time_series_figure(
        {
            "prompt tokens/s": [(p.t, p.prompt_tokens_per_s) for p in points],
            "generation tokens/s": [(p.t, p.generation_tokens_per_s) for p in points],
        },
        y_title="tokens per second",
    )


def fleet_kv_figure(by_instance: Mapping[str, Sequence[KvPoint]]) -> go.Figure:
    """Every instance's KV usage: instance -> fleet_series()[instance].kv_usage."""
    series = {name: _usage(points) for name, points in by_instance.items()}
    return time_series_figure(
        series, y_title="KV usage", y_format=".0%", y_range=(0, 1.05), empty_text=NO_INSTANCES
    )


def fleet_preemptions_figure(by_instance: Mapping[str, Sequence[PreemptionPoint]]) -> go.Figure:
    """Every instance's preemptions, stacked: instance -> fleet_series()[instance].preemptions."""
    series = {name: _preemptions(points) for name, points in by_instance.items()}
    return time_series_figure(
        series, y_title="preemptions", kind="bar", integer=True, empty_text=NO_INSTANCES
    )


def overview_figure(
    commits: Series,
    error_rate: Series,
    kv_usage: Mapping[str, Series],
    preemptions: Mapping[str, Series],
    run: str | None,
    x_range: tuple[datetime, datetime],
) -> go.Figure:
    """Four rows sharing one time axis over `x_range` (the window the page shows):
    commits per bucket, error rate, KV usage per instance, preemptions per instance. A row
    with nothing to draw says so instead of an empty y axis."""
    titles = (
        f"Commits per bucket ({run})" if run else "Commits per bucket (no run selected)",
        "Error rate (errors / attempts)",
        "KV-cache usage (mean per bucket)",
        "Preemptions per bucket",
    )
    fig = make_subplots(
        rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.06, subplot_titles=titles
    )
    fig.add_trace(_trace("commits", commits, 0, "bar"), row=1, col=1)
    fig.add_trace(_trace("error rate", error_rate, 4, "line"), row=2, col=1)
    for i, (name, points) in enumerate(kv_usage.items()):
        trace = _trace(f"{name} KV", points, i + 1, "line")
        trace.legendgroup = name
        fig.add_trace(trace, row=3, col=1)
    for i, (name, points) in enumerate(preemptions.items()):
        trace = _trace(f"{name} preemptions", points, i + 1, "bar")
        trace.legendgroup = name
        fig.add_trace(trace, row=4, col=1)
    layout = charts.base_layout(height=820, barmode="stack", showlegend=True)
    layout.pop("xaxis", None)
    layout.pop("yaxis", None)
    fig.update_layout(**layout)
    for row in range(1, 5):
        fig.update_xaxes(type="date", gridcolor="#eef0f3", row=row, col=1)
        fig.update_yaxes(gridcolor="#eef0f3", rangemode="tozero", row=row, col=1)
    fig.update_xaxes(range=[x_range[0], x_range[1]])
    fig.update_yaxes(charts.integer_axis(v for _, v in commits), row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2, col=1)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05], row=3, col=1)
    fig.update_yaxes(
        charts.integer_axis(v for points in preemptions.values() for _, v in points), row=4, col=1
    )
    fig.update_xaxes(title={"text": "UTC"}, row=4, col=1)
    _overview_empty_rows(fig, commits, error_rate, kv_usage, preemptions, run)
    return fig


def _overview_empty_rows(
    fig: go.Figure,
    commits: Series,
    error_rate: Series,
    kv_usage: Mapping[str, Series],
    preemptions: Mapping[str, Series],
    run: str | None,
) -> None:
    """The empty state of each row; the shared time axis stays (its range is the page's
    window), unless no row has anything to draw."""
    no_serving = (
        "No serving instance scraped in this range: register one with manage.py scrape URL."
    )
    rows = (
        (
            [v for _, v in commits],
            "No run selected: ingest agent events with manage.py ingest agent-events PATH."
            if run is None
            else "No commit buckets in this range: pick a range inside the run.",
        ),
        (
            [v for _, v in error_rate],
            "No attempts in this range, so no error rate: pick a range inside the run.",
        ),
        ([v for points in kv_usage.values() for _, v in points], no_serving),
        ([v for points in preemptions.values() for _, v in points], no_serving),
    )
    empty = [not charts.has_values(values) for values, _ in rows]
    for row, ((_, text), is_empty) in enumerate(zip(rows, empty, strict=True), start=1):
        if is_empty:
            suffix = "" if row == 1 else str(row)
            hide_x = all(empty)
            charts.show_empty(fig, text, x=f"x{suffix}", y=f"y{suffix}", hide_x=hide_x)
