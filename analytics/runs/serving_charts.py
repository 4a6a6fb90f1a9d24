"""Plotly figures of a run page's "Serving under this run" section: the KV-cache usage
and the preemptions, per bucket, of each instance that served the run's models
(analytics/runs/serving_load.py's answer in, figures out), on the run's buckets, so they
line up with the commit and error charts above them. Never queries, never builds a URL.

Given an `Explore` (the web layer's way to the events explorer), a bucket of an
instance's trace opens the explorer on exactly that bucket, [start, start + bucket) in
UTC, with model= the instance's model: the calls that load was serving. A KV point opens
when the bucket has a sample, a preemption bar when the bucket has preemptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import plotly.graph_objects as go

from analytics import charts
from analytics.runs.charts import LAYOUT, Explore, bucket_end
from analytics.runs.serving_load import InstanceLoad, ServingLoad
from analytics.serving.charts import PALETTE

NO_MODELS = (
    "This run's calls in this range name no model, so no serving instance can be tied to"
    " them: pick a range with LLM calls."
)
NO_SAMPLES = (
    "No samples of these instances in this range: pick a range inside the run, or check"
    " that their scrape targets are enabled."
)


def no_instance_text(models: Sequence[str]) -> str:
    """The empty state when no scraped instance served the run's models: what to do."""
    return (
        f"No scraped vLLM instance served {charts.plain(', '.join(models))}: point a scrape target at"
        " the vLLM server serving them (manage.py add_scrape_target URL --instance NAME)."
    )


def _name(load: InstanceLoad) -> str:
    return charts.plain(f"{load.instance} · {load.model}")


def _layout(load: ServingLoad, yaxis: dict[str, Any]) -> dict[str, Any]:
    """The run charts' layout on the run's buckets; one model's traces are read at a
    time (x unified), several models' point by point, so a click opens its own model."""
    models = {i.model for i in load.instances}
    xaxis = dict(charts.base_layout()["xaxis"])
    if load.start is not None and load.end is not None:
        xaxis["range"] = [load.start, load.end]
    return charts.base_layout(
        xaxis=xaxis,
        yaxis={"gridcolor": "#eef0f3", **yaxis},
        hovermode="x unified" if len(models) <= 1 else "closest",
        barmode="stack",
        **{
            **LAYOUT,
            # Above the plot: instance names are long, and at 375 px the rotated date
            # ticks push the axis title into a legend under the plot.
            "legend": {
                "orientation": "h",
                "x": 0,
                "y": 1.02,
                "yanchor": "bottom",
                "traceorder": "normal",
            },
            "margin": {"l": 56, "r": 56, "t": 24, "b": 64},  # no legend under the plot
        },
    )


def _empty_text(load: ServingLoad, has_samples: bool) -> str | None:
    if not load.models:
        return NO_MODELS
    if not load.instances:
        return no_instance_text(load.models)
    return None if has_samples else NO_SAMPLES


def build_serving_kv_figure(load: ServingLoad, explore: Explore | None = None) -> go.Figure:
    """Each instance's mean KV-cache usage per bucket (a point in the bucket's middle);
    with `explore`, each point opens its bucket's calls of the instance's model."""
    half = timedelta(seconds=load.bucket_seconds / 2)
    fig = go.Figure()
    for i, instance in enumerate(load.instances):
        fig.add_trace(
            go.Scatter(
                name=_name(instance),
                x=[p.t + half for p in instance.kv_usage],
                y=[p.usage for p in instance.kv_usage],
                mode="lines+markers",
                line={"color": PALETTE[i % len(PALETTE)], "width": 2},
                marker={"size": 6},
                hovertemplate="%{y:.1%} of the KV cache",
            )
        )
    fig.update_layout(
        _layout(
            load,
            {"range": [0, 1.05], "tickformat": ".0%", "title": {"text": "KV cache used"}},
        )
    )
    empty = _empty_text(load, any(i.kv_usage for i in load.instances))
    if empty is not None:
        charts.show_empty(fig, empty)
    elif explore is not None:
        for trace, instance in enumerate(load.instances):
            charts.link_points(
                fig,
                trace,
                [
                    explore(
                        model=instance.model,
                        start=p.t,
                        end=bucket_end(p.t, load.bucket_seconds),
                    )
                    for p in instance.kv_usage
                ],
            )
    return fig


def build_serving_preemptions_figure(
    load: ServingLoad, explore: Explore | None = None
) -> go.Figure:
    """Each instance's preemptions per bucket, stacked bars spanning their bucket; with
    `explore`, each bar with preemptions opens its bucket's calls of the instance's model."""
    bucket = load.bucket_seconds
    fig = go.Figure()
    for i, instance in enumerate(load.instances):
        fig.add_trace(
            go.Bar(
                name=_name(instance),
                x=[p.t for p in instance.preemptions],
                y=[p.preemptions for p in instance.preemptions],
                offset=0,
                width=bucket * 1000 * 0.92,
                marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate="%{y:,} preemptions",
            )
        )
    counts = [p.preemptions for i in load.instances for p in i.preemptions]
    fig.update_layout(
        _layout(load, {"title": {"text": "preemptions"}, **charts.integer_axis(counts)})
    )
    empty = _empty_text(load, bool(counts))
    if empty is not None:
        charts.show_empty(fig, empty)
    elif explore is not None:
        for trace, instance in enumerate(load.instances):
            charts.link_points(
                fig,
                trace,
                [
                    explore(model=instance.model, start=p.t, end=bucket_end(p.t, bucket))
                    if p.preemptions
                    else None
                    for p in instance.preemptions
                ],
            )
    return fig
