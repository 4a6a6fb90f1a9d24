"""vLLM `/metrics` samples -> one model across engine generations and renames.

Pure: no I/O, no Django. Owns the mapping of vLLM's metric names (V0 and V1, and the
renames across releases) onto canonical metrics, the `engine` label of data-parallel
engines, `_created` restart markers, engine detection and the checks that make a scrape
acceptable. Every sample is kept; only the modelled ones get a canonical `metric`.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from enum import StrEnum

import orjson

from ingest.parsers.prometheus_text import ExpositionError, Sample, parse_exposition


class EngineKind(StrEnum):
    V0 = "v0"
    V1 = "v1"


class Kind(StrEnum):
    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"


# vLLM family name (as the parser reports it: counters without `_total`) ->
# (canonical metric, declared type it must have, preference: lower wins when a release
# exposes both the old and the new name).
FAMILIES: dict[str, tuple[str, Kind, int]] = {
    "vllm:kv_cache_usage_perc": ("kv_usage", Kind.GAUGE, 0),  # V1 from 0.9.2
    "vllm:gpu_cache_usage_perc": ("kv_usage", Kind.GAUGE, 1),  # V0; removed in 0.12
    "vllm:num_requests_running": ("running", Kind.GAUGE, 0),
    "vllm:num_requests_waiting": ("waiting", Kind.GAUGE, 0),
    "vllm:num_requests_swapped": ("swapped", Kind.GAUGE, 0),  # V0 only
    "vllm:gpu_prefix_cache_hit_rate": ("prefix_hit_rate", Kind.GAUGE, 0),  # V0, -1 = unknown
    "vllm:prefix_cache_hits": ("prefix_hits", Kind.COUNTER, 0),  # V1, tokens
    "vllm:gpu_prefix_cache_hits": ("prefix_hits", Kind.COUNTER, 1),  # early V1 (blocks)
    "vllm:prefix_cache_queries": ("prefix_queries", Kind.COUNTER, 0),
    "vllm:gpu_prefix_cache_queries": ("prefix_queries", Kind.COUNTER, 1),
    "vllm:num_preemptions": ("preemptions", Kind.COUNTER, 0),
    "vllm:prompt_tokens": ("prompt_tokens", Kind.COUNTER, 0),
    "vllm:generation_tokens": ("generation_tokens", Kind.COUNTER, 0),
    "vllm:request_success": ("requests", Kind.COUNTER, 0),
    "vllm:time_to_first_token_seconds": ("ttft", Kind.HISTOGRAM, 0),
    "vllm:inter_token_latency_seconds": ("itl", Kind.HISTOGRAM, 0),  # V1
    "vllm:time_per_output_token_seconds": ("itl", Kind.HISTOGRAM, 1),  # V0; removed in 0.13
    "vllm:e2e_request_latency_seconds": ("e2e", Kind.HISTOGRAM, 0),
    "vllm:request_queue_time_seconds": ("queue_time", Kind.HISTOGRAM, 0),
}

# Families whose presence means the V1 engine even without an `engine` label.
V1_ONLY = frozenset(
    {
        "vllm:kv_cache_usage_perc",
        "vllm:inter_token_latency_seconds",
        "vllm:prefix_cache_queries",
        "vllm:gpu_prefix_cache_queries",
    }
)

BASE_LABELS = frozenset({"model_name", "engine"})
EXTRA_LABELS = {"requests": frozenset({"finished_reason"})}
CACHE_CONFIG = "vllm:cache_config_info"


@dataclass
class ModelledScrape:
    """A scrape's samples as columns (ready for Arrow) plus what it says about the server."""

    names: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    createds: list[float | None] = field(default_factory=list)
    metrics: list[str | None] = field(default_factory=list)
    engines: list[str | None] = field(default_factory=list)
    les: list[float | None] = field(default_factory=list)
    cumulative: list[bool] = field(default_factory=list)
    engine_kind: EngineKind = EngineKind.V0
    model: str | None = None
    engine_count: int = 0
    block_size: int | None = None
    num_gpu_blocks: int | None = None
    prefix_unit: str | None = None

    def __len__(self) -> int:
        return len(self.names)

    def keys(self) -> list[tuple[str, str]]:
        return list(zip(self.names, self.labels, strict=True))


