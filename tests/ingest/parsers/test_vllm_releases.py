"""The alias map across releases: a current body (0.11, V1) and an old one (0.6, V0)
land on the same canonical metrics, Ray Serve's `ray_vllm:` exports read as `vllm:`,
split labels are folded into the stored name, and ITL and per-request TPOT stay apart."""

import pytest

from ingest.parsers.prometheus_text import ExpositionError
from ingest.parsers.vllm import FAMILIES, EngineKind, parse_scrape, stored_metric
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "vllm-metrics"


def _metrics_by_name(name: str) -> dict[str, set[str | None]]:
    scrape = parse_scrape((FIXTURES / name).read_text())
    out: dict[str, set[str | None]] = {}
    for n, m in zip(scrape.names, scrape.metrics, strict=True):
        out.setdefault(n, set()).add(m)
    return out


def test_a_current_body_models_every_family_it_exposes() -> None:
    scrape = parse_scrape((FIXTURES / "current-0.11-b.prom").read_text())
    assert scrape.engine_kind is EngineKind.V1
    assert scrape.model == "Qwen/Qwen3-8B"
    names = _metrics_by_name("current-0.11-b.prom")
    assert names["vllm:inter_token_latency_seconds_bucket"] == {"itl"}
    assert names["vllm:request_time_per_output_token_seconds_bucket"] == {"tpot"}
    assert names["vllm:request_queue_time_seconds_count"] == {"queue_time_count"}
    assert names["vllm:request_inference_time_seconds_sum"] == {"inference_time_sum"}
    assert names["vllm:spec_decode_num_drafts_total"] == {"spec_drafts"}
    assert names["vllm:spec_decode_num_accepted_tokens_per_pos_total"] == {
        "spec_accepted_by_position:0",
        "spec_accepted_by_position:1",
        "spec_accepted_by_position:2",
    }
    assert names["vllm:request_success_total"] == {
        "requests:stop",
        "requests:length",
        "requests:abort",
        "requests:error",
    }
    assert names["vllm:engine_sleep_state"] == {
        "sleep_state:awake",
        "sleep_state:weights_offloaded",
        "sleep_state:discard_all",
    }
    assert names["vllm:num_requests_waiting_by_reason"] == {
        "waiting_by_reason:capacity",
        "waiting_by_reason:deferred",
    }
    assert names["vllm:iteration_tokens_total_bucket"] == {"iteration_tokens"}
    # the LoRA gauge names adapters in labels and holds a timestamp: kept raw only
    assert names["vllm:lora_requests_info"] == {None}
    # every sample is kept
    text = (FIXTURES / "current-0.11-b.prom").read_text()
    assert len(scrape) == sum(1 for line in text.splitlines() if line and line[0] != "#")


def test_the_old_names_of_0_6_map_onto_the_same_metrics() -> None:
    names = _metrics_by_name("v0.6-b.prom")
    assert names["vllm:gpu_cache_usage_perc"] == {"kv_usage"}
    # V0's time_per_output_token_seconds was one observation per decode step: itl
    assert names["vllm:time_per_output_token_seconds_bucket"] == {"itl"}
    assert names["vllm:time_in_queue_requests_bucket"] == {"queue_time"}
    assert names["vllm:spec_decode_num_accepted_tokens_total"] == {"spec_accepted_tokens"}
    assert names["vllm:request_success_total"] == {
        "requests:stop",
        "requests:length",
        "requests:abort",
    }
    assert parse_scrape((FIXTURES / "v0.6-b.prom").read_text()).engine_kind is EngineKind.V0


def test_ray_serve_exports_read_as_vllm_names_with_rays_labels_allowed() -> None:
    text = (
        "# TYPE ray_vllm:num_requests_running gauge\n"
        'ray_vllm:num_requests_running{Component="core_worker",ReplicaId="r1",'
        'WorkerId="w1",engine="0",model_name="m"} 4.0\n'
        "# TYPE ray_vllm:prompt_tokens counter\n"
        'ray_vllm:prompt_tokens_total{ReplicaId="r1",engine="0",model_name="m"} 10.0\n'
        "# TYPE ray_vllm:request_time_per_output_token_seconds histogram\n"
        'ray_vllm:request_time_per_output_token_seconds_bucket{engine="0",le="0.05",model_name="m"} 1.0\n'
        'ray_vllm:request_time_per_output_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 2.0\n'
        'ray_vllm:request_time_per_output_token_seconds_count{engine="0",model_name="m"} 2.0\n'
        'ray_vllm:request_time_per_output_token_seconds_sum{engine="0",model_name="m"} 0.1\n'
    )
    scrape = parse_scrape(text)
    assert scrape.metrics == ["running", "prompt_tokens", "tpot", "tpot", "tpot_count", "tpot_sum"]
    assert scrape.les[:4] == [None, None, 0.05, float("inf")]
    assert scrape.model == "m"


def test_a_label_the_model_does_not_know_is_still_refused() -> None:
    text = (
        "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter\n"
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0",'
        'draft_model="x"} 1.0\n'
    )
    with pytest.raises(ExpositionError, match="unexpected labels draft_model"):
        parse_scrape(text)


def test_split_labels_fold_into_the_stored_name_only_when_present() -> None:
    assert stored_metric("requests", {"finished_reason": "stop"}) == "requests:stop"
    assert stored_metric("requests", {}) == "requests"
    assert stored_metric("kv_usage", {"finished_reason": "stop"}) == "kv_usage"


def test_every_family_is_a_vllm_name_with_one_canonical_metric_of_one_type() -> None:
    by_metric: dict[str, set[str]] = {}
    for family, (metric, kind, _) in FAMILIES.items():
        assert family.startswith("vllm:")
        by_metric.setdefault(metric, set()).add(kind.value)
    assert all(len(kinds) == 1 for kinds in by_metric.values())
    # renamed families rank differently, so one name always wins
    for metric in ("kv_usage", "itl", "queue_time", "prefix_hits", "prefix_queries"):
        ranks = [r for m, _, r in FAMILIES.values() if m == metric]
        assert len(ranks) == len(set(ranks)) == 2
