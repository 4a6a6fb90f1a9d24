"""Every modelled figure of a current vLLM release (0.11, V1, spec decoding, LoRA) against
values computed by hand from the fixture bodies' observations (tests/fixtures/vllm-metrics/
render.py lists them): scrape `a` at 00:00:00, `b` at 00:01:00 and, for the restart, `c`
at 00:02:00 from a new server (its counters start again, `_created` is newer)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.serving import signals
from analytics.serving.fleet import FleetRow, fleet_table
from analytics.serving.instances import list_instances
from analytics.serving.latency import latency
from analytics.serving.series import Window
from analytics.serving.slo import slo_attainment
from analytics.serving.spec_decode import PositionAcceptance, SpecDecodeTotals, spec_decode
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from lib.errors import ParameterError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vllm-metrics"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = Window(T0, T0 + timedelta(hours=1), 3600)
MODEL = "Qwen/Qwen3-8B"


def _load(instance: str, *files: str) -> None:
    load_scrapes(
        [
            PendingScrape(
                instance,
                T0 + timedelta(seconds=60 * i),
                scrape=parse_scrape((FIXTURES / name).read_text()),
            )
            for i, name in enumerate(files)
        ]
    )


@pytest.fixture
def two_scrapes(lake: Path) -> None:
    _load("gpu-a", "current-0.11-a.prom", "current-0.11-b.prom")


@pytest.fixture
def across_restart(lake: Path) -> None:
    _load("gpu-a", "current-0.11-a.prom", "current-0.11-b.prom", "current-0.11-c-restarted.prom")


def test_spec_decode_rates_are_the_increases_divided_by_hand(two_scrapes: None) -> None:
    # between a and b: 50 drafts, 150 draft tokens, 60 accepted (35, 20, 5 by position)
    answer = spec_decode("gpu-a", HOUR)
    assert answer.overall == SpecDecodeTotals(50.0, 150.0, 60.0, 60 / 150, 1 + 60 / 50)
    assert answer.overall.acceptance_rate == pytest.approx(0.4)
    assert answer.overall.mean_acceptance_length == pytest.approx(2.2)
    assert [(p.t, p.drafts, p.accepted_tokens) for p in answer.points] == [(T0, 50.0, 60.0)]
    assert answer.by_position == [
        PositionAcceptance(0, 35.0, 35 / 50),
        PositionAcceptance(1, 20.0, 20 / 50),
        PositionAcceptance(2, 5.0, 5 / 50),
    ]


def test_spec_decode_across_a_restart_adds_the_new_servers_counts(across_restart: None) -> None:
    # a -> b: 50 drafts, 150 tokens, 60 accepted; b -> c restarted: 10, 30, 15 (8, 5, 2)
    answer = spec_decode("gpu-a", HOUR)
    assert answer.overall == SpecDecodeTotals(60.0, 180.0, 75.0, 75 / 180, 1 + 75 / 60)
    assert [(p.position, p.accepted_tokens) for p in answer.by_position] == [
        (0, 43.0),
        (1, 25.0),
        (2, 7.0),
    ]


def test_slo_attainment_counts_the_observations_under_a_bucket_bound(
    across_restart: None,
) -> None:
    # TTFT observed a -> b: 0.02 0.3 0.45 0.9 2.0 0.1 0.1; after the restart: 0.3 0.3.
    # <= 0.5: 0.02 0.3 0.45 0.1 0.1 and both 0.3 = 7 of 9.
    answer = slo_attainment("ttft", 0.5, "gpu-a", HOUR)
    assert (answer.overall.attained, answer.overall.total) == (7.0, 9.0)
    assert answer.overall.ratio == 7 / 9
    assert answer.target_is_bucket_bound is True
    assert answer.note is None
    # <= 0.25: 0.02 0.1 0.1 = 3 of 9
    assert slo_attainment("ttft", 0.25, "gpu-a", HOUR).overall.attained == 3.0


def test_slo_target_between_bounds_counts_the_bound_below_and_says_so(
    across_restart: None,
) -> None:
    # 0.3 lies between the TTFT bounds 0.25 and 0.5: only the 3 under 0.25 are counted
    # (6 observations really are <= 0.3); the answer says so.
    answer = slo_attainment("ttft", 0.3, "gpu-a", HOUR)
    assert answer.target_is_bucket_bound is False
    assert answer.bound_seconds == 0.25
    assert (answer.overall.attained, answer.overall.total) == (3.0, 9.0)
    assert answer.note is not None and "0.25" in answer.note and "\n" not in answer.note


def test_slo_of_the_per_request_tpot(two_scrapes: None) -> None:
    # per-request TPOT a -> b: 0.01 0.05 0.09 0.3 0.5 0.05 0.05; <= 0.05: 4 of 7
    answer = slo_attainment("tpot", 0.05, "gpu-a", HOUR)
    assert (answer.overall.attained, answer.overall.total, answer.target_is_bucket_bound) == (
        4.0,
        7.0,
        True,
    )


def test_slo_refuses_a_target_that_is_not_a_positive_number(two_scrapes: None) -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ParameterError):
            slo_attainment("ttft", bad, "gpu-a", HOUR)
    with pytest.raises(ParameterError, match="metric must be one of"):
        slo_attainment("p99", 1.0, "gpu-a", HOUR)


def test_latency_of_every_phase_has_its_quantile_and_mean(two_scrapes: None) -> None:
    # queue a -> b: 0.3 0.5 0.8 1.0 2.0 0.05 0.05. Cumulative at le 0.3: 3, 0.5: 4.
    # p50 rank 3.5 in (0.3, 0.5]: 0.3 + 0.2 * 0.5 / 1 = 0.4; mean 4.7 / 7
    queue = latency("queue", 0.5, "gpu-a", HOUR)
    assert queue.overall == pytest.approx(0.4)
    assert queue.overall_mean == pytest.approx(4.7 / 7)
    # e2e mean: (0.5 + 1 + 3 + 8 + 16 + 31 + 70) / 7 = 18.5
    assert latency("e2e", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(18.5)
    # prefill 0.1 0.2 0.3 0.5 0.8 1.2 2.5 (sum 5.6); decode 0.4 0.8 2.5 7 15 29 65
    # (sum 119.7); inference = prefill + decode per request: 125.3 / 7 = 17.9
    assert latency("prefill", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(5.6 / 7)
    assert latency("decode", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(119.7 / 7)
    assert latency("inference", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(17.9)


def test_itl_is_per_decode_step_and_tpot_per_request(two_scrapes: None) -> None:
    # itl a -> b: 0.01 0.05 0.09 0.15 (mean 0.075); tpot: 0.01 0.05 0.09 0.3 0.5 0.05 0.05
    assert latency("itl", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(0.3 / 4)
    assert latency("tpot", 0.5, "gpu-a", HOUR).overall_mean == pytest.approx(1.05 / 7)


def test_requests_by_finish_reason_and_prompt_tokens_by_source(across_restart: None) -> None:
    by_reason = signals.increase_by_label("requests", "gpu-a", HOUR)
    # a -> b: stop 5, length 1, abort 1; restarted: stop 2
    assert {k: [p.increase for p in v] for k, v in by_reason.items()} == {
        "abort": [1.0],
        "error": [0.0],
        "length": [1.0],
        "stop": [7.0],
    }
    sources = signals.increase_by_label("prompt_tokens_by_source", "gpu-a", HOUR)
    assert {k: v[0].increase for k, v in sources.items()} == {
        "external_kv_transfer": 100.0,
        "local_cache_hit": 520.0,
        "local_compute": 2780.0,
    }


def test_waiting_by_reason_and_sleep_state_are_gauge_means(two_scrapes: None) -> None:
    waiting = signals.gauge_by_label("waiting_by_reason", "gpu-a", HOUR)
    # capacity 2 then 3, deferred 0 then 1
    assert {k: (v[0].mean, v[0].max) for k, v in waiting.items()} == {
        "capacity": (2.5, 3.0),
        "deferred": (0.5, 1.0),
    }
    sleep = signals.gauge_by_label("sleep_state", "gpu-a", HOUR)
    assert {k: v[0].mean for k, v in sleep.items()} == {
        "awake": 1.0,
        "discard_all": 0.0,
        "weights_offloaded": 0.0,
    }


def test_cache_hit_rates_of_the_local_external_and_multimodal_caches(
    two_scrapes: None,
) -> None:
    rates = signals.cache_hit_rates("gpu-a", HOUR)
    # a -> b: local 300 of 600, external 40 of 100, multimodal 1 of 5
    assert {k: (v.hits, v.queries, v.hit_rate) for k, v in rates.items()} == {
        "local": (300.0, 600.0, 0.5),
        "external": (40.0, 100.0, 0.4),
        "multimodal": (1.0, 5.0, 0.2),
    }


def test_counters_and_request_length_heatmap(two_scrapes: None) -> None:
    counted = signals.counters(("prompt_tokens_cached", "prompt_tokens_recomputed"), "gpu-a", HOUR)
    assert {k: v[0].increase for k, v in counted.items()} == {
        "prompt_tokens_cached": 600.0,
        "prompt_tokens_recomputed": 1.0,
    }
    # prompt lengths a -> b: 100 1000 2000 50 500 200 150
    (point,) = signals.histogram_series("request_prompt_tokens", "gpu-a", HOUR)
    per_bound = dict(zip(point.bounds, point.counts, strict=True))
    assert {b: n for b, n in per_bound.items() if n} == {
        50.0: 1.0,
        100.0: 1.0,
        200.0: 2.0,
        500.0: 1.0,
        1000.0: 1.0,
        2000.0: 1.0,
    }
    assert point.count == 7.0
    assert point.mean == pytest.approx(4000 / 7)
    with pytest.raises(ParameterError):
        signals.histogram_series("ttft", "gpu-a", HOUR)


def test_lora_adapters_named_at_the_last_scrape(two_scrapes: None) -> None:
    assert signals.lora_adapters("gpu-a") == signals.LoraAdapters(["sql-lora"], [], 2)


def test_fleet_table_has_one_row_per_instance_and_engine(two_scrapes: None) -> None:
    (row,) = fleet_table(list_instances(seen=Seen.all()), Window(T0, T0 + timedelta(hours=1), 60))
    # TTFT a -> b sorted: 0.02 0.1 0.1 0.3 0.45 0.9 2.0; p95 rank 6.65 in (1.0, 2.5]
    # (6 at or under 1.0): 1.0 + 1.5 * 0.65
    assert row == FleetRow(
        instance="gpu-a",
        engine="0",
        model=MODEL,
        up=True,
        last_scrape=T0 + timedelta(seconds=60),
        kv_usage=0.5,
        running=4.0,
        waiting=3.0,
        waiting_by_reason={"capacity": 2.5, "deferred": 0.5},
        preemptions=2.0,
        prefix_hit_rate=0.5,
        ttft_p95_seconds=pytest.approx(1.975),  # type: ignore[arg-type]
        spec_acceptance_rate=0.4,
        sleep_state="awake",
    )


def test_a_model_filter_keeps_only_the_instances_serving_it(two_scrapes: None) -> None:
    from tests.vllm_text import EngineState, v1_text

    other = [EngineState(requests=1.0), EngineState(requests=4.0)]
    load_scrapes(
        [
            PendingScrape(
                "gpu-b", T0 + timedelta(seconds=60 * i), scrape=parse_scrape(v1_text({"0": s}))
            )
            for i, s in enumerate(other)
        ]
    )
    everyone = signals.increase_by_label("requests", None, HOUR)
    assert sum(p.increase for points in everyone.values() for p in points) == 7.0 + 3.0
    qwen = signals.increase_by_label("requests", None, HOUR, model=MODEL)
    assert sum(p.increase for points in qwen.values() for p in points) == 7.0
    assert spec_decode(None, HOUR, model="nobody/none").points == []
    rows = fleet_table(
        list_instances(seen=Seen.all()), Window(T0, T0 + timedelta(hours=1), 60), MODEL
    )
    assert [r.instance for r in rows] == ["gpu-a"]


def test_fleet_wide_answers_sum_every_instance_in_one_row_per_bucket(two_scrapes: None) -> None:
    _load("gpu-b", "current-0.11-a.prom", "current-0.11-b.prom")
    # both instances saw the same: 100 drafts, 300 draft tokens, 120 accepted in all
    assert spec_decode(None, HOUR).overall == SpecDecodeTotals(
        100.0, 300.0, 120.0, 120 / 300, 1 + 120 / 100
    )
    # TTFT <= 0.5: 5 of 7 on each
    assert slo_attainment("ttft", 0.5, None, HOUR).overall.attained == 10.0
    assert latency("e2e", 0.5, None, HOUR).overall_mean == pytest.approx(18.5)
    assert latency("ttft", 0.5, None, HOUR).overall == pytest.approx(0.3125)