def _labels_json(labels: dict[str, str]) -> str:
    return orjson.dumps(labels, option=orjson.OPT_SORT_KEYS).decode()


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(float(text)) if text not in (None, "", "None") else None
    except ValueError:
        return None


def _chosen_families(samples: list[Sample]) -> dict[str, str]:
    """canonical metric -> the family that feeds it in this scrape (newest name wins)."""
    best: dict[str, tuple[int, str]] = {}
    for family in {s.family for s in samples if s.family in FAMILIES}:
        metric, _, rank = FAMILIES[family]
        if metric not in best or rank < best[metric][0]:
            best[metric] = (rank, family)
    return {metric: family for metric, (_, family) in best.items()}


def _check_labels(sample: Sample, metric: str) -> None:
    allowed = BASE_LABELS | EXTRA_LABELS.get(metric, frozenset())
    if sample.name.endswith("_bucket") and FAMILIES[sample.family][1] is Kind.HISTOGRAM:
        allowed = allowed | {"le"}
    unexpected = sorted(set(sample.labels) - allowed)
    if unexpected:
        raise ExpositionError(f"unexpected labels {', '.join(unexpected)} on {sample.name}")
    if "engine" in sample.labels and not sample.labels["engine"]:
        raise ExpositionError(f"empty engine label on {sample.name}")


def _histogram_part(sample: Sample, metric: str) -> tuple[str, float | None]:
    if sample.name.endswith("_bucket"):
        try:
            return metric, float(sample.labels["le"])
        except (KeyError, ValueError):
            raise ExpositionError(f"bucket without a numeric le on {sample.name}") from None
    if sample.name.endswith("_count"):
        return f"{metric}_count", None
    return f"{metric}_sum", None


@dataclass
class _Template:
    """Everything a scrape's structure decides, and where its values go: which sample
    gives each row its `_created` time, which V0 hit-rate rows drop out when -1."""

    scrape: ModelledScrape
    created_index: list[int]
    hit_rate_rows: list[int]


def _template(samples: list[Sample]) -> _Template:
    if not any(s.name.startswith("vllm:") for s in samples):
        raise ExpositionError("no vllm: metrics in the response")
    chosen = _chosen_families(samples)
    # `<family>_created` gauges (V1) give each counter and histogram its start time.
    cumulative_families = {s.family for s in samples if s.kind in ("counter", "histogram")}
    created_at: dict[tuple[str, str], int] = {}
    for i, s in enumerate(samples):
        if s.name.endswith("_created") and s.name[: -len("_created")] in cumulative_families:
            created_at[(s.name[: -len("_created")], _labels_json(s.labels))] = i

    out = ModelledScrape()
    created_index: list[int] = []
    hit_rate_rows: list[int] = []
    seen: set[tuple[str, str]] = set()
    models: Counter[str] = Counter()
    engines: set[str] = set()
    is_v1 = False
    for row, s in enumerate(samples):
        labels_json = _labels_json(s.labels)
        key = (s.name, labels_json)
        if key in seen:
            raise ExpositionError(f"duplicate series {s.name}{labels_json}")
        seen.add(key)
        metric: str | None = None
        le: float | None = None
        engine = s.labels.get("engine")
        if s.name.startswith("vllm:"):
            if "model_name" in s.labels:
                models[s.labels["model_name"]] += 1
            if engine is not None:
                engines.add(engine)
                is_v1 = True
            if s.family in V1_ONLY or (s.kind == "gauge" and s.name.endswith("_created")):
                is_v1 = True
        spec = FAMILIES.get(s.family)
        if spec is not None and chosen.get(spec[0]) == s.family and s.kind == spec[1]:
            _check_labels(s, spec[0])
            metric = spec[0]
            if spec[1] is Kind.HISTOGRAM:
                metric, le = _histogram_part(s, metric)
            elif metric == "prefix_hit_rate":
                hit_rate_rows.append(row)
        if s.name == CACHE_CONFIG:
            out.block_size = _int_or_none(s.labels.get("block_size"))
            blocks = _int_or_none(s.labels.get("num_gpu_blocks"))
            if blocks is not None:
                out.num_gpu_blocks = max(out.num_gpu_blocks or 0, blocks)
        is_cumulative = s.kind in ("counter", "histogram") or (
            s.kind == "summary" and s.name.endswith(("_count", "_sum"))
        )
        created = -1
        if is_cumulative:
            without_le = {k: v for k, v in s.labels.items() if k != "le"}
            created = created_at.get((s.family, _labels_json(without_le)), -1)
        out.names.append(s.name)
        out.labels.append(labels_json)
        out.kinds.append(s.kind)
        out.metrics.append(metric)
        out.engines.append(engine if engine is not None else ("0" if metric else None))
        out.les.append(le)
        out.cumulative.append(is_cumulative)
        created_index.append(created)

    out.engine_kind = EngineKind.V1 if is_v1 else EngineKind.V0
    out.model = models.most_common(1)[0][0] if models else None
    out.engine_count = max(len(engines), 1)
    out.prefix_unit = _prefix_unit(chosen, samples)
    return _Template(out, created_index, hit_rate_rows)


