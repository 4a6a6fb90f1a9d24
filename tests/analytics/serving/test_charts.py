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


def _empty_text(fig: go.Figure) -> list[str]:
    return [a.text.replace("<br>", " ") for a in fig.layout.annotations]


def test_a_figure_without_points_says_what_to_do_and_draws_no_axes() -> None:
    fig = charts.queue_figure([])
    assert _empty_text(fig) == [charts.NO_SAMPLES]
    assert (fig.layout.xaxis.visible, fig.layout.yaxis.visible) == (False, False)
    gaps = charts.latency_figure({0.5: [LatencyPoint(T0, seconds=None)]})
    assert _empty_text(gaps) == [charts.NO_SAMPLES]
    point = QueuePoint(T0, running=1.0, waiting=0.0, running_max=1.0, waiting_max=0.0)
    drawn = charts.queue_figure([point])
    assert not drawn.layout.annotations
    assert drawn.layout.xaxis.visible is None


def test_the_fleet_figures_without_instances_say_how_to_add_one() -> None:
    assert _empty_text(charts.fleet_kv_figure({})) == [charts.NO_INSTANCES]
    assert _empty_text(charts.fleet_preemptions_figure({"a": []})) == [charts.NO_INSTANCES]


def test_preemption_axes_tick_on_whole_numbers() -> None:
    fig = charts.preemptions_figure([PreemptionPoint(T0, 0.25), PreemptionPoint(T1, 0.5)])
    assert (fig.layout.yaxis.tickformat, fig.layout.yaxis.dtick) == (",d", 1)
    fleet = charts.fleet_preemptions_figure({"a": [PreemptionPoint(T0, 23.0)]})
    assert (fleet.layout.yaxis.tickformat, fleet.layout.yaxis.dtick) == (",d", 5)


def test_the_overview_rows_share_the_window_and_an_empty_row_says_why() -> None:
    end = T1 + timedelta(minutes=1)
    commits = [(T0, 3.0), (T1, 7.0)]
    fig = charts.overview_figure(commits, [(T0, None), (T1, None)], {}, {}, "r1", (T0, end))
    assert fig.layout.xaxis4.range == (T0, end)
    assert (fig.layout.yaxis.tickformat, fig.layout.yaxis.dtick) == (",d", 2)
    # After the four subplot titles, one note per empty row, in the middle of its row.
    notes = [(a.text.replace("<br>", " "), a.y) for a in fig.layout.annotations[4:]]
    middle = [sum(fig.layout[f"yaxis{n}"].domain) / 2 for n in (2, 3, 4)]
    assert notes == [
        ("No attempts in this range, so no error rate: pick a range inside the run.", middle[0]),
        (
            "No serving instance scraped in this range: register one with manage.py scrape URL.",
            middle[1],
        ),
        (
            "No serving instance scraped in this range: register one with manage.py scrape URL.",
            middle[2],
        ),
    ]
    assert [fig.layout[f"yaxis{n}"].visible for n in ("", "2", "3", "4")] == [
        None,
        False,
        False,
        False,
    ]
    assert fig.layout.xaxis4.visible is None  # the time axis of the commits row stays


def test_an_overview_with_nothing_at_all_draws_no_time_axis() -> None:
    fig = charts.overview_figure([], [], {}, {}, None, (T0, T1))
    assert [fig.layout[f"xaxis{n}"].visible for n in ("", "2", "3", "4")] == [False] * 4
    texts = [a.text.replace("<br>", " ") for a in fig.layout.annotations]
    assert texts[4] == (
        "No run selected: ingest agent events with manage.py ingest agent-events PATH."
    )
