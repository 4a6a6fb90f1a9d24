"""The stand-in vLLM server: real metric names, continuous-batching dynamics, restarts."""

from datetime import UTC, datetime
from pathlib import Path

from analytics.serving import queries as serving
from ingest.parsers.vllm import EngineKind, parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from ingest.standin.simulation import EngineConfig
from ingest.standin_vllm import StandinServer


def test_v1_standin_exposes_vllm_v1_names_for_each_engine() -> None:
    standin = StandinServer(engines=2, seed=3)
    scrape = parse_scrape(standin.metrics(now=standin.created + 120))
    assert scrape.engine_kind is EngineKind.V1
    assert scrape.engine_count == 2
    assert (scrape.block_size, scrape.num_gpu_blocks) == (16, 4096)
    modelled = {m for m in scrape.metrics if m}
    assert {
        "kv_usage",
        "prefix_hits",
        "prefix_queries",
        "preemptions",
        "ttft",
        "itl",
        "e2e",
    } <= modelled
    assert all(
        c == standin.created
        for n, c in zip(scrape.names, scrape.createds, strict=True)
        if n.startswith("vllm:") and n.endswith("_total")
    )


def test_v0_standin_has_no_engine_label_and_no_created_gauges() -> None:
    standin = StandinServer(version="v0", seed=3)
    text = standin.metrics(now=standin.created + 60)
    scrape = parse_scrape(text)
    assert scrape.engine_kind is EngineKind.V0
    assert "_created" not in text and "engine=" not in text
    assert "vllm:gpu_cache_usage_perc" in scrape.names


def test_a_burst_fills_the_kv_cache_and_causes_preemptions() -> None:
    config = EngineConfig(num_gpu_blocks=512, burst_rate_per_s=8.0, burst_every_s=60.0)
    standin = StandinServer(seed=5, config=config)
    standin.metrics(now=standin.created + 600)
    engine = standin.engines["0"]
    assert engine.counters.preemptions > 0
    assert engine.counters.prefix_hits > 0
    assert sum(engine.counters.finished.values()) > 0


def test_a_restart_is_counted_as_a_reset_by_the_loader(lake: Path) -> None:
    standin = StandinServer(seed=9)
    t0 = standin.created
    first = parse_scrape(standin.metrics(now=t0 + 300))
    before = standin.engines["0"].counters.generation_tokens
    standin.restart(now=t0 + 400)
    second = parse_scrape(standin.metrics(now=standin.created + 60))
    after = standin.engines["0"].counters.generation_tokens
    when = datetime.fromtimestamp(t0 + 300, tz=UTC)
    result = load_scrapes(
        [
            PendingScrape("standin", when, scrape=first),
            PendingScrape(
                "standin", datetime.fromtimestamp(standin.created + 60, tz=UTC), scrape=second
            ),
        ]
    )
    assert result.resets > 0
    w = serving.make_window("standin", None, None, 3600)
    total = sum(p["increase"] for p in serving.counter_increase("generation_tokens", "standin", w))
    assert before > 0
    assert total == after  # the new server's tokens, never after - before
