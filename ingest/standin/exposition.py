"""Renders simulated engines as vLLM's `/metrics` text the way the real server does:
prometheus_client's CollectorRegistry and generate_latest over custom collectors. V1 has
an `engine` label and a `_created` series for each counter and histogram (as
prometheus_client writes them for vLLM V1); V0 has neither.

Owns the metric names, labels and help texts; the values are the simulation's
(ingest/standin/simulation.py) at the moment of the scrape. It writes no exposition text
itself, so number formats, escaping and the order of samples are prometheus_client's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from ingest.standin.simulation import Engine, Histogram

V1 = "v1"
V0 = "v0"

T = TypeVar("T")


class _Families:
    """Builds the families of one scrape, labelled as the engine generation labels them."""

    def __init__(self, version: str, model: str, created: float) -> None:
        self.version = version
        self.model = model
        self.created = created if version == V1 else None

    def _label_names(self, extra: str = "") -> list[str]:
        names = ["engine", "model_name"] if self.version == V1 else ["model_name"]
        return [*names, extra] if extra else names

    def _label_values(self, engine: str, extra: str | None = None) -> list[str]:
        values = [engine, self.model] if self.version == V1 else [self.model]
        return values if extra is None else [*values, extra]

    def gauge(self, name: str, doc: str, values: Mapping[str, float]) -> GaugeMetricFamily:
        """One sample per engine."""
        family = GaugeMetricFamily(name, doc, labels=self._label_names())
        for engine, value in values.items():
            family.add_metric(self._label_values(engine), value)
        return family

    def counter(
        self, name: str, doc: str, values: Mapping[str, float], extra: str = ""
    ) -> CounterMetricFamily:
        """`name`_total per engine (keys "engine/value of `extra`" when `extra` names a
        label), with its `_created` time on V1."""
        family = CounterMetricFamily(name, doc, labels=self._label_names(extra))
        for key, value in values.items():
            engine, _, extra_value = key.partition("/")
            labels = self._label_values(engine, extra_value if extra else None)
            family.add_metric(labels, value, created=self.created)
        return family

    def histogram(
        self, name: str, doc: str, values: Mapping[str, Histogram]
    ) -> HistogramMetricFamily:
        """Cumulative buckets, `_count` and `_sum` per engine, and `_created` on V1."""
        family = HistogramMetricFamily(name, doc, labels=self._label_names())
        for engine, h in values.items():
            labels = self._label_values(engine)
            bounds = [*map(floatToGoString, h.bounds), "+Inf"]
            family.add_metric(labels, list(zip(bounds, h.cumulative(), strict=True)), h.total)
            if self.created is not None:
                # HistogramMetricFamily takes no created time; prometheus_client's own
                # Histogram exposes one, so the sample is added as it would add it.
                by_name = dict(zip(self._label_names(), labels, strict=True))
                family.samples.append(Sample(f"{name}_created", by_name, self.created))
        return family


class _ProcessCollector:
    """The python/process families prometheus_client adds to every vLLM scrape, with fixed
    figures: the process modelled is the vLLM server, not this one."""

    def __init__(self, created: float, uptime_s: float) -> None:
        self.created = created
        self.uptime_s = uptime_s

    def collect(self) -> Iterator[Metric]:
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
            ("process_cpu_seconds_total", "counter", 0.35 * self.uptime_s),
            ("process_open_fds", "gauge", 87.0),
            ("process_max_fds", "gauge", 1048576.0),
        ):
            doc = name.replace("_", " ")
            if kind == "counter":
                yield CounterMetricFamily(name.removesuffix("_total"), doc, value=value)
            else:
                yield GaugeMetricFamily(name, doc, value=value)


class _EngineCollector:
    """vLLM's own families: the cache config, then gauges, counters and histograms."""

    def __init__(self, engines: dict[str, Engine], version: str, model: str, created: float):
        self.engines = engines
        self.version = version
        self.f = _Families(version, model, created)

    def _each(self, pick: Callable[[Engine], T]) -> dict[str, T]:
        """engine -> `pick` of its simulation."""
        return {e: pick(x) for e, x in self.engines.items()}

    def collect(self) -> Iterator[Metric]:
        f, each, v1 = self.f, self._each, self.version == V1
        cfg = next(iter(self.engines.values())).cfg
        config = {
            "block_size": str(cfg.block_size),
            "cache_dtype": "auto",
            "enable_prefix_caching": "True",
            "gpu_memory_utilization": "0.9",
            "num_cpu_blocks": "0",
            "num_gpu_blocks": str(cfg.num_gpu_blocks),
        }
        info = GaugeMetricFamily(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            labels=list(config),
        )
        info.add_metric(list(config.values()), 1.0)
        yield info
        yield f.gauge(
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            each(lambda x: len(x.running)),
        )
        yield f.gauge(
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            each(lambda x: len(x.waiting)),
        )
        if v1:
            yield f.gauge(
                "vllm:kv_cache_usage_perc",
                "KV-cache usage. 1 means 100 percent usage.",
                each(lambda x: x.kv_usage()),
            )
            yield f.counter(
                "vllm:prefix_cache_queries",
                "Prefix cache queries, in terms of number of queried tokens.",
                each(lambda x: x.counters.prefix_queries),
            )
            yield f.counter(
                "vllm:prefix_cache_hits",
                "Prefix cache hits, in terms of number of cached tokens.",
                each(lambda x: x.counters.prefix_hits),
            )
        else:
            yield f.gauge(
                "vllm:num_requests_swapped",
                "Number of requests swapped to CPU.",
                each(lambda x: 0.0),
            )
            yield f.gauge(
                "vllm:gpu_cache_usage_perc",
                "GPU KV-cache usage. 1 means 100 percent usage.",
                each(lambda x: x.kv_usage()),
            )
            yield f.gauge(
                "vllm:gpu_prefix_cache_hit_rate",
                "GPU prefix cache block hit rate.",
                each(
                    lambda x: (
                        x.counters.prefix_hits / x.counters.prefix_queries
                        if x.counters.prefix_queries
                        else -1.0
                    )
                ),
            )
        yield f.counter(
            "vllm:num_preemptions",
            "Cumulative number of preemption from the engine.",
            each(lambda x: x.counters.preemptions),
        )
        yield f.counter(
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            each(lambda x: x.counters.prompt_tokens),
        )
        yield f.counter(
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            each(lambda x: x.counters.generation_tokens),
        )
        yield f.counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            {
                f"{e}/{reason}": n
                for e, x in self.engines.items()
                for reason, n in x.counters.finished.items()
            },
            extra="finished_reason",
        )
        itl = "vllm:inter_token_latency_seconds" if v1 else "vllm:time_per_output_token_seconds"
        for name, doc, histograms in (
            ("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", each(lambda x: x.iteration_tokens)),
            ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", each(lambda x: x.ttft)),
            (itl, "Histogram of inter-token latency in seconds.", each(lambda x: x.itl)),
            ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", each(lambda x: x.e2e)),
            ("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase.", each(lambda x: x.queue_time)),
            ("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase.", each(lambda x: x.prefill_time)),
            ("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase.", each(lambda x: x.decode_time)),
            ("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", each(lambda x: x.inference_time)),
            ("vllm:request_params_n", "Histogram of the n request parameter.", each(lambda x: x.params_n)),
            ("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", each(lambda x: x.params_max_tokens)),
            ("vllm:request_prompt_tokens", "Number of prefill tokens processed.", each(lambda x: x.prompt_len)),
            ("vllm:request_generation_tokens", "Number of generation tokens processed.", each(lambda x: x.output_len)),
        ):  # fmt: skip
            yield f.histogram(name, doc, histograms)


def render(engines: dict[str, Engine], version: str, model: str, created: float) -> str:
    """The `/metrics` body of the simulated server at its engines' current time. A registry
    per scrape: its collectors read the state the caller holds the lock over."""
    uptime_s = max(0.0, next(iter(engines.values())).now - created)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ProcessCollector(created, uptime_s))
    registry.register(_EngineCollector(engines, version, model, created))
    return generate_latest(registry).decode()