def _fill(template: _Template, values: list[float]) -> ModelledScrape:
    metrics = template.scrape.metrics
    if any(values[row] < 0 for row in template.hit_rate_rows):
        metrics = list(metrics)
        for row in template.hit_rate_rows:
            if values[row] < 0:
                metrics[row] = None  # V0 reports -1 until it knows; averaging it in would lie
    createds = [values[i] if i >= 0 else None for i in template.created_index]
    return replace(template.scrape, values=values, createds=createds, metrics=metrics)


def model_samples(samples: list[Sample]) -> ModelledScrape:
    """Map parsed samples onto the canonical model; ExpositionError when the scrape is
    not a vLLM scrape or breaks the model (unexpected labels, duplicate series)."""
    return _fill(_template(samples), [s.value for s in samples])


def _prefix_unit(chosen: dict[str, str], samples: list[Sample]) -> str | None:
    family = chosen.get("prefix_queries")
    if family == "vllm:prefix_cache_queries":
        return "tokens"
    if family == "vllm:gpu_prefix_cache_queries":
        # 0.8.x counted blocks; later releases kept the old name but counted tokens.
        doc = next((s.help for s in samples if s.family == family), "")
        return "tokens" if "token" in doc.lower() else "blocks"
    if "prefix_hit_rate" in chosen:
        return "rate"
    return None


# Scrapes of one server repeat the same series in the same order; only values change.
# The structure of a body (every line with its value cut off) keys the parsed template,
# so prometheus_client parses each distinct structure once; values are read per scrape.
_TEMPLATES: OrderedDict[str, _Template] = OrderedDict()
_TEMPLATE_CACHE_SIZE = 128


def _split_values(text: str) -> tuple[str | None, list[float]]:
    """(structure, values in line order), or (None, []) when a line does not end in a
    plain value (the full parser then decides)."""
    parts: list[str] = []
    values: list[float] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] == "#":
            parts.append(line)
            continue
        series, sep, value = line.rpartition(" ")
        if not sep:
            return None, []
        try:
            values.append(float(value))
        except ValueError:
            return None, []
        parts.append(series)
    return "\n".join(parts), values


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def parse_scrape(text: str) -> ModelledScrape:
    """Exposition text -> modelled scrape, or ExpositionError with a one-line reason."""
    structure, values = _split_values(text)
    if structure is not None:
        cached = _TEMPLATES.get(structure)
        if cached is not None:
            _TEMPLATES.move_to_end(structure)
            return _fill(cached, values)
    samples = parse_exposition(text)
    template = _template(samples)
    parsed = [s.value for s in samples]
    # Cache only when the cheap split read exactly what the real parser read.
    if (
        structure is not None
        and len(parsed) == len(values)
        and all(_same(a, b) for a, b in zip(parsed, values, strict=True))
    ):
        _TEMPLATES[structure] = template
        if len(_TEMPLATES) > _TEMPLATE_CACHE_SIZE:
            _TEMPLATES.popitem(last=False)
    return _fill(template, parsed)
