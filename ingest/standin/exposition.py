"""Renders simulated engines as vLLM's `/metrics` the way the real server does: a
prometheus_client CollectorRegistry of real Counter, Gauge and Histogram objects (vLLM
emulates its two info metrics with gauges, so does this), written by generate_latest.

V1 follows vLLM 0.14's V1 engine (vllm/v1/metrics/loggers.py PrometheusStatLogger,
vllm/v1/spec_decode/metrics.py SpecDecodingProm, the NIXL connector's NixlPromMetrics):
the same names, help texts, label names and bucket bounds, an `engine` label and a
`_created` series per counter and histogram. Spec decoding, LoRA and the NIXL families
appear only when the engine's switch is on (a server started without the flag registers
none); the external prefix cache and multimodal cache counters are always registered, as
vLLM does, at zero without a connector. V0 keeps the old engine's names, no `engine` label
and no `_created`.

Owns the names, labels and help texts; the values are the simulation's
(ingest/standin/simulation.py) at the moment of the scrape. One `Exposition` lives as long
as its simulated server: each render copies the simulation's totals into the metric
objects (the simulation counts fractional tokens and observes a value many times at once,
which the objects' own inc/observe cannot), then prometheus_client writes the text, so
number formats, escaping and sample order are its own. It writes no exposition text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ingest.standin.histogram import Histogram as SimHistogram
from ingest.standin.simulation import Engine

V1 = "v1"
V0 = "v0"

Pick = Callable[[Engine], float]
SLEEP_STATES = {"awake": 1.0, "weights_offloaded": 0.0, "discard_all": 0.0}
PROMPT_SOURCES: dict[str, Pick] = {
    "local_compute": lambda x: x.counters.prompt_computed,
    "local_cache_hit": lambda x: x.counters.prefix_hits,
    "external_kv_transfer": lambda x: x.counters.prompt_external,
}


def _cache_config(engine: Engine) -> dict[str, str]:
    """CacheConfig.metrics_info() of a stand-in server (its fields as strings)."""
    cfg = engine.cfg
    return {
        "block_size": str(cfg.block_size),
        "cache_dtype": "auto",
        "calculate_kv_scales": "False",
        "cpu_offload_gb": "0",
        "enable_prefix_caching": "True",
        "gpu_memory_utilization": "0.9",
        "is_attention_free": "False",
        "kv_sharing_fast_prefill": "False",
        "num_cpu_blocks": "None",
        "num_gpu_blocks": str(cfg.num_gpu_blocks),
        "num_gpu_blocks_override": "None",
        "prefix_caching_hash_algo": "sha256",
        "sliding_window": "None",
        "swap_space": "4",
    }


class _ProcessCollector:
    """The python/process families prometheus_client adds to every vLLM scrape, with fixed
    figures: the process modelled is the vLLM server, not this one."""

    def __init__(self, engines: dict[str, Engine], created: float) -> None:
        self.engines = engines
        self.created = created

    def collect(self) -> Iterator[Metric]:
        uptime_s = max(0.0, next(iter(self.engines.values())).now - self.created)
        for name, doc, per_generation in (
            ("python_gc_objects_collected", "Objects collected during gc", (5123.0, 812.0, 96.0)),
            (
                "python_gc_objects_uncollectable",
                "Uncollectable objects found during GC",
                (0.0,) * 3,
            ),
            (
                "python_gc_collections",
                "Number of times this generation was collected",
                (410.0, 37.0, 3.0),
            ),
        ):
            gc = CounterMetricFamily(name, doc, labels=["generation"])
            for generation, value in enumerate(per_generation):
                gc.add_metric([str(generation)], value)
            yield gc
        info = GaugeMetricFamily(
            "python_info",
            "Python platform information",
            labels=["implementation", "major", "minor", "patchlevel", "version"],
        )
        info.add_metric(["CPython", "3", "12", "9", "3.12.9"], 1.0)
        yield info
        for name, kind, value in (
            ("process_virtual_memory_bytes", "gauge", 3.1e10),
            ("process_resident_memory_bytes", "gauge", 2.9e9),
            ("process_start_time_seconds", "gauge", self.created),
            ("process_cpu_seconds_total", "counter", 0.35 * uptime_s),
            ("process_open_fds", "gauge", 87.0),
            ("process_max_fds", "gauge", 1048576.0),
        ):
            doc = name.replace("_", " ")
            if kind == "counter":
                yield CounterMetricFamily(name.removesuffix("_total"), doc, value=value)
            else:
                yield GaugeMetricFamily(name, doc, value=value)


class _Families:
    """The metric objects of one registry, each bound to the simulation figure it shows."""

    def __init__(self, exposition: Exposition) -> None:
        self.x = exposition
        self.sync: list[Callable[[], None]] = []

    def gauge(self, name: str, doc: str, pick: Pick, extra: dict[str, Pick] | None = None,
              label: str = "") -> None:  # fmt: skip
        """One child per engine, or per engine and value of `label` (`extra` maps each
        value to its figure)."""
        metric = Gauge(name, doc, [*self.x.labels, *([label] if label else [])],
                       registry=self.x.inner)  # fmt: skip
        for key, engine in self.x.engines.items():
            for value, figure in (extra or {"": pick}).items():
                child = metric.labels(*self.x.values(key), *([value] if label else []))
                self.sync.append(_set_gauge(child, figure, engine))

    def counter(self, name: str, doc: str, pick: Pick, extra: dict[str, Pick] | None = None,
                label: str = "") -> None:  # fmt: skip
        metric = Counter(name, doc, [*self.x.labels, *([label] if label else [])],
                         registry=self.x.inner)  # fmt: skip
        for key, engine in self.x.engines.items():
            for value, figure in (extra or {"": pick}).items():
                child = metric.labels(*self.x.values(key), *([value] if label else []))
                child._created = self.x.created  # the simulated server's start, not ours
                self.sync.append(_set_counter(child, figure, engine))

    def histogram(self, name: str, doc: str, pick: Callable[[Engine], SimHistogram]) -> None:
        bounds = pick(next(iter(self.x.engines.values()))).bounds
        metric = Histogram(name, doc, self.x.labels, registry=self.x.inner,
                           buckets=[float(b) for b in bounds])  # fmt: skip
        for key, engine in self.x.engines.items():
            child = metric.labels(*self.x.values(key))
            child._created = self.x.created
            self.sync.append(_set_histogram(child, pick, engine))


def _set_gauge(child: Gauge, figure: Pick, engine: Engine) -> Callable[[], None]:
    return lambda: child.set(figure(engine))


def _set_counter(child: Counter, figure: Pick, engine: Engine) -> Callable[[], None]:
    # A counter has no public set: the total is the simulation's own, not an increment.
    return lambda: child._value.set(figure(engine))


def _set_histogram(
    child: Histogram, pick: Callable[[Engine], SimHistogram], engine: Engine
) -> Callable[[], None]:
    """The simulation's per-bucket counts and sum into prometheus_client's Histogram (its
    `_buckets` hold per-bucket counts, +Inf last, and it sums them when written)."""

    def copy() -> None:
        h = pick(engine)
        for bucket, count in zip(child._buckets, h.counts, strict=True):
            bucket.set(count)
        child._sum.set(h.total)

    return copy


def _constant(value: float) -> Pick:
    return lambda x: value


def _finished(reason: str) -> Pick:
    return lambda x: x.counters.finished[reason]


class _Filtered:
    """The inner registry's families, without `_created` samples for V0 (whose vLLM wrote
    none)."""

    def __init__(self, inner: CollectorRegistry, drop_created: bool) -> None:
        self.inner = inner
        self.drop_created = drop_created

    def collect(self) -> Iterator[Metric]:
        for metric in self.inner.collect():
            if self.drop_created:
                metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric


class Exposition:
    """The `/metrics` of one simulated server (its engines keyed by engine index), for as
    long as the server lives: a restart makes a new one."""

    def __init__(self, engines: dict[str, Engine], version: str, model: str, created: float):
        self.engines = engines
        self.version = version
        self.model = model
        self.created = created
        self.labels = ["model_name", "engine"] if version == V1 else ["model_name"]
        self.inner = CollectorRegistry(auto_describe=False)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_ProcessCollector(engines, created))
        self.registry.register(_Filtered(self.inner, drop_created=version == V0))
        self.families = _Families(self)
        first = next(iter(engines.values()))
        if version == V1:
            _v1_families(self.families, first)
        else:
            _v0_families(self.families)
        self._lora: Gauge | None = None
        if version == V1 and first.features.lora:
            self._lora = Gauge(
                "vllm:lora_requests_info",
                "Running stats on lora requests.",
                ["max_lora", "waiting_lora_adapters", "running_lora_adapters"],
                registry=self.inner,
            )
        config = Gauge(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            [*_cache_config(first), *(["engine"] if version == V1 else [])],
            registry=self.inner,
        )
        for key, engine in engines.items():
            config.labels(*_cache_config(engine).values(), *self.values(key)[1:]).set(1.0)

    def values(self, engine: str) -> list[str]:
        return [self.model, engine] if self.version == V1 else [self.model]

    def render(self) -> str:
        """The body at the engines' current time (the caller holds the lock over them)."""
        for sync in self.families.sync:
            sync()
        if self._lora is not None:
            states: dict[tuple[str, str, str], float] = {}
            for engine in self.engines.values():
                for key, at in engine.features.lora_states.items():
                    states[key] = max(at, states.get(key, at))
            for key, at in states.items():
                self._lora.labels(*key).set(at)  # vLLM sets each to the time it was seen
        return generate_latest(self.registry).decode()


