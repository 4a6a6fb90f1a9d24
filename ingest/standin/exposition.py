"""Renders a simulated engine as vLLM's `/metrics` text: V1 names with an `engine` label
and `<name>_created` gauges, or V0 names without either (as prometheus_client writes them).
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.standin.simulation import Engine, Histogram

V1 = "v1"
V0 = "v0"


def _fmt(value: float) -> str:
    return repr(float(value))


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    inner = ",".join(f'{k}="{v}"' for k, v in pairs)
    return "{" + inner + "}"


class _Writer:
    def __init__(self, version: str, model: str, created: float) -> None:
        self.version = version
        self.model = model
        self.created = created
        self.lines: list[str] = []

    def base(self, engine: str) -> list[tuple[str, str]]:
        if self.version == V1:
            return [("engine", engine), ("model_name", self.model)]
        return [("model_name", self.model)]

    def head(self, name: str, kind: str, doc: str) -> None:
        self.lines.append(f"# HELP {name} {doc}")
        self.lines.append(f"# TYPE {name} {kind}")

    def gauge(self, name: str, doc: str, values: dict[str, float]) -> None:
        self.head(name, "gauge", doc)
        for engine, v in values.items():
            self.lines.append(f"{name}{_labels(self.base(engine))} {_fmt(v)}")

    def _created(self, name: str, doc: str, rows: list[list[tuple[str, str]]]) -> None:
        if self.version != V1:
            return
        self.head(f"{name}_created", "gauge", doc)
        for labels in rows:
            self.lines.append(f"{name}_created{_labels(labels)} {_fmt(self.created)}")

    def counter(self, name: str, doc: str, values: dict[str, float], extra: str = "") -> None:
        self.head(f"{name}_total", "counter", doc)
        rows = []
        for key, v in values.items():
            engine, _, reason = key.partition("/")
            labels = self.base(engine)
            if extra:
                labels = [*labels, (extra, reason)]
            rows.append(labels)
            self.lines.append(f"{name}_total{_labels(labels)} {_fmt(v)}")
        self._created(name, doc, rows)

    def histogram(self, name: str, doc: str, values: dict[str, Histogram]) -> None:
        self.head(name, "histogram", doc)
        for engine, h in values.items():
            base = self.base(engine)
            cumulative = h.cumulative()
            for bound, count in zip((*map(_fmt, h.bounds), "+Inf"), cumulative, strict=True):
                # vLLM's label order: engine, le, model_name
                labels = sorted([*base, ("le", bound)])
                self.lines.append(f"{name}_bucket{_labels(labels)} {_fmt(count)}")
            self.lines.append(f"{name}_count{_labels(base)} {_fmt(cumulative[-1])}")
            self.lines.append(f"{name}_sum{_labels(base)} {_fmt(h.total)}")
        self._created(name, doc, [self.base(e) for e in values])


def _process_block(w: _Writer, uptime_s: float) -> None:
    """The python/process families prometheus_client adds to every vLLM scrape."""
    for family, doc, values in (
        ("python_gc_objects_collected", "Objects collected during gc", (5123.0, 812.0, 96.0)),
        ("python_gc_objects_uncollectable", "Uncollectable objects found during GC", (0.0,) * 3),
        (
            "python_gc_collections",
            "Number of times this generation was collected",
            (410.0, 37.0, 3.0),
        ),
    ):
        w.head(f"{family}_total", "counter", doc)
        for generation, value in enumerate(values):
            w.lines.append(f'{family}_total{{generation="{generation}"}} {_fmt(value)}')
    w.head("python_info", "gauge", "Python platform information")
    w.lines.append(
        'python_info{implementation="CPython",major="3",minor="12",patchlevel="9",'
        'version="3.12.9"} 1.0'
    )
    for name, kind, value in (
        ("process_virtual_memory_bytes", "gauge", 3.1e10),
        ("process_resident_memory_bytes", "gauge", 2.9e9),
        ("process_start_time_seconds", "gauge", w.created),
        ("process_cpu_seconds_total", "counter", 0.35 * uptime_s),
        ("process_open_fds", "gauge", 87.0),
        ("process_max_fds", "gauge", 1048576.0),
    ):
        w.head(name, kind, name.replace("_", " "))
        w.lines.append(f"{name} {_fmt(value)}")


def render(engines: dict[str, Engine], version: str, model: str, created: float) -> str:
    w = _Writer(version, model, created)
    _process_block(w, max(0.0, next(iter(engines.values())).now - created))
    first = next(iter(engines.values()))
    cfg = first.cfg
    w.head("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
    w.lines.append(
        "vllm:cache_config_info"
        + _labels(
            [
                ("block_size", str(cfg.block_size)),
                ("cache_dtype", "auto"),
                ("enable_prefix_caching", "True"),
                ("gpu_memory_utilization", "0.9"),
                ("num_cpu_blocks", "0"),
                ("num_gpu_blocks", str(cfg.num_gpu_blocks)),
            ]
        )
        + " 1.0"
    )
    w.gauge(
        "vllm:num_requests_running",
        "Number of requests in model execution batches.",
        {e: len(x.running) for e, x in engines.items()},
    )
    w.gauge(
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        {e: len(x.waiting) for e, x in engines.items()},
    )
    if version == V1:
        w.gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            {e: x.kv_usage() for e, x in engines.items()},
        )
        w.counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            {e: x.counters.prefix_queries for e, x in engines.items()},
        )
        w.counter(
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            {e: x.counters.prefix_hits for e, x in engines.items()},
        )
    else:
        w.gauge(
            "vllm:num_requests_swapped",
            "Number of requests swapped to CPU.",
            dict.fromkeys(engines, 0.0),
        )
        w.gauge(
            "vllm:gpu_cache_usage_perc",
            "GPU KV-cache usage. 1 means 100 percent usage.",
            {e: x.kv_usage() for e, x in engines.items()},
        )
        w.gauge(
            "vllm:gpu_prefix_cache_hit_rate",
            "GPU prefix cache block hit rate.",
            {
                e: (
                    x.counters.prefix_hits / x.counters.prefix_queries
                    if x.counters.prefix_queries
                    else -1.0
                )
                for e, x in engines.items()
            },
        )
    w.counter(
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        {e: x.counters.preemptions for e, x in engines.items()},
    )
    w.counter(
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        {e: x.counters.prompt_tokens for e, x in engines.items()},
    )
    w.counter(
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        {e: x.counters.generation_tokens for e, x in engines.items()},
    )
    w.counter(
        "vllm:request_success",
        "Count of successfully processed requests.",
        {
            f"{e}/{reason}": n
            for e, x in engines.items()
            for reason, n in x.counters.finished.items()
        },
        extra="finished_reason",
    )
    w.histogram(
        "vllm:iteration_tokens_total",
        "Histogram of number of tokens per engine_step.",
        {e: x.iteration_tokens for e, x in engines.items()},
    )
    w.histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        {e: x.ttft for e, x in engines.items()},
    )
    itl = (
        "vllm:inter_token_latency_seconds"
        if version == V1
        else "vllm:time_per_output_token_seconds"
    )
    w.histogram(
        itl, "Histogram of inter-token latency in seconds.", {e: x.itl for e, x in engines.items()}
    )
    w.histogram(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        {e: x.e2e for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase.",
        {e: x.queue_time for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase.",
        {e: x.prefill_time for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase.",
        {e: x.decode_time for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.",
        {e: x.inference_time for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_params_n",
        "Histogram of the n request parameter.",
        {e: x.params_n for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_params_max_tokens",
        "Histogram of the max_tokens request parameter.",
        {e: x.params_max_tokens for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_prompt_tokens",
        "Number of prefill tokens processed.",
        {e: x.prompt_len for e, x in engines.items()},
    )
    w.histogram(
        "vllm:request_generation_tokens",
        "Number of generation tokens processed.",
        {e: x.output_len for e, x in engines.items()},
    )
    return "\n".join(w.lines) + "\n"
