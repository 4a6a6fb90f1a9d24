"""The stand-in's `/metrics`: prometheus_client's own objects carrying the simulation's
figures, vLLM's current V1 names, and each feature's families only when it is switched on."""

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from ingest.standin.exposition import V0, V1, Exposition
from ingest.standin.simulation import Engine, EngineConfig

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SPEC = {
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos",
}
LORA = {"vllm:lora_requests_info"}
CONNECTOR = {
    "vllm:nixl_xfer_time_seconds",
    "vllm:nixl_post_time_seconds",
    "vllm:nixl_bytes_transferred",
    "vllm:nixl_num_descriptors",
    "vllm:nixl_num_failed_transfers",
    "vllm:nixl_num_failed_notifications",
}
ALWAYS = {
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:engine_sleep_state",
    "vllm:kv_cache_usage_perc",
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:external_prefix_cache_queries",
    "vllm:external_prefix_cache_hits",
    "vllm:num_preemptions",
    "vllm:prompt_tokens",
    "vllm:prompt_tokens_by_source",
    "vllm:prompt_tokens_cached",
    "vllm:generation_tokens",
    "vllm:request_success",
    "vllm:request_prompt_tokens",
    "vllm:request_generation_tokens",
    "vllm:time_to_first_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:request_time_per_output_token_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:request_queue_time_seconds",
    "vllm:request_inference_time_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:cache_config_info",
}


def scrape(config: EngineConfig, seconds: float = 900.0, seed: int = 4) -> tuple[Engine, dict]:
    engine = Engine(config, seed, start=1000.0)
    exposition = Exposition({"0": engine}, V1, MODEL, created=1000.0)
    engine.advance_to(1000.0 + seconds, 1.0)
    families = {f.name: f for f in text_string_to_metric_families(exposition.render())}
    return engine, families


def value(families: dict, name: str, **labels: str) -> float:
    [hit] = [s.value for s in families[name].samples if labels.items() <= s.labels.items()]
    return float(hit)


def samples(families: dict, family: str, suffix: str) -> list[Sample]:
    return [s for s in families[family].samples if s.name == family + suffix]


@pytest.mark.parametrize(
    ("switch", "families"),
    [
        ({"spec_tokens": 3}, SPEC),
        ({"lora_adapters": ("sql-lora", "chat-lora")}, LORA),
        ({"kv_connector": True}, CONNECTOR),
    ],
)
def test_a_features_families_appear_only_when_it_is_switched_on(
    switch: dict, families: set[str]
) -> None:
    _, off = scrape(EngineConfig(), seconds=60.0)
    _, on = scrape(EngineConfig(**switch), seconds=60.0)
    assert ALWAYS <= set(off) and ALWAYS <= set(on)
    assert not (SPEC | LORA | CONNECTOR) & set(off)
    assert (SPEC | LORA | CONNECTOR) & set(on) == families


def test_spec_decoding_counts_the_drafts_the_simulation_made() -> None:
    engine, families = scrape(EngineConfig(spec_tokens=3, spec_acceptance=0.7))
    spec = engine.features.spec
    assert spec is not None
    drafts = value(families, "vllm:spec_decode_num_drafts")
    draft_tokens = value(families, "vllm:spec_decode_num_draft_tokens")
    accepted = value(families, "vllm:spec_decode_num_accepted_tokens")
    per_pos = [
        value(families, "vllm:spec_decode_num_accepted_tokens_per_pos", position=str(p))
        for p in range(3)
    ]
    assert (drafts, draft_tokens, accepted) == (
        spec.drafts,
        spec.draft_tokens,
        spec.accepted_tokens,
    )
    assert draft_tokens == pytest.approx(3 * drafts)
    assert 0 < accepted <= draft_tokens
    assert per_pos[0] > per_pos[1] > per_pos[2] > 0
    assert sum(per_pos) == pytest.approx(accepted)
    # every token generated is an accepted draft token or a draft's bonus token
    generated = value(families, "vllm:generation_tokens")
    assert drafts + accepted == pytest.approx(generated)
    # the first position is accepted at about the configured rate (jittered by -8%..+4%)
    assert 0.7 * 0.92 <= per_pos[0] / drafts <= 0.7 * 1.04


