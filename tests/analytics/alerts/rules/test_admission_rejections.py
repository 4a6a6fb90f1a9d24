"""The admission_rejections rule against counts worked out by hand: one scrape a minute
from T0 of vLLM 0.32's `vllm:admission_rejections_total` (no `engine` label); before
minute 10 each minute adds 2 refusals at the request cap and none at the token cap, from
minute 10 on 5 and 1. gpu-old exposes no such counter (a release before 0.32)."""

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


def _body(minute: int) -> str:
    before, after = min(minute, 10), max(minute - 10, 0)
    labels = 'model_name="m"'
    return (
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5\n'
        "# TYPE vllm:admission_rejections counter\n"
        f'vllm:admission_rejections_total{{{labels},reason="max_num_queued_reqs"}}'
        f" {2 * before + 5 * after}\n"
        f'vllm:admission_rejections_total{{{labels},reason="max_num_queued_tokens"}} {after}\n'
    )


@pytest.fixture
def served(lake: Path) -> None:
    old = '# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5\n'
    load_scrapes(
        [PendingScrape("gpu-q", T0 + timedelta(minutes=m), scrape=parse_scrape(_body(m))) for m in range(21)]
        + [PendingScrape("gpu-old", T0 + timedelta(minutes=m), scrape=parse_scrape(old)) for m in range(21)]
    )  # fmt: skip


def test_it_counts_the_windows_refusals_and_names_each_reason(served: None) -> None:
    before = evaluate("admission_rejections", 10, 10)["gpu-q"]
    # minutes 5-9: 2 a minute at the request cap, none at the token cap; 10 is not over 10
    assert (before.active, before.value) == (False, 10)
    assert before.summary == (
        "10 requests refused at admission over 5 min (max_num_queued_reqs 10) (threshold 10)"
    )
    after = evaluate("admission_rejections", 10, 20)["gpu-q"]
    # minutes 15-19: 5 a minute at the request cap and 1 at the token cap
    assert (after.active, after.value) == (True, 30)
    assert after.summary == (
        "30 requests refused at admission over 5 min"
        " (max_num_queued_reqs 25, max_num_queued_tokens 5) (threshold 10)"
    )


def test_a_release_without_the_counter_is_never_judged(served: None) -> None:
    old = evaluate("admission_rejections", 0, 20)["gpu-old"]
    assert (old.active, old.value) == (False, None)
    assert old.summary == "no admission-rejection counter (vLLM 0.32+)"


def test_a_negative_threshold_is_refused() -> None:
    with pytest.raises(RuleError, match="not negative"):
        build_rule("admission_rejections", -1, {}, {})