def _v1_families(f: _Families, first: Engine) -> None:
    """vLLM's V1 families in the order its PrometheusStatLogger registers them."""
    spec = first.features.spec
    if spec is not None:
        f.counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
                  lambda x: x.features.spec.drafts if x.features.spec else 0.0)  # fmt: skip
        f.counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
                  lambda x: x.features.spec.draft_tokens if x.features.spec else 0.0)  # fmt: skip
        f.counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
                  lambda x: x.features.spec.accepted_tokens if x.features.spec else 0.0)  # fmt: skip
        f.counter(
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            lambda x: 0.0,
            {str(i): _accepted_at(i) for i in range(spec.tokens)},
            label="position",
        )
    if first.features.connector is not None:
        for name, doc, histogram in (
            ("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.", lambda x: x.features.xfer_time),
            ("vllm:nixl_post_time_seconds", "Histogram of transfer post time for NIXL KV Cache transfers.", lambda x: x.features.post_time),
            ("vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.", lambda x: x.features.bytes_transferred),
            ("vllm:nixl_num_descriptors", "Histogram of number of descriptors per NIXL KV Cache transfers.", lambda x: x.features.descriptors),
        ):  # fmt: skip
            f.histogram(name, doc, histogram)
        f.counter("vllm:nixl_num_failed_transfers", "Number of failed NIXL KV Cache transfers.",
                  lambda x: _transfers(x, "failed_transfers"))  # fmt: skip
        f.counter("vllm:nixl_num_failed_notifications",
                  "Number of failed NIXL KV Cache notifications.",
                  lambda x: _transfers(x, "failed_notifications"))  # fmt: skip
    f.gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
            lambda x: len(x.running))  # fmt: skip
    f.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
            lambda x: len(x.waiting))  # fmt: skip
    f.gauge(
        "vllm:engine_sleep_state",
        "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is "
        "awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
        lambda x: 0.0,
        {state: _constant(value) for state, value in SLEEP_STATES.items()},
        label="sleep_state",
    )
    f.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
            lambda x: x.kv_usage())  # fmt: skip
    f.counter("vllm:prefix_cache_queries",
              "Prefix cache queries, in terms of number of queried tokens.",
              lambda x: x.counters.prefix_queries)  # fmt: skip
    f.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
              lambda x: x.counters.prefix_hits)  # fmt: skip
    f.counter("vllm:external_prefix_cache_queries",
              "External prefix cache queries from KV connector cross-instance cache sharing, "
              "in terms of number of queried tokens.",
              lambda x: _transfers(x, "external_queries"))  # fmt: skip
    f.counter("vllm:external_prefix_cache_hits",
              "External prefix cache hits from KV connector cross-instance cache sharing, "
              "in terms of number of cached tokens.",
              lambda x: _transfers(x, "external_hits"))  # fmt: skip
    f.counter("vllm:mm_cache_queries",
              "Multi-modal cache queries, in terms of number of queried items.",
              lambda x: 0.0)  # fmt: skip
    f.counter("vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items.",
              lambda x: 0.0)  # fmt: skip
    f.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
              lambda x: x.counters.preemptions)  # fmt: skip
    f.counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
              lambda x: x.counters.prompt_tokens)  # fmt: skip
    f.counter("vllm:prompt_tokens_by_source", "Number of prompt tokens by source.",
              lambda x: 0.0, PROMPT_SOURCES, label="source")  # fmt: skip
    f.counter("vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
              lambda x: x.counters.prefix_hits + x.counters.prompt_external)  # fmt: skip
    f.counter("vllm:prompt_tokens_recomputed",
              "Number of cached tokens recomputed for forward pass.", lambda x: 0.0)  # fmt: skip
    f.counter("vllm:generation_tokens", "Number of generation tokens processed.",
              lambda x: x.counters.generation_tokens)  # fmt: skip
    _request_success(f, first)
    _histograms(f, "vllm:inter_token_latency_seconds")
    f.histogram("vllm:request_prefill_kv_computed_tokens",
                "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
                lambda x: x.prefill_kv_computed)  # fmt: skip


