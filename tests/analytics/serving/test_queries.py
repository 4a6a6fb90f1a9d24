"""Serving answers against values computed by hand, as Prometheus would compute them."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.serving import queries as serving
from analytics.serving.instances import list_instances, require_instance
from analytics.serving.latency import latency
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines import serving_rollups
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from lib.errors import NotFoundError, ParameterError
from tests.vllm_text import EngineState, v0_text, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = serving.Window(T0, T0 + timedelta(hours=1), 3600)

EVERYONE = Seen.all()  # an all-teams reader: these tests are about the figures


def _scrape(instance: str, seconds: int, text: str) -> PendingScrape:
    return PendingScrape(instance, T0 + timedelta(seconds=seconds), scrape=parse_scrape(text))


def _load_restart_scenario() -> None:
    """Two engines scraped at 0 s, 15 s, 30 s; both restart between 15 s and 30 s.

    preemptions  e0: 5 -> 8 -> 1 (drop: reset)     increases 3, 1
                 e1: 2 -> 2 -> 4 (created changed)  increases 0, 4   total 8
    prefix hits  e0: 100 -> 160 -> 20   queries 400 -> 500 -> 50
                 e1:  10 ->  40 -> 90           100 -> 200 -> 300
      hits 60 + 20 + 30 + 90 = 200; queries 100 + 50 + 100 + 300 = 550
    kv usage     e0: 0.2 0.4 0.1   e1: 0.3 0.5 0.0   mean 1.5 / 6 = 0.25
    ttft buckets (le 0.1, 0.5, 1, +Inf), increases summed over engines and scrapes:
      e0: (1,3,4,4) -> (2,6,9,10) -> after reset (0,1,1,1)  = (1,3,5,6) + (0,1,1,1)
      e1: (0,0,0,0) -> (0,1,2,2)  -> (0,1,2,2) new created  = (0,1,2,2) + (0,1,2,2)
      total (1,6,10,11): p50 rank 5.5 in (0.1,0.5]: 0.1 + 0.4 * 4.5/5 = 0.46
    """
    c1, c2 = 1_700_000_000.0, 1_700_000_900.0
    e0 = [
        EngineState(
            0.2, preemptions=5, prefix_hits=100, prefix_queries=400, ttft=(1, 3, 4, 4), created=c1
        ),
        EngineState(
            0.4, preemptions=8, prefix_hits=160, prefix_queries=500, ttft=(2, 6, 9, 10), created=c1
        ),
        EngineState(
            0.1, preemptions=1, prefix_hits=20, prefix_queries=50, ttft=(0, 1, 1, 1), created=c2
        ),
    ]
    e1 = [
        EngineState(
            0.3, preemptions=2, prefix_hits=10, prefix_queries=100, ttft=(0, 0, 0, 0), created=c1
        ),
        EngineState(
            0.5, preemptions=2, prefix_hits=40, prefix_queries=200, ttft=(0, 1, 2, 2), created=c1
        ),
        EngineState(
            0.0, preemptions=4, prefix_hits=90, prefix_queries=300, ttft=(0, 1, 2, 2), created=c2
        ),
    ]
    load_scrapes([_scrape("gpu-a", 15 * i, v1_text({"0": e0[i], "1": e1[i]})) for i in range(3)])


def _check_restart_scenario_answers() -> None:
    pre = serving.preemptions("gpu-a", HOUR)
    assert pre == serving.Preemptions([serving.PreemptionPoint(T0, 8.0)], 8.0)
    assert serving.preemptions("gpu-a", HOUR, engine="1").total == 4.0
    cache = serving.prefix_cache("gpu-a", HOUR)
    assert cache.overall == serving.PrefixTotals(200.0, 550.0, 200 / 550)
    assert serving.kv_usage("gpu-a", HOUR) == [serving.KvPoint(T0, usage=0.25, max=0.5)]
    p50 = latency("ttft", 0.5, "gpu-a", HOUR)
    assert p50.overall == pytest.approx(0.46, abs=1e-12)
    assert p50.points[0].seconds == pytest.approx(0.46, abs=1e-12)
    # p95: rank 10.45 lies in the +Inf bucket -> the second-highest bound
    assert latency("ttft", 0.95, "gpu-a", HOUR).overall == 1.0


def test_answers_from_raw_samples_treat_drops_and_new_created_times_as_resets(lake: Path) -> None:
    _load_restart_scenario()
    _check_restart_scenario_answers()


def test_answers_are_the_same_once_the_minutes_are_rolled_up(lake: Path) -> None:
    _load_restart_scenario()
    # every minute from the first sample's to the one that closed a minute before now
    assert serving_rollups.run_rollup(now=T0 + timedelta(hours=2)) == 119
    serving_rollups.apply_retention(raw_hours=1, now=T0 + timedelta(hours=2))
    import warehouse

    assert warehouse.fetch_one("SELECT count(*) AS n FROM serving_samples") == {"n": 0}
    _check_restart_scenario_answers()


def test_thirty_second_buckets_place_each_increase_at_its_scrape(lake: Path) -> None:
    _load_restart_scenario()
    w = serving.Window(T0, T0 + timedelta(minutes=1), 30)
    assert serving.preemptions("gpu-a", w).points == [
        serving.PreemptionPoint(T0, 3.0),
        serving.PreemptionPoint(T0 + timedelta(seconds=30), 5.0),
    ]


def test_v0_prefix_cache_is_the_mean_of_known_hit_rate_gauges(lake: Path) -> None:
    load_scrapes(
        [
            _scrape("old", 0, v0_text(EngineState(kv_usage=0.5), hit_rate=-1)),
            _scrape("old", 15, v0_text(EngineState(kv_usage=0.7), hit_rate=0.2)),
            _scrape("old", 30, v0_text(EngineState(kv_usage=0.9), hit_rate=0.4)),
        ]
    )
    cache = serving.prefix_cache("old", HOUR)
    assert cache.source == "gauge"
    assert cache.overall.hit_rate == pytest.approx(0.3)
    assert serving.kv_usage("old", HOUR)[0].usage == pytest.approx(0.7)
    assert list_instances(seen=EVERYONE)[0].engine == "v0"


def test_a_window_defaults_to_the_datas_range_and_rejects_bad_input(lake: Path) -> None:
    _load_restart_scenario()
    w = serving.make_window("gpu-a", None, None, 300)
    assert (w.start, w.end, w.bucket_s) == (T0, T0 + timedelta(minutes=5), 300)
    with pytest.raises(ParameterError):
        serving.make_window("gpu-a", T0, T0 - timedelta(hours=1), 60)
    with pytest.raises(ParameterError):
        serving.make_window("gpu-a", T0, T0 + timedelta(days=30), 1)
    with pytest.raises(NotFoundError):
        require_instance("nope", EVERYONE)


def test_a_scrape_loaded_after_its_minute_was_rolled_up_is_rolled_in(lake: Path) -> None:
    state = EngineState(preemptions=1)
    load_scrapes([_scrape("late", 0, v1_text({"0": state}))])
    state.preemptions = 4
    load_scrapes([_scrape("late", 30, v1_text({"0": state}))])
    serving_rollups.run_rollup(now=T0 + timedelta(hours=3))
    state.preemptions = 6
    # scraped at 00:00:45, loaded (as a slow spool would) after the rollup passed it
    load_scrapes([_scrape("late", 45, v1_text({"0": state}))])
    for bucket in (60, 3600):  # answered from minutes, and from hours
        w = serving.Window(T0, T0 + timedelta(hours=1), bucket)
        assert serving.preemptions("late", w).total == 5.0
