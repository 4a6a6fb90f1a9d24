"""KV-cache capacity of a vLLM instance, in tokens, requests and (with a model config) bytes.

Capacity comes from vllm:cache_config_info (num_gpu_blocks x block_size per engine); bytes
per token from the model's attention shape as the reference article computes it
(2 x layers x KV heads x head dim x bytes per value: 128 KiB for Llama 3.1 8B).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from analytics.serving import queries as serving
from analytics.serving.instances import latest_gauges, require_instance
from lib.access import Seen

DEFAULT_CONTEXT_TOKENS = 4096.0  # when no request finished in the last hour


@dataclass(frozen=True)
class Capacity:
    """What the instance's KV cache holds: None where the scrapes did not say (no
    cache_config_info) or no model config gives the bytes."""

    instance: str
    model: str | None
    engines: int
    block_size: int | None
    num_gpu_blocks: int | None
    capacity_tokens: int | None  # over every engine
    tokens_in_use: float | None
    kv_usage: float | None  # mean over engines at the last scrape, 0..1
    context_tokens: float  # the request length `requests_that_fit` counts
    requests_that_fit: int | None
    kv_bytes_per_token: int | None
    capacity_bytes: int | None


def requests_that_fit(num_gpu_blocks: int, block_size: int, engines: int, context: float) -> int:
    """Whole requests of `context` tokens each engine's blocks hold (a request occupies
    whole blocks: PagedAttention wastes only its last, partly filled one)."""
    blocks_per_request = max(1, math.ceil(context / block_size))
    return engines * (num_gpu_blocks // blocks_per_request)


def capacity_for(instance: str, context_tokens: float | None = None, *, seen: Seen) -> Capacity:
    """The instance's capacity, for requests of `context_tokens` (by default the mean
    finished request of the hour before its last scrape); NotFoundError (404) when `seen`
    does not see it."""
    from analytics.serving.models import ModelConfig

    row = require_instance(instance, seen)
    engines = row.engines or 1
    block_size, blocks = row.block_size, row.num_gpu_blocks
    capacity = blocks * block_size * engines if block_size and blocks else None
    kv = latest_gauges(instance).kv_usage
    context = context_tokens
    if context is None and row.last_scrape is not None:
        end = row.last_scrape + timedelta(seconds=1)
        window = serving.make_window(instance, end - timedelta(hours=1), end, 60, seen=seen)
        context = serving.mean_request_tokens(instance, window)
    if context is None:
        context = DEFAULT_CONTEXT_TOKENS
    config = ModelConfig.objects.filter(model=row.model).first() if row.model else None
    per_token = config.kv_bytes_per_token if config else None
    return Capacity(
        instance=instance,
        model=row.model,
        engines=engines,
        block_size=block_size,
        num_gpu_blocks=blocks,
        capacity_tokens=capacity,
        tokens_in_use=kv * capacity if kv is not None and capacity else None,
        kv_usage=kv,
        context_tokens=context,
        requests_that_fit=(
            requests_that_fit(blocks, block_size, engines, context)
            if capacity and blocks and block_size
            else None
        ),
        kv_bytes_per_token=per_token,
        capacity_bytes=capacity * per_token if capacity and per_token else None,
    )