def _v0_families(f: _Families) -> None:
    f.gauge("vllm:num_requests_running", "Number of requests currently running on GPU.",
            lambda x: len(x.running))  # fmt: skip
    f.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
            lambda x: len(x.waiting))  # fmt: skip
    f.gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", lambda x: 0.0)
    f.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.",
            lambda x: x.kv_usage())  # fmt: skip
    f.gauge(
        "vllm:gpu_prefix_cache_hit_rate",
        "GPU prefix cache block hit rate.",
        lambda x: (
            x.counters.prefix_hits / x.counters.prefix_queries
            if x.counters.prefix_queries
            else -1.0
        ),
    )
    f.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
              lambda x: x.counters.preemptions)  # fmt: skip
    f.counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
              lambda x: x.counters.prompt_tokens)  # fmt: skip
    f.counter("vllm:generation_tokens", "Number of generation tokens processed.",
              lambda x: x.counters.generation_tokens)  # fmt: skip
    _request_success(f, None)
    _histograms(f, "vllm:time_per_output_token_seconds")


def _request_success(f: _Families, first: Engine | None) -> None:
    reasons = ("stop", "length", "abort") if first is not None else ("stop", "length")
    f.counter(
        "vllm:request_success",
        "Count of successfully processed requests.",
        lambda x: 0.0,
        {reason: _finished(reason) for reason in reasons},
        label="finished_reason",
    )