def test_lora_info_keeps_every_label_set_at_the_time_the_engine_was_last_in_it() -> None:
    engine = Engine(EngineConfig(lora_adapters=("sql-lora", "chat-lora"), max_loras=2), 4, 0.0)
    exposition = Exposition({"0": engine}, V1, MODEL, created=0.0)
    seen: dict[tuple[str, str, str], float] = {}
    for t in (0.5, 120.0, 240.0, 360.0):
        engine.advance_to(t, 0.5)
        running = ",".join(sorted({r.adapter for r in engine.running if r.adapter}))
        waiting = ",".join(sorted({r.adapter for r in engine.waiting if r.adapter}))
        seen[("2", waiting, running)] = t
        exposition.render()
    families = {f.name: f for f in text_string_to_metric_families(exposition.render())}
    got = {
        (s.labels["max_lora"], s.labels["waiting_lora_adapters"], s.labels["running_lora_adapters"]): s.value
        for s in families["vllm:lora_requests_info"].samples
    }  # fmt: skip
    assert got == seen
    assert ("2", "", "chat-lora,sql-lora") in got  # both adapters did run together


def test_the_kv_connector_loads_part_of_what_the_local_cache_missed() -> None:
    engine, families = scrape(EngineConfig(kv_connector=True))
    queries = value(families, "vllm:external_prefix_cache_queries")
    hits = value(families, "vllm:external_prefix_cache_hits")
    assert 0 < hits < queries
    local = value(families, "vllm:prefix_cache_hits")
    by_source = {
        s.labels["source"]: s.value
        for s in samples(families, "vllm:prompt_tokens_by_source", "_total")
    }
    assert by_source["external_kv_transfer"] == hits
    assert by_source["local_cache_hit"] == local
    assert sum(by_source.values()) == value(families, "vllm:prompt_tokens")
    assert value(families, "vllm:prompt_tokens_cached") == local + hits
    # one transfer per load that found tokens, of 2 (K, V) x 32 layers x 8 heads x 128 x 2 B
    # per token; failed ones load nothing
    [count] = samples(families, "vllm:nixl_bytes_transferred", "_count")
    [total] = samples(families, "vllm:nixl_bytes_transferred", "_sum")
    assert total.value == hits * 131072
    [xfers] = samples(families, "vllm:nixl_xfer_time_seconds", "_count")
    assert xfers.value == count.value > 0
    assert engine.counters.prompt_external == hits


def test_without_a_connector_the_external_counters_stay_at_zero_as_vllm_registers_them() -> None:
    _, families = scrape(EngineConfig(), seconds=120.0)
    assert value(families, "vllm:external_prefix_cache_queries") == 0.0
    assert value(families, "vllm:prompt_tokens_by_source", source="external_kv_transfer") == 0.0
    assert value(families, "vllm:engine_sleep_state", sleep_state="awake") == 1.0
    assert value(families, "vllm:engine_sleep_state", sleep_state="discard_all") == 0.0


def test_histograms_carry_the_simulations_buckets_cumulated_with_its_sum() -> None:
    engine, families = scrape(EngineConfig(), seconds=600.0)
    buckets = samples(families, "vllm:request_time_per_output_token_seconds", "_bucket")
    running, expected = 0.0, []
    for count in engine.request_tpot.counts:
        running += count
        expected.append(running)
    assert [s.value for s in buckets] == expected
    assert [s.labels["le"] for s in buckets][:4] == ["0.01", "0.025", "0.05", "0.075"]
    assert buckets[-1].labels["le"] == "+Inf"
    [total] = samples(families, "vllm:request_time_per_output_token_seconds", "_sum")
    assert total.value == engine.request_tpot.total
    finished = sum(engine.counters.finished.values())
    [e2e] = samples(families, "vllm:e2e_request_latency_seconds", "_count")
    assert e2e.value == finished > 0
    # vLLM's 1-2-5 token buckets up to max_model_len 32768, written as floats
    le = [s.labels["le"] for s in samples(families, "vllm:request_prompt_tokens", "_bucket")]
    assert le[:4] == ["1.0", "2.0", "5.0", "10.0"] and le[-2:] == ["20000.0", "+Inf"]
    iteration = samples(families, "vllm:iteration_tokens_total", "_bucket")
    assert [s.labels["le"] for s in iteration][:3] == ["1.0", "8.0", "16.0"]


def test_counters_and_histograms_carry_the_simulated_servers_start_as_created() -> None:
    _, families = scrape(EngineConfig(spec_tokens=2))
    for name in (
        "vllm:num_preemptions_created",
        "vllm:spec_decode_num_drafts_created",
        "vllm:time_to_first_token_seconds_created",
    ):
        assert [s.value for s in families[name].samples] == [1000.0]


def test_v0_has_the_old_names_no_engine_label_and_no_created_series() -> None:
    engine = Engine(EngineConfig(), 4, start=0.0)
    exposition = Exposition({"0": engine}, V0, MODEL, created=0.0)
    engine.advance_to(300.0, 1.0)
    text = exposition.render()
    names = {f.name for f in text_string_to_metric_families(text)}
    assert {"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"} <= names
    assert not {"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"} & names
    assert "_created" not in text and "engine=" not in text
