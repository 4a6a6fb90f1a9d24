"""Old names answer as new names: the same observations scraped from a 0.6 server (V0
names) and from a 0.11 server (V1 names) give the same figures, each computed by hand."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.serving import queries as serving
from analytics.serving import signals
from analytics.serving.latency import latency
from analytics.serving.series import Window
from analytics.serving.spec_decode import spec_decode
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vllm-metrics"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = Window(T0, T0 + timedelta(hours=1), 3600)


@pytest.fixture
def old_and_new(lake: Path) -> None:
    pending = []
    for instance, files in (
        ("old", ("v0.6-a.prom", "v0.6-b.prom")),
        ("new", ("current-0.11-a.prom", "current-0.11-b.prom")),
    ):
        for i, name in enumerate(files):
            text = (FIXTURES / name).read_text()
            pending.append(
                PendingScrape(instance, T0 + timedelta(seconds=60 * i), scrape=parse_scrape(text))
            )
    load_scrapes(pending)


@pytest.mark.parametrize("instance", ["old", "new"])
def test_both_releases_give_the_hand_computed_figures(old_and_new: None, instance: str) -> None:
    # KV usage 0.25 then 0.75; running 3 then 5, waiting 2 then 4
    assert serving.kv_usage(instance, HOUR) == [serving.KvPoint(T0, 0.5, 0.75)]
    assert serving.queue(instance, HOUR) == [serving.QueuePoint(T0, 4.0, 3.0, 5.0, 4.0)]
    assert serving.preemptions(instance, HOUR).total == 2.0
    # 3000 prompt and 1500 generation tokens in the hour
    assert serving.throughput(instance, HOUR) == [
        serving.ThroughputPoint(T0, 3000 / 3600, 1500 / 3600)
    ]
    reasons = signals.increase_by_label("requests", instance, HOUR)
    assert {k: v[0].increase for k, v in reasons.items() if k != "error"} == {
        "stop": 5.0,
        "length": 1.0,
        "abort": 1.0,
    }
    # TTFT 0.02 0.1 0.1 0.3 0.45 0.9 2.0: p50 rank 3.5 in (0.25, 0.5] holding 2, 3 below:
    # 0.25 + 0.25 * 0.5 / 2
    ttft = latency("ttft", 0.5, instance, HOUR)
    assert ttft.overall == pytest.approx(0.3125)
    assert ttft.overall_mean == pytest.approx(3.87 / 7)
    # inter-token latency 0.01 0.05 0.09 0.15 (V0 calls it time_per_output_token)
    assert latency("itl", 0.5, instance, HOUR).overall_mean == pytest.approx(0.3 / 4)
    # queue time (V0 0.6: time_in_queue_requests) 0.3 0.5 0.8 1.0 2.0 0.05 0.05
    assert latency("queue", 0.5, instance, HOUR).overall_mean == pytest.approx(4.7 / 7)
    # 60 of 150 draft tokens accepted
    assert spec_decode(instance, HOUR).overall.acceptance_rate == pytest.approx(0.4)


def test_only_the_current_release_has_drafts_and_per_request_tpot(old_and_new: None) -> None:
    assert spec_decode("old", HOUR).overall.mean_acceptance_length is None
    assert spec_decode("new", HOUR).overall.mean_acceptance_length == pytest.approx(2.2)
    assert latency("tpot", 0.5, "old", HOUR).points == []
    assert latency("tpot", 0.5, "new", HOUR).overall_mean == pytest.approx(1.05 / 7)