def _histograms(f: _Families, itl: str) -> None:
    v1 = itl == "vllm:inter_token_latency_seconds"
    for name, doc, histogram in (
        ("vllm:request_prompt_tokens", "Number of prefill tokens processed.", lambda x: x.prompt_len),
        ("vllm:request_generation_tokens", "Number of generation tokens processed.", lambda x: x.output_len),
        ("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", lambda x: x.iteration_tokens),
        *([("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", lambda x: x.max_generation_tokens)] if v1 else []),
        ("vllm:request_params_n", "Histogram of the n request parameter.", lambda x: x.params_n),
        ("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", lambda x: x.params_max_tokens),
        ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", lambda x: x.ttft),
        (itl, "Histogram of inter-token latency in seconds.", lambda x: x.itl),
        *([("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", lambda x: x.request_tpot)] if v1 else []),
        ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", lambda x: x.e2e),
        ("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", lambda x: x.queue_time),
        ("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", lambda x: x.inference_time),
        ("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", lambda x: x.prefill_time),
        ("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", lambda x: x.decode_time),
    ):  # fmt: skip
        f.histogram(name, doc, histogram)


def _accepted_at(position: int) -> Pick:
    return lambda x: x.features.spec.accepted_per_pos[position] if x.features.spec else 0.0


def _transfers(engine: Engine, name: str) -> float:
    connector = engine.features.connector
    return float(getattr(connector, name)) if connector is not None else 0.0


def render(engines: dict[str, Engine], version: str, model: str, created: float) -> str:
    """One body from a fresh registry (a one-off scrape; a server keeps its Exposition)."""
    return Exposition(engines, version, model, created).render()
