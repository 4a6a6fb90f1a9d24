"""The Serving figures: each builder turns its question's answer rows into named traces
on one time axis, with the axis format the instance and fleet pages show."""

from datetime import UTC, datetime, timedelta

import plotly.graph_objects as go

from analytics.serving import charts
from analytics.serving.latency import LatencyPoint
from analytics.serving.queries import (
    KvPoint,
    PreemptionPoint,
    PrefixPoint,
    QueuePoint,
    ThroughputPoint,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def _traces(fig: go.Figure) -> dict[str, tuple[str, tuple[object, ...], tuple[object, ...]]]:
    return {t.name: (t.type, tuple(t.x), tuple(t.y)) for t in fig.data}


def test_kv_usage_is_a_mean_line_and_one_line_per_engine_as_percent() -> None:
    mean = [KvPoint(T0, usage=0.25, max=0.5), KvPoint(T1, usage=0.5, max=0.75)]
    fig = charts.kv_figure(mean, {"0": [KvPoint(T0, usage=0.1, max=0.1)], "1": []})
    assert _traces(fig) == {
        "mean": ("scatter", (T0, T1), (0.25, 0.5)),
        "engine 0": ("scatter", (T0,), (0.1,)),
        "engine 1": ("scatter", (), ()),
    }
    assert fig.layout.yaxis.tickformat == ".0%"
    assert fig.layout.yaxis.range == (0, 1.05)
    assert fig.layout.yaxis.title.text == "usage"


def test_the_queue_shows_running_and_waiting_means() -> None:
    rows = [QueuePoint(T0, running=3.0, waiting=None, running_max=4, waiting_max=None)]
    fig = charts.queue_figure(rows)
    assert _traces(fig) == {
        "running": ("scatter", (T0,), (3.0,)),
        "waiting": ("scatter", (T0,), (None,)),
    }
    assert fig.layout.yaxis.title.text == "requests (mean)"


def test_preemptions_are_bars() -> None:
    fig = charts.preemptions_figure([PreemptionPoint(T0, 0.0), PreemptionPoint(T1, 2.0)])
    assert _traces(fig) == {"preemptions": ("bar", (T0, T1), (0.0, 2.0))}
    assert fig.layout.barmode == "stack"


def test_the_prefix_cache_hit_rate_is_a_percent_line() -> None:
    rows = [PrefixPoint(T0, hits=2.0, queries=8.0, hit_rate=0.25)]
    fig = charts.prefix_cache_figure(rows)
    assert _traces(fig) == {"hit rate": ("scatter", (T0,), (0.25,))}
    assert (fig.layout.yaxis.tickformat, fig.layout.yaxis.range) == (".0%", (0, 1.05))
    assert fig.layout.yaxis.title.text == "hits / queries"


def test_latency_has_one_line_per_quantile_named_by_percentile() -> None:
    fig = charts.latency_figure(
        {
            0.5: [LatencyPoint(T0, seconds=0.46)],
            0.95: [LatencyPoint(T0, seconds=1.0)],
            0.99: [LatencyPoint(T0, seconds=None)],
        }
    )
    assert _traces(fig) == {
        "p50": ("scatter", (T0,), (0.46,)),
        "p95": ("scatter", (T0,), (1.0,)),
        "p99": ("scatter", (T0,), (None,)),
    }
    assert fig.layout.yaxis.title.text == "seconds"


def test_throughput_shows_prompt_and_generation_tokens_per_second() -> None:
    rows = [ThroughputPoint(T0, prompt_tokens_per_s=10.0, generation_tokens_per_s=2.5)]
    assert _traces(charts.throughput_figure(rows)) == {
        "prompt tokens/s": ("scatter", (T0,), (10.0,)),
        "generation tokens/s": ("scatter", (T0,), (2.5,)),
    }


def test_the_fleet_figures_have_one_trace_per_instance() -> None:
    kv = charts.fleet_kv_figure({"a": [KvPoint(T0, usage=0.5, max=0.5)], "b": []})
    assert _traces(kv) == {"a": ("scatter", (T0,), (0.5,)), "b": ("scatter", (), ())}
    assert (kv.layout.yaxis.tickformat, kv.layout.yaxis.title.text) == (".0%", "KV usage")
    preemptions = charts.fleet_preemptions_figure({"a": [PreemptionPoint(T0, 1.0)]})
    assert _traces(preemptions) == {"a": ("bar", (T0,), (1.0,))}


def test_a_figure_without_points_says_so() -> None:
    fig = charts.queue_figure([])
    assert [a.text for a in fig.layout.annotations] == ["no data in this range"]
    point = QueuePoint(T0, running=1.0, waiting=0.0, running_max=1.0, waiting_max=0.0)
    assert not charts.queue_figure([point]).layout.annotations
