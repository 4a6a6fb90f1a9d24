"""Plotly figures of the Serving views beyond one instance's page: load balance across the
fleet, cache hit rates (local, external KV connector, multimodal), speculative decoding
(acceptance rate and mean acceptance length over time, acceptance by draft position),
histogram heatmaps (request lengths, KV block ages) and SLO attainment. Rows in, figures
out; never queries (the rows come from analytics/serving/fleet.py, signals.py,
spec_decode.py and slo.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from analytics import charts
from analytics.serving.charts import NO_SAMPLES, PALETTE, time_series_figure
from analytics.serving.fleet import FleetRow
from analytics.serving.signals import CacheHitRate, HistogramPoint
from analytics.serving.slo import SloPoint
from analytics.serving.spec_decode import PositionAcceptance, SpecDecodePoint

NO_SPEC_DECODE = (
    "No speculative decoding in this range: the instances drafted no tokens"
    " (start vLLM with --speculative-config to see it)."
)
NOT_EXPORTED = (
    "Not exported by these instances in this range (this vLLM release or its flags"
    " do not export it)."
)


def _row_label(row: FleetRow) -> str:
    return (
        row.instance if row.engine in (None, "", "0") else f"{row.instance} · engine {row.engine}"
    )


def load_balance_figure(rows: Sequence[FleetRow]) -> go.Figure:
    """Mean running and waiting requests of each instance and engine, side by side: an
    unbalanced router shows as one bar far above the others."""
    shown = [r for r in rows if r.engine is not None]
    labels = [_row_label(r) for r in shown]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[r.running for r in shown],
            name="running (mean)",
            marker={"color": PALETTE[0]},
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[r.waiting for r in shown],
            name="waiting (mean)",
            marker={"color": PALETTE[3]},
        )
    )
    values = [v for r in shown for v in (r.running, r.waiting)]
    fig.update_layout(
        **charts.base_layout(
            barmode="stack",
            hovermode="closest",
            xaxis={"type": "category", "title": {"text": "instance"}},
            yaxis={
                "gridcolor": "#eef0f3",
                "rangemode": "tozero",
                "title": {"text": "requests"},
                **charts.integer_axis(values),
            },
        )
    )
    if not charts.has_values(values):
        charts.show_empty(fig, NO_SAMPLES)
    return fig


def _with_markers(fig: go.Figure) -> go.Figure:
    """Rates are often sparse (a bucket between two scrapes): a lone point still shows."""
    fig.update_traces(mode="lines+markers", marker={"size": 5})
    return fig


def cache_rates_figure(rates: Mapping[str, CacheHitRate]) -> go.Figure:
    """Hit rate per bucket of each cache the instances export."""
    return _with_markers(
        time_series_figure(
            {
                f"{name} cache": [(p.t, p.hit_rate) for p in rate.points]
                for name, rate in rates.items()
            },
            y_title="hit rate",
            y_format=".0%",
            y_range=(0, 1),
        )
    )


def spec_decode_figure(points: Sequence[SpecDecodePoint]) -> go.Figure:
    """Acceptance rate (accepted / draft tokens, left axis) and mean acceptance length
    (1 + accepted / drafts, right axis) per bucket."""
    fig = go.Figure()
    xs = [p.t for p in points]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[p.acceptance_rate for p in points],
            name="acceptance rate",
            mode="lines+markers",
            line={"color": PALETTE[0], "width": 2},
            connectgaps=False,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[p.mean_acceptance_length for p in points],
            name="mean acceptance length",
            mode="lines+markers",
            yaxis="y2",
            line={"color": PALETTE[1], "width": 2, "dash": "dot"},
            connectgaps=False,
        )
    )
    fig.update_layout(
        **charts.base_layout(
            yaxis={
                "gridcolor": "#eef0f3",
                "rangemode": "tozero",
                "tickformat": ".0%",
                "range": [0, 1],
                "title": {"text": "acceptance rate"},
            },
            yaxis2={
                "overlaying": "y",
                "side": "right",
                "rangemode": "tozero",
                "title": {"text": "tokens per draft"},
                "showgrid": False,
            },
            margin={"l": 56, "r": 56, "t": 10, "b": 40},
        )
    )
    if not charts.has_values(p.acceptance_rate for p in points):
        charts.show_empty(fig, NO_SPEC_DECODE)
    return fig


def by_position_figure(positions: Sequence[PositionAcceptance]) -> go.Figure:
    """Share of drafts whose token at each position was accepted."""
    fig = go.Figure(
        go.Bar(
            x=[str(p.position) for p in positions],
            y=[p.acceptance_rate for p in positions],
            name="accepted at position",
            marker={"color": PALETTE[2]},
        )
    )
    fig.update_layout(
        **charts.base_layout(
            hovermode="closest",
            showlegend=False,
            xaxis={"type": "category", "title": {"text": "draft position (0 = first token)"}},
            yaxis={
                "gridcolor": "#eef0f3",
                "rangemode": "tozero",
                "tickformat": ".0%",
                "title": {"text": "of drafts"},
            },
        )
    )
    if not positions:
        charts.show_empty(fig, NO_SPEC_DECODE)
    return fig


def _bound_label(bound: float) -> str:
    if bound == float("inf"):
        return "+Inf"
    return f"≤ {bound:g}"


def heatmap_figure(points: Sequence[HistogramPoint], unit: str) -> go.Figure:
    """Observations per bucket of time (x) and histogram bucket (y), darker = more."""
    bounds = sorted({b for p in points for b in p.bounds})
    index = {b: i for i, b in enumerate(bounds)}
    z: list[list[float | None]] = [[None] * len(points) for _ in bounds]
    for col, p in enumerate(points):
        for bound, count in zip(p.bounds, p.counts, strict=True):
            z[index[bound]][col] = count
    fig = go.Figure(
        go.Heatmap(
            x=[p.t for p in points],
            y=[_bound_label(b) for b in bounds],
            z=z,
            colorscale="Blues",
            colorbar={"title": {"text": "requests"}},
            hovertemplate="%{x}<br>%{y} " + unit + ": %{z:,.0f}<extra></extra>",
        )
    )
    fig.update_layout(
        **charts.base_layout(
            hovermode="closest",
            showlegend=False,
            yaxis={"type": "category", "title": {"text": unit}},
        )
    )
    if not any(p.count for p in points):
        charts.show_empty(fig, NOT_EXPORTED)
    return fig


def slo_figure(by_metric: Mapping[str, Sequence[SloPoint]]) -> go.Figure:
    """Share of requests under target per bucket, one line per latency."""
    return _with_markers(
        time_series_figure(
            {name: [(p.t, p.ratio) for p in points] for name, points in by_metric.items()},
            y_title="requests under target",
            y_format=".0%",
            y_range=(0, 1),
        )
    )
