import pytest

from ingest.parsers.prometheus_text import ExpositionError
from ingest.parsers.vllm import EngineKind, parse_scrape
from tests.conftest import FIXTURE_ROOT
from tests.vllm_text import EngineState, v1_text

FIXTURES = FIXTURE_ROOT / "vllm-metrics"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def _metric_of(scrape: object, name: str) -> set[str | None]:
    return {m for n, m in zip(scrape.names, scrape.metrics, strict=True) if n == name}  # type: ignore[attr-defined]


def test_v0_datadog_scrape_maps_gpu_cache_usage_and_time_per_output_token() -> None:
    scrape = parse_scrape(_read("v0-datadog-fixture.prom"))
    assert scrape.engine_kind is EngineKind.V0
    assert scrape.model == "facebook/opt-125m"
    assert _metric_of(scrape, "vllm:gpu_cache_usage_perc") == {"kv_usage"}
    assert _metric_of(scrape, "vllm:time_per_output_token_seconds_bucket") == {"itl"}
    assert (scrape.block_size, scrape.num_gpu_blocks) == (16, 7281)
    assert all(c is None for c in scrape.createds)


def test_late_v0_engine_without_engine_label_is_v0_with_every_sample_kept() -> None:
    text = _read("v0engine-0.10-qwen3-0.6b.prom")
    scrape = parse_scrape(text)
    assert scrape.engine_kind is EngineKind.V0
    assert scrape.model == "Qwen/Qwen3-0.6B"
    assert len(scrape) == sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    # vllm:iteration_tokens_total is declared a histogram: its parts are cumulative
    rows = [
        c
        for n, c in zip(scrape.names, scrape.cumulative, strict=True)
        if n.startswith("vllm:iteration_tokens_total")
    ]
    assert rows and all(rows)
    assert (scrape.block_size, scrape.num_gpu_blocks) == (16, 2340)


def test_v1_scrape_has_engine_labels_created_times_and_token_prefix_counters() -> None:
    scrape = parse_scrape(_read("v1-head-llmd-workshop.prom"))
    assert scrape.engine_kind is EngineKind.V1
    assert scrape.prefix_unit == "tokens"
    created = dict(zip(scrape.names, scrape.createds, strict=True))
    assert created["vllm:num_preemptions_total"] == 1.7769301736864786e09
    assert created["vllm:kv_cache_usage_perc"] is None
    assert _metric_of(scrape, "vllm:prefix_cache_hits_total") == {"prefix_hits"}


def test_the_new_prefix_cache_names_win_over_the_deprecated_ones() -> None:
    scrape = parse_scrape(_read("v1-0.10.0-fragments.prom"))
    assert _metric_of(scrape, "vllm:prefix_cache_queries_total") == {"prefix_queries"}
    assert _metric_of(scrape, "vllm:gpu_prefix_cache_hits_total") == {"prefix_hits"}
    assert _metric_of(scrape, "vllm:gpu_prefix_cache_queries_created") == {None}


def test_early_v1_gpu_prefix_counters_in_blocks_are_used_when_alone() -> None:
    text = (
        "# HELP vllm:gpu_prefix_cache_queries_total GPU prefix cache queries,"
        " in terms of number of queried blocks.\n"
        "# TYPE vllm:gpu_prefix_cache_queries_total counter\n"
        'vllm:gpu_prefix_cache_queries_total{model_name="m"} 10.0\n'
    )
    scrape = parse_scrape(text)
    assert scrape.prefix_unit == "blocks"
    assert scrape.metrics == ["prefix_queries"]
    assert scrape.engine_kind is EngineKind.V1


def test_two_engines_are_counted_and_kept_apart() -> None:
    scrape = parse_scrape(
        v1_text({"0": EngineState(kv_usage=0.5), "1": EngineState(kv_usage=0.25)})
    )
    kv = {
        e: v
        for e, m, v in zip(scrape.engines, scrape.metrics, scrape.values, strict=True)
        if m == "kv_usage"
    }
    assert kv == {"0": 0.5, "1": 0.25}
    assert scrape.engine_count == 2


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<html><body>502 Bad Gateway</body></html>\n", "not the Prometheus text format"),
        ("", "no vllm: metrics in the response"),
        ("# TYPE go_goroutines gauge\ngo_goroutines 12\n", "no vllm: metrics in the response"),
        (
            "# TYPE vllm:kv_cache_usage_perc gauge\n"
            'vllm:kv_cache_usage_perc{engine="0",pod="x"} 0.1\n',
            "unexpected labels pod on vllm:kv_cache_usage_perc",
        ),
        (
            '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0"} 1\n'
            'vllm:num_requests_running{engine="0"} 2\n',
            "duplicate series vllm:num_requests_running",
        ),
    ],
)
def test_bad_bodies_are_rejected_with_a_one_line_reason(text: str, reason: str) -> None:
    with pytest.raises(ExpositionError) as exc:
        parse_scrape(text)
    assert reason in str(exc.value)
    assert "\n" not in str(exc.value)


def test_an_unknown_v0_prefix_hit_rate_of_minus_one_is_not_modelled() -> None:
    text = (
        "# TYPE vllm:gpu_prefix_cache_hit_rate gauge\n"
        'vllm:gpu_prefix_cache_hit_rate{model_name="m"} -1\n'
    )
    assert parse_scrape(text).metrics == [None]


def test_a_repeated_structure_reads_new_values_exactly_as_a_full_parse() -> None:
    first = parse_scrape(v1_text({"0": EngineState(kv_usage=0.5, preemptions=3, created=10.0)}))
    second = parse_scrape(v1_text({"0": EngineState(kv_usage=0.75, preemptions=4, created=20.0)}))
    kv = first.metrics.index("kv_usage")
    assert (first.values[kv], second.values[kv]) == (0.5, 0.75)
    pre = first.names.index("vllm:num_preemptions_total")
    assert (second.values[pre], second.createds[pre]) == (4.0, 20.0)
    assert second.names == first.names and second.labels == first.labels


def test_a_sample_with_a_timestamp_is_read_by_the_full_parser() -> None:
    text = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3 1700000000000\n"
    assert parse_scrape(text).values == [3.0]
    assert parse_scrape(text).values == [3.0]


def test_a_counter_typed_without_total_still_counts_its_total_samples() -> None:
    text = (
        "# TYPE vllm:num_preemptions counter\n"
        'vllm:num_preemptions_total{engine="0",model_name="m"} 7\n'
        "# TYPE vllm:num_preemptions_created gauge\n"
        'vllm:num_preemptions_created{engine="0",model_name="m"} 1700000000\n'
    )
    scrape = parse_scrape(text)
    assert scrape.metrics[0] == "preemptions"
    assert (scrape.cumulative[0], scrape.createds[0]) == (True, 1_700_000_000.0)
