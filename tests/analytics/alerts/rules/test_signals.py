"""The rules over current vLLM's signals against values computed by hand: one scrape a
minute from T0, every figure steady for ten minutes and then changed, each rule judged
over the window before minute 10 (before the change) and minute 20 (after it)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analytics.alerts.rules import RuleError, build_rule
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.analytics.alerts.rules.findings import evaluate
from tests.analytics.alerts.scenarios import T0

pytestmark = pytest.mark.django_db
LABELS = 'engine="0",model_name="m"'


def _body(minute: int) -> str:
    """Counters as totals up to `minute`: before minute 10 each minute adds 10 drafts of
    30 tokens with 24 accepted, 10 requests all with TTFT <= 0.5 s and no corrupted one;
    from minute 10 on, 6 tokens accepted, 5 of the 10 requests over 0.5 s and 2 corrupted.
    Gauges: 0 requests waiting for capacity, then 4; awake, then weights offloaded."""
    before, after = min(minute, 10), max(minute - 10, 0)
    drafts, draft_tokens = 10 * minute, 30 * minute
    accepted = 24 * before + 6 * after
    requests, fast = 10 * minute, 10 * before + 5 * after
    corrupted = 2 * after
    changed = minute >= 10
    lines = [
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f"vllm:kv_cache_usage_perc{{{LABELS}}} 0.5",
        "# TYPE vllm:num_requests_waiting_by_reason gauge",
        f'vllm:num_requests_waiting_by_reason{{{LABELS},reason="capacity"}} {4 if changed else 0}',
        f'vllm:num_requests_waiting_by_reason{{{LABELS},reason="deferred"}} 0',
        "# TYPE vllm:engine_sleep_state gauge",
        f'vllm:engine_sleep_state{{{LABELS},sleep_state="awake"}} {0 if changed else 1}',
        f'vllm:engine_sleep_state{{{LABELS},sleep_state="weights_offloaded"}} {1 if changed else 0}',
        "# TYPE vllm:spec_decode_num_drafts counter",
        f"vllm:spec_decode_num_drafts_total{{{LABELS}}} {drafts}",
        "# TYPE vllm:spec_decode_num_draft_tokens counter",
        f"vllm:spec_decode_num_draft_tokens_total{{{LABELS}}} {draft_tokens}",
        "# TYPE vllm:spec_decode_num_accepted_tokens counter",
        f"vllm:spec_decode_num_accepted_tokens_total{{{LABELS}}} {accepted}",
        "# TYPE vllm:corrupted_requests counter",
        f"vllm:corrupted_requests_total{{{LABELS}}} {corrupted}",
        "# TYPE vllm:time_to_first_token_seconds histogram",
        f'vllm:time_to_first_token_seconds_bucket{{{LABELS},le="0.5"}} {fast}',
        f'vllm:time_to_first_token_seconds_bucket{{{LABELS},le="+Inf"}} {requests}',
        f"vllm:time_to_first_token_seconds_count{{{LABELS}}} {requests}",
        f"vllm:time_to_first_token_seconds_sum{{{LABELS}}} {0.3 * requests}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def served(lake: Path) -> None:
    load_scrapes(
        [
            PendingScrape("gpu-1", T0 + timedelta(minutes=m), scrape=parse_scrape(_body(m)))
            for m in range(0, 21)
        ]
    )


def test_spec_acceptance_fires_when_the_accepted_share_falls(served: None) -> None:
    params = {"window": "5m"}
    before = evaluate("spec_acceptance", 0.5, 10, params=params)["gpu-1"]
    assert not before.active and before.value == pytest.approx(24 / 30)
    after = evaluate("spec_acceptance", 0.5, 20, params=params)["gpu-1"]
    assert after.active and after.value == pytest.approx(6 / 30)  # 30 of 150 draft tokens
    assert after.summary == "20.0% of 150 draft tokens accepted over 5 min (threshold 50%)"
    few = evaluate("spec_acceptance", 0.5, 20, params={"window": "1m"})["gpu-1"]
    assert not few.active and "too few to judge" in few.summary  # 30 < 100 draft tokens


def test_slo_attainment_fires_below_target_and_says_when_the_target_is_between_buckets(
    served: None,
) -> None:
    params = {"window": "5m", "metric": "ttft", "target": "500ms"}
    assert evaluate("slo_attainment", 0.9, 10, params=params)["gpu-1"].value == 1.0
    after = evaluate("slo_attainment", 0.9, 20, params=params)["gpu-1"]
    assert after.active and after.value == pytest.approx(0.5)  # 25 of 50 requests
    between = evaluate("slo_attainment", 0.9, 20, params={**params, "target": "700ms"})
    assert between["gpu-1"].value == pytest.approx(0.5)
    assert "a lower bound" in between["gpu-1"].summary
    with pytest.raises(RuleError, match=r"params\.target"):
        build_rule("slo_attainment", 0.9, {}, {"metric": "ttft"})
    with pytest.raises(RuleError, match=r"params\.metric"):
        build_rule("slo_attainment", 0.9, {}, {"metric": "itl", "target": "1s"})


def test_waiting_for_capacity_fires_on_the_windows_mean(served: None) -> None:
    assert not evaluate("waiting_capacity", 3, 10)["gpu-1"].active
    after = evaluate("waiting_capacity", 3, 20)["gpu-1"]
    assert after.active and after.value == pytest.approx(4)


def test_an_engine_put_to_sleep_fires_and_an_awake_one_does_not(served: None) -> None:
    awake = evaluate("engine_asleep", None, 9)["gpu-1"]
    assert (awake.active, awake.summary) == (False, "awake")
    asleep = evaluate("engine_asleep", None, 20)["gpu-1"]
    assert (asleep.active, asleep.summary) == (True, "engine asleep: weights_offloaded")


def test_corrupted_requests_count_over_the_window(served: None) -> None:
    assert evaluate("corrupted_requests", 0, 10)["gpu-1"].value == 0
    after = evaluate("corrupted_requests", 0, 20)["gpu-1"]
    assert after.active and after.value == 10  # 2 a minute for 5 minutes
