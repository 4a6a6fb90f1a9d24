"""Builds vLLM `/metrics` bodies with exact values, in V1 or V0 naming, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field

TTFT_BOUNDS = (0.1, 0.5, 1.0)


@dataclass
class EngineState:
    kv_usage: float = 0.0
    running: float = 0.0
    waiting: float = 0.0
    preemptions: float = 0.0
    prefix_hits: float = 0.0
    prefix_queries: float = 0.0
    prompt_tokens: float = 0.0
    generation_tokens: float = 0.0
    requests: float = 0.0
    # cumulative counts for le = 0.1, 0.5, 1.0, +Inf
    ttft: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    ttft_sum: float = 0.0
    created: float = 1_700_000_000.0
    extra_labels: dict[str, str] = field(default_factory=dict)


def _labels(pairs: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in pairs.items()) + "}"


def v1_text(engines: dict[str, EngineState], model: str = "meta-llama/Llama-3.1-8B") -> str:
    """A V1 scrape: `engine` label, `_created` gauges, kv_cache_usage_perc, token counters."""
    out: list[str] = []

    def family(name: str, kind: str, lines: list[str]) -> None:
        out.append(f"# HELP {name} test family")
        out.append(f"# TYPE {name} {kind}")
        out.extend(lines)

    def base(engine: str, st: EngineState) -> dict[str, str]:
        return {"engine": engine, "model_name": model, **st.extra_labels}

    for name, attr in (
        ("vllm:num_requests_running", "running"),
        ("vllm:num_requests_waiting", "waiting"),
        ("vllm:kv_cache_usage_perc", "kv_usage"),
    ):
        family(
            name,
            "gauge",
            [f"{name}{_labels(base(e, s))} {getattr(s, attr)}" for e, s in engines.items()],
        )
    for name, attr, doc in (
        ("vllm:prefix_cache_queries", "prefix_queries", ""),
        ("vllm:prefix_cache_hits", "prefix_hits", ""),
        ("vllm:num_preemptions", "preemptions", ""),
        ("vllm:prompt_tokens", "prompt_tokens", ""),
        ("vllm:generation_tokens", "generation_tokens", ""),
    ):
        del doc
        family(
            f"{name}_total",
            "counter",
            [f"{name}_total{_labels(base(e, s))} {getattr(s, attr)}" for e, s in engines.items()],
        )
        family(
            f"{name}_created",
            "gauge",
            [f"{name}_created{_labels(base(e, s))} {s.created}" for e, s in engines.items()],
        )
    family(
        "vllm:request_success_total",
        "counter",
        [
            f"vllm:request_success_total{_labels({**base(e, s), 'finished_reason': 'stop'})}"
            f" {s.requests}"
            for e, s in engines.items()
        ],
    )
    lines = []
    for e, s in engines.items():
        for bound, count in zip((*map(str, TTFT_BOUNDS), "+Inf"), s.ttft, strict=True):
            lines.append(
                f"vllm:time_to_first_token_seconds_bucket"
                f"{_labels({'engine': e, 'le': bound, 'model_name': model})} {count}"
            )
        lines.append(f"vllm:time_to_first_token_seconds_count{_labels(base(e, s))} {s.ttft[-1]}")
        lines.append(f"vllm:time_to_first_token_seconds_sum{_labels(base(e, s))} {s.ttft_sum}")
    family("vllm:time_to_first_token_seconds", "histogram", lines)
    family(
        "vllm:time_to_first_token_seconds_created",
        "gauge",
        [
            f"vllm:time_to_first_token_seconds_created{_labels(base(e, s))} {s.created}"
            for e, s in engines.items()
        ],
    )
    family(
        "vllm:cache_config_info",
        "gauge",
        [
            'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",'
            'num_gpu_blocks="1000"} 1.0'
        ],
    )
    return "\n".join(out) + "\n"


def v0_text(st: EngineState, model: str = "facebook/opt-125m", hit_rate: float = -1.0) -> str:
    """A V0 scrape: no engine label, no `_created`, gpu_cache_usage_perc, hit-rate gauge."""
    m = f'model_name="{model}"'
    lines = [
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{m}}} {st.running}",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{m}}} {st.waiting}",
        "# TYPE vllm:gpu_cache_usage_perc gauge",
        f"vllm:gpu_cache_usage_perc{{{m}}} {st.kv_usage}",
        "# TYPE vllm:gpu_prefix_cache_hit_rate gauge",
        f"vllm:gpu_prefix_cache_hit_rate{{{m}}} {hit_rate}",
        "# TYPE vllm:num_preemptions_total counter",
        f"vllm:num_preemptions_total{{{m}}} {st.preemptions}",
        "# TYPE vllm:time_to_first_token_seconds histogram",
    ]
    for bound, count in zip((*map(str, TTFT_BOUNDS), "+Inf"), st.ttft, strict=True):
        lines.append(f'vllm:time_to_first_token_seconds_bucket{{le="{bound}",{m}}} {count}')
    lines.append(f"vllm:time_to_first_token_seconds_count{{{m}}} {st.ttft[-1]}")
    lines.append(f"vllm:time_to_first_token_seconds_sum{{{m}}} {st.ttft_sum}")
    return "\n".join(lines) + "\n"
