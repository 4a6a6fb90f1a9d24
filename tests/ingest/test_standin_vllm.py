"""The stand-in vLLM server: real metric names, continuous-batching dynamics, restarts."""

import math
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from analytics.serving import queries as serving
from ingest.parsers.vllm import EngineKind, parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, collect_scrape, load_scrapes
from ingest.standin.simulation import EngineConfig
from ingest.standin_vllm import StandinServer, from_args, serve


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
    total = sum(p.increase for p in serving.counter_increase("generation_tokens", "standin", w))
    assert before > 0
    assert total == after  # the new server's tokens, never after - before


def test_counters_and_histograms_carry_created_times_the_way_prometheus_client_writes_them() -> (
    None
):
    standin = StandinServer(engines=2, seed=3)
    text = standin.metrics(standin.created + 60)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    preemptions = families["vllm:num_preemptions"]
    assert preemptions.type == "counter"
    assert [(s.name, s.labels["engine"]) for s in preemptions.samples] == [
        ("vllm:num_preemptions_total", "0"),
        ("vllm:num_preemptions_total", "1"),
    ]
    # `_created` follows each family as a gauge of its own, as generate_latest writes it
    for name in ("vllm:num_preemptions_created", "vllm:time_to_first_token_seconds_created"):
        assert families[name].type == "gauge"
        assert [(s.labels["engine"], s.value) for s in families[name].samples] == [
            ("0", standin.created),
            ("1", standin.created),
        ]
    assert "vllm:kv_cache_usage_perc_created" not in families  # gauges have none
    ttft = families["vllm:time_to_first_token_seconds"]
    assert ttft.type == "histogram"
    buckets = [s for s in ttft.samples if s.name.endswith("_bucket") and s.labels["engine"] == "0"]
    assert [s.labels["le"] for s in buckets][:3] == ["0.001", "0.005", "0.01"]
    assert buckets[-1].labels["le"] == "+Inf"
    reasons = {
        (s.labels["engine"], s.labels["finished_reason"])
        for s in families["vllm:request_success"].samples
    }
    # every finish reason vLLM knows is registered for each engine, at zero until one ends so
    assert reasons == {(e, r) for e in ("0", "1") for r in ("stop", "length", "abort")}


def test_what_the_standin_serves_parses_through_the_scraper() -> None:
    for version, engines in (("v1", 2), ("v0", 1)):
        server = serve(StandinServer(version=version, engines=engines, seed=3), "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            host, port = server.server_address[:2]
            pending = collect_scrape("standin", f"http://{host!s}:{port}/metrics")
        finally:
            server.shutdown()
            server.server_close()
        assert pending.error is None and pending.scrape is not None, version
        assert pending.scrape.engine_kind is EngineKind(version)
        assert pending.scrape.engine_count == engines
        assert (pending.scrape.block_size, pending.scrape.num_gpu_blocks) == (16, 4096)


def test_a_loopback_scrape_through_the_loader_reads_the_simulations_own_state(
    lake: Path,
) -> None:
    config = EngineConfig(num_gpu_blocks=512, burst_rate_per_s=8.0, burst_every_s=60.0)
    standin = StandinServer(seed=5, config=config)
    # Bursts come every burst_every_s of the engine's clock (epoch seconds): started on a
    # multiple of that period, what +90 s finds no longer depends on when the test runs
    # (it did: a start at another phase found the cache 47% full). Advance the engine ahead
    # of the wall clock into a burst: the GET finds it there.
    start = math.ceil(time.time() / config.burst_every_s) * config.burst_every_s
    standin.restart(now=start)
    standin.metrics(now=start + 90)
    server = serve(standin, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        pending = collect_scrape("standin", f"http://{host!s}:{port}/metrics")
    finally:
        server.shutdown()
        server.server_close()
    assert pending.error is None and pending.scrape is not None
    scrape = pending.scrape
    engine = standin.engines["0"]
    got = {
        (m, le): v
        for m, e, le, v in zip(scrape.metrics, scrape.engines, scrape.les, scrape.values, strict=True)
        if m and e == "0"
    }  # fmt: skip

    # KV usage by hand: the shared system prompt's 1024 / 16 blocks while anything runs,
    # plus each running request's own blocks, over the 512 blocks of the cache.
    blocks = (1024 // 16 if engine.running else 0) + sum(r.blocks for r in engine.running)
    assert got[("kv_usage", None)] == min(1.0, blocks / 512) > 0.5
    assert got[("preemptions", None)] == engine.counters.preemptions > 0
    # TTFT: each bucket holds the requests at or under its bound, summed here by hand
    bounds = engine.ttft.bounds
    for i, bound in enumerate(bounds):
        at_or_under = sum(engine.ttft.counts[: i + 1])
        assert got[("ttft", float(bound))] == at_or_under
    assert got[("ttft_count", None)] == sum(engine.ttft.counts) > 0
    assert got[("ttft_sum", None)] == engine.ttft.total

    result = load_scrapes([pending])
    assert (result.scrapes, result.failed, result.samples) == (1, 0, len(scrape))


def test_the_command_line_switches_each_feature_and_refuses_them_on_v0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flags = "--spec-tokens 4 --spec-acceptance 0.6 --kv-connector --max-loras 2".split()
    standin, _ = from_args([*flags, "--lora-adapters", "a, b,"])
    cfg = standin.config
    assert (cfg.spec_tokens, cfg.spec_acceptance, cfg.lora_adapters) == (4, 0.6, ("a", "b"))
    assert (cfg.max_loras, cfg.kv_connector) == (2, True)
    plain, _ = from_args([])
    assert (plain.config.spec_tokens, plain.config.lora_adapters) == (0, ())
    assert plain.config.kv_connector is False
    with pytest.raises(SystemExit) as exit_:
        from_args(["--version", "v0", "--kv-connector"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith("--spec-tokens, --lora-adapters and --kv-connector need --version v1")
    with pytest.raises(SystemExit):
        from_args(["--spec-acceptance", "1.5"])
