"""vLLM `/metrics` samples -> one model across engine generations and renames.

Pure: no I/O, no Django. Owns the mapping of vLLM's metric names (V0 and V1, the renames
across releases 0.6 to today, Ray Serve's `ray_vllm:` exports) onto canonical metrics, the
labels folded into a stored metric name (`requests:stop`), the `engine` label of
data-parallel engines, `_created` restart markers, engine detection and the checks that
make a scrape acceptable. Every sample is kept; only the modelled ones get a canonical
`metric`. What the metrics mean is analytics/serving/'s.
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


# The alias map. vLLM family name (as the parser reports it: counters without `_total`;
# Ray Serve's `ray_vllm:` exports are read as their `vllm:` names, see `family_of`) ->
# (canonical metric, declared type it must have, preference: lower wins when a release
# exposes both the old and the new name). Names from vLLM's own source: V0's
# vllm/engine/metrics.py (0.6-0.10), V1's vllm/v1/metrics/loggers.py,
# vllm/v1/spec_decode/metrics.py and the NIXL connector's metrics
# (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py), 0.7-0.11+; the
# `gpu_` names were removed in 0.12, `time_per_output_token_seconds` in 0.13.
#
# Latency decision: `itl` is inter-token latency, one observation per decode step
# (V1's `inter_token_latency_seconds`, which V0's and early V1's
# `time_per_output_token_seconds` always measured under its old name); `tpot` is the
# per-request mean time per output token (`request_time_per_output_token_seconds`, one
# observation per finished request, 0.11+). The two are never mixed: a release without
# the per-request histogram has no `tpot`.
FAMILIES: dict[str, tuple[str, Kind, int]] = {
    # -- requests and the engine
    "vllm:num_requests_running": ("running", Kind.GAUGE, 0),
    "vllm:num_requests_waiting": ("waiting", Kind.GAUGE, 0),
    "vllm:num_requests_waiting_by_reason": ("waiting_by_reason", Kind.GAUGE, 0),  # 0.12+
    "vllm:num_requests_swapped": ("swapped", Kind.GAUGE, 0),  # V0 only
    "vllm:request_success": ("requests", Kind.COUNTER, 0),  # by finished_reason
    "vllm:corrupted_requests": ("corrupted_requests", Kind.COUNTER, 0),  # NaNs in logits
    # Requests the frontend refused (HTTP 503) at --max-num-queued-reqs or
    # --max-num-queued-tokens, by `reason`; 0.32+ (vLLM PR #55812), no `engine` label.
    "vllm:admission_rejections": ("admission_rejections", Kind.COUNTER, 0),
    "vllm:num_preemptions": ("preemptions", Kind.COUNTER, 0),
    "vllm:engine_sleep_state": ("sleep_state", Kind.GAUGE, 0),  # by sleep_state
    # -- KV cache and prefix caches
    "vllm:kv_cache_usage_perc": ("kv_usage", Kind.GAUGE, 0),  # V1 from 0.9.2
    "vllm:gpu_cache_usage_perc": ("kv_usage", Kind.GAUGE, 1),  # V0; removed in 0.12
    "vllm:gpu_prefix_cache_hit_rate": ("prefix_hit_rate", Kind.GAUGE, 0),  # V0, -1 = unknown
    "vllm:prefix_cache_hits": ("prefix_hits", Kind.COUNTER, 0),  # V1, tokens
    "vllm:gpu_prefix_cache_hits": ("prefix_hits", Kind.COUNTER, 1),  # early V1 (blocks)
    "vllm:prefix_cache_queries": ("prefix_queries", Kind.COUNTER, 0),
    "vllm:gpu_prefix_cache_queries": ("prefix_queries", Kind.COUNTER, 1),
    "vllm:external_prefix_cache_hits": ("external_prefix_hits", Kind.COUNTER, 0),
    "vllm:external_prefix_cache_queries": ("external_prefix_queries", Kind.COUNTER, 0),
    "vllm:mm_cache_hits": ("mm_cache_hits", Kind.COUNTER, 0),
    "vllm:mm_cache_queries": ("mm_cache_queries", Kind.COUNTER, 0),
    "vllm:kv_block_lifetime_seconds": ("kv_block_lifetime", Kind.HISTOGRAM, 0),
    "vllm:kv_block_idle_before_evict_seconds": ("kv_block_idle_before_evict", Kind.HISTOGRAM, 0),
    "vllm:kv_block_reuse_gap_seconds": ("kv_block_reuse_gap", Kind.HISTOGRAM, 0),
    # -- tokens
    "vllm:prompt_tokens": ("prompt_tokens", Kind.COUNTER, 0),
    "vllm:generation_tokens": ("generation_tokens", Kind.COUNTER, 0),
    "vllm:prompt_tokens_by_source": ("prompt_tokens_by_source", Kind.COUNTER, 0),  # by source
    "vllm:prompt_tokens_cached": ("prompt_tokens_cached", Kind.COUNTER, 0),
    "vllm:prompt_tokens_recomputed": ("prompt_tokens_recomputed", Kind.COUNTER, 0),
    "vllm:request_prefill_kv_computed_tokens": ("prefill_kv_computed_tokens", Kind.HISTOGRAM, 0),
    "vllm:request_prompt_tokens": ("request_prompt_tokens", Kind.HISTOGRAM, 0),
    "vllm:request_generation_tokens": ("request_generation_tokens", Kind.HISTOGRAM, 0),
    "vllm:request_max_num_generation_tokens": ("request_max_generation_tokens", Kind.HISTOGRAM, 0),
    "vllm:request_params_n": ("request_params_n", Kind.HISTOGRAM, 0),
    "vllm:request_params_max_tokens": ("request_params_max_tokens", Kind.HISTOGRAM, 0),
    "vllm:iteration_tokens_total": ("iteration_tokens", Kind.HISTOGRAM, 0),  # named _total
    # -- latency by phase (seconds)
    "vllm:time_to_first_token_seconds": ("ttft", Kind.HISTOGRAM, 0),
    "vllm:inter_token_latency_seconds": ("itl", Kind.HISTOGRAM, 0),  # V1 0.11+
    "vllm:time_per_output_token_seconds": ("itl", Kind.HISTOGRAM, 1),  # removed in 0.13
    "vllm:request_time_per_output_token_seconds": ("tpot", Kind.HISTOGRAM, 0),  # per request
    "vllm:e2e_request_latency_seconds": ("e2e", Kind.HISTOGRAM, 0),
    "vllm:request_queue_time_seconds": ("queue_time", Kind.HISTOGRAM, 0),
    "vllm:time_in_queue_requests": ("queue_time", Kind.HISTOGRAM, 1),  # V0 0.6
    "vllm:request_prefill_time_seconds": ("prefill_time", Kind.HISTOGRAM, 0),
    "vllm:request_decode_time_seconds": ("decode_time", Kind.HISTOGRAM, 0),
    "vllm:request_inference_time_seconds": ("inference_time", Kind.HISTOGRAM, 0),
    # -- speculative decoding (V0's spec_decode counters have the same names)
    "vllm:spec_decode_num_drafts": ("spec_drafts", Kind.COUNTER, 0),  # V1
    "vllm:spec_decode_num_draft_tokens": ("spec_draft_tokens", Kind.COUNTER, 0),
    "vllm:spec_decode_num_accepted_tokens": ("spec_accepted_tokens", Kind.COUNTER, 0),
    "vllm:spec_decode_num_accepted_tokens_per_pos": ("spec_accepted_by_position", Kind.COUNTER, 0),
    # -- KV transfer through the NIXL connector
    "vllm:nixl_xfer_time_seconds": ("nixl_xfer_time", Kind.HISTOGRAM, 0),
    "vllm:nixl_post_time_seconds": ("nixl_post_time", Kind.HISTOGRAM, 0),
    "vllm:nixl_bytes_transferred": ("nixl_bytes", Kind.HISTOGRAM, 0),
    "vllm:nixl_num_descriptors": ("nixl_descriptors", Kind.HISTOGRAM, 0),
    "vllm:nixl_num_failed_transfers": ("nixl_failed_transfers", Kind.COUNTER, 0),
    "vllm:nixl_num_failed_notifications": ("nixl_failed_notifications", Kind.COUNTER, 0),
    "vllm:nixl_num_kv_expired_reqs": ("nixl_expired_requests", Kind.COUNTER, 0),
    # -- model FLOPs utilisation inputs (--enable-mfu-metrics)
    "vllm:estimated_flops_per_gpu": ("mfu_flops_per_gpu", Kind.COUNTER, 0),
    "vllm:estimated_read_bytes_per_gpu": ("mfu_read_bytes_per_gpu", Kind.COUNTER, 0),
    "vllm:estimated_write_bytes_per_gpu": ("mfu_write_bytes_per_gpu", Kind.COUNTER, 0),
}

# Families whose presence means the V1 engine even without an `engine` label.
V1_ONLY = frozenset(
    {
        "vllm:kv_cache_usage_perc",
        "vllm:inter_token_latency_seconds",
        "vllm:request_time_per_output_token_seconds",
        "vllm:prefix_cache_queries",
        "vllm:gpu_prefix_cache_queries",
        "vllm:spec_decode_num_drafts",
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "vllm:prompt_tokens_by_source",
        "vllm:num_requests_waiting_by_reason",
        "vllm:engine_sleep_state",
        "vllm:admission_rejections",
    }
)

BASE_LABELS = frozenset({"model_name", "engine"})
# Labels a modelled metric may carry beyond BASE_LABELS. Each is folded into the stored
# metric name (`requests:stop`, `spec_accepted_by_position:0`), so rollups keep the
# breakdown; readers sum `<metric>` and every `<metric>:<value>` for the total.
EXTRA_LABELS = {
    "requests": frozenset({"finished_reason"}),
    "waiting_by_reason": frozenset({"reason"}),
    "admission_rejections": frozenset({"reason"}),
    "sleep_state": frozenset({"sleep_state"}),
    "prompt_tokens_by_source": frozenset({"source"}),
    "spec_accepted_by_position": frozenset({"position"}),
}
# Ray Serve's exports (`ray_vllm:` names) add Ray's own process labels; one Fleetscope
# target is one Ray deployment, whose replicas are summed like engines without a label.
RAY_PREFIX = "ray_"
RAY_LABELS = frozenset(
    {
        "WorkerId",
        "Component",
        "NodeAddress",
        "SessionName",
        "JobId",
        "ReplicaId",
        "application",
        "deployment",
        "replica",
        "ray_io_cluster",
    }
)
# LoRA adapters are named in labels of a gauge whose value is a timestamp (the newest
# label set is the current one), so it is kept raw only; analytics/serving reads it there.
LORA_INFO = "vllm:lora_requests_info"
LORA_LABELS = ("running_lora_adapters", "waiting_lora_adapters", "max_lora")
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


_VLLM_PREFIXES = ("vllm:", "ray_vllm:")


def family_of(family: str) -> str:
    """The alias map's key for a parsed family: Ray Serve's `ray_vllm:x` is `vllm:x`."""
    return family[len(RAY_PREFIX) :] if family.startswith("ray_vllm:") else family


def stored_metric(metric: str, labels: dict[str, str]) -> str:
    """The metric name a modelled sample is stored under: its EXTRA_LABELS value folded
    in (`requests:stop`), the bare name when the sample does not carry it."""
    for label in sorted(EXTRA_LABELS.get(metric, ())):
        value = labels.get(label)
        if value:
            return f"{metric}:{value}"
    return metric


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
    for family in {family_of(s.family) for s in samples} & FAMILIES.keys():
        metric, _, rank = FAMILIES[family]
        if metric not in best or rank < best[metric][0]:
            best[metric] = (rank, family)
    return {metric: family for metric, (_, family) in best.items()}


def _check_labels(sample: Sample, metric: str) -> None:
    allowed = BASE_LABELS | EXTRA_LABELS.get(metric, frozenset())
    if sample.name.startswith(RAY_PREFIX):
        allowed = allowed | RAY_LABELS
    if sample.name.endswith("_bucket") and FAMILIES[family_of(sample.family)][1] is Kind.HISTOGRAM:
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
    if not any(s.name.startswith(_VLLM_PREFIXES) for s in samples):
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
        family = family_of(s.family)
        if s.name.startswith(_VLLM_PREFIXES):
            if "model_name" in s.labels:
                models[s.labels["model_name"]] += 1
            if engine is not None:
                engines.add(engine)
                is_v1 = True
            if family in V1_ONLY or (s.kind == "gauge" and s.name.endswith("_created")):
                is_v1 = True
        spec = FAMILIES.get(family)
        if spec is not None and chosen.get(spec[0]) == family and s.kind == spec[1]:
            _check_labels(s, spec[0])
            metric = stored_metric(spec[0], s.labels)
            if spec[1] is Kind.HISTOGRAM:
                metric, le = _histogram_part(s, metric)
            elif metric == "prefix_hit_rate":
                hit_rate_rows.append(row)
        if family_of(s.name) == CACHE_CONFIG:
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
        doc = next((s.help for s in samples if family_of(s.family) == family), "")
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
