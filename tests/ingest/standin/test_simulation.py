"""The stand-in's engine model: its running tally of KV blocks, its surge factor, vLLM's
buckets, and features that leave its queueing alone."""

from ingest.standin.simulation import Engine, EngineConfig, Histogram, one_two_five


def test_the_blocks_in_use_are_the_running_requests_blocks_at_every_step() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=512), seed=3, start=0.0)
    engine.rate_factor = 4.0
    for _ in range(2000):
        engine.step(0.5)
        assert engine.blocks_in_use == sum(r.blocks for r in engine.running)
        assert all(r.running for r in engine.running)
        assert not any(r.running for r in engine.waiting)
    assert engine.counters.preemptions > 0  # the small cache did overflow


def test_a_surge_multiplies_the_arrivals() -> None:
    calm = Engine(EngineConfig(), seed=5, start=0.0)
    surge = Engine(EngineConfig(), seed=5, start=0.0)
    surge.rate_factor = 3.0
    assert surge._rate() == 3 * calm._rate()  # same seed, same burst phase


def test_a_histogram_counts_a_value_in_the_first_bucket_at_or_above_it() -> None:
    h = Histogram((1.0, 2.0))
    for value in (0.5, 1.0, 1.5, 2.0, 9.0):
        h.observe(value, 2.0)
    assert h.counts == [4.0, 4.0, 2.0]
    assert h.cumulative() == [4.0, 8.0, 10.0]
    assert h.total == 2 * (0.5 + 1.0 + 1.5 + 2.0 + 9.0)


def test_token_buckets_are_vllms_1_2_5_series_up_to_the_model_length() -> None:
    assert one_two_five(100) == (1, 2, 5, 10, 20, 50, 100)
    assert one_two_five(32_768)[-3:] == (5000, 10000, 20000)


def test_spec_decoding_and_lora_leave_the_engines_queueing_as_it_was() -> None:
    plain = Engine(EngineConfig(num_gpu_blocks=1024), seed=8, start=0.0)
    featured = Engine(
        EngineConfig(num_gpu_blocks=1024, spec_tokens=3, lora_adapters=("a", "b")),
        seed=8,
        start=0.0,
    )
    for engine in (plain, featured):
        engine.rate_factor = 2.0
        engine.advance_to(1800.0, 1.0)
    assert featured.counters == plain.counters
    assert featured.ttft.counts == plain.ttft.counts
    assert [r.arrived for r in featured.waiting] == [r.arrived for r in plain.waiting]
    assert plain.counters.preemptions > 0
    assert {r.adapter for r in featured.waiting} == {"a", "b", None}
