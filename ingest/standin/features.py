"""The stand-in engine's optional features: speculative decoding, LoRA adapters and a KV
connector (NIXL transfers from a cross-instance prefix cache), each off unless its
`EngineConfig` switch is set, as a vLLM server started without the flag has none.

Pure and seeded like the engine (ingest/standin/simulation.py), with a random stream of
its own: switching a feature on never changes the engine's arrivals, so the queueing the
demo's figures show stays the same. Owns what each feature counts; it must not render
metrics (ingest/standin/exposition.py does) or decide admission and preemption.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ingest.standin.histogram import Histogram

if TYPE_CHECKING:  # the engine's config, without an import cycle
    from ingest.standin.simulation import EngineConfig

# vLLM's NIXL connector buckets (nixl_connector.py): seconds for a transfer's post and
# duration (the duration drops the first bound), 2 KiB to 8 GiB for bytes, 10^4..10^9
# for descriptors.
NIXL_TIME_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
NIXL_BYTES_BUCKETS = tuple(float(2 ** (10 + i)) for i in range(1, 25, 2))
NIXL_DESCRIPTOR_BUCKETS = tuple(float(10 ** (4 + i)) for i in range(6))
# K and V, 32 layers, 8 KV heads of 128 dimensions in bf16: Llama-3.1-8B's KV per token.
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2
LAYERS = 32
NIXL_BYTES_PER_S = 20e9  # one RDMA link's effective bandwidth
NIXL_FAILURE_CHANCE = 0.003


@dataclass
class SpecDecode:
    """vLLM's spec-decode counters: a draft proposes `tokens` tokens; position i is
    accepted only if every one before it was, so per-position counts fall with position."""

    tokens: int
    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted_tokens: float = 0.0
    accepted_per_pos: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.accepted_per_pos = [0.0] * self.tokens


@dataclass
class Transfers:
    """The connector's counters and the per-transfer observations (NIXL histograms)."""

    external_queries: float = 0.0
    external_hits: float = 0.0
    failed_transfers: float = 0.0
    failed_notifications: float = 0.0


class Features:
    """What the switched-on features add to one engine's steps."""

    def __init__(self, cfg: EngineConfig, seed: int) -> None:
        self.cfg = cfg
        self.rng = random.Random(seed * 7919 + 17)  # noqa: S311 - a seeded simulation
        self.spec = SpecDecode(cfg.spec_tokens) if cfg.spec_tokens > 0 else None
        self.lora = bool(cfg.lora_adapters)
        # (max_lora, waiting adapters, running adapters) -> the last time the engine was in
        # that state: vLLM's lora_requests_info keeps every label set it ever set
        self.lora_states: dict[tuple[str, str, str], float] = {}
        self.connector = Transfers() if cfg.kv_connector else None
        self.xfer_time = Histogram(NIXL_TIME_BUCKETS[1:])
        self.post_time = Histogram(NIXL_TIME_BUCKETS)
        self.bytes_transferred = Histogram(NIXL_BYTES_BUCKETS)
        self.descriptors = Histogram(NIXL_DESCRIPTOR_BUCKETS)

    def adapter(self) -> str | None:
        """The adapter a new request names, or None (the base model): equally likely."""
        if not self.lora:
            return None
        choice = int(self.rng.random() * (len(self.cfg.lora_adapters) + 1))
        return self.cfg.lora_adapters[choice] if choice < len(self.cfg.lora_adapters) else None

    def lora_state(self, now: float, waiting: list[str | None], running: list[str | None]) -> None:
        if not self.lora:
            return
        key = (
            str(self.cfg.max_loras),
            ",".join(sorted({a for a in waiting if a})),
            ",".join(sorted({a for a in running if a})),
        )
        self.lora_states[key] = now

    def external_hits(self, missing_tokens: int) -> tuple[int, float]:
        """(tokens the connector loads of the ones the local cache missed, seconds the load
        takes); (0, 0) when the connector is off, finds nothing or the transfer fails."""
        if self.connector is None or missing_tokens <= 0:
            return 0, 0.0
        self.connector.external_queries += missing_tokens
        found = int(missing_tokens * self.cfg.external_hit_fraction * self.rng.random())
        if found <= 0:
            return 0, 0.0
        if self.rng.random() < NIXL_FAILURE_CHANCE:
            self.connector.failed_transfers += 1
            return 0, 0.0
        size = float(found * KV_BYTES_PER_TOKEN)
        seconds = 0.004 + size / NIXL_BYTES_PER_S * self.rng.uniform(0.9, 1.4)
        self.connector.external_hits += found
        self.xfer_time.observe(seconds)
        self.post_time.observe(0.0008 * self.rng.uniform(0.5, 2.5))
        self.bytes_transferred.observe(size)
        blocks = math.ceil(found / self.cfg.block_size)
        self.descriptors.observe(float(blocks * LAYERS * 2))
        return found, seconds

    def decoded(self, tokens: float) -> None:
        """`tokens` generated this step: each draft yields its accepted tokens and a bonus
        token, so drafts = tokens / (1 + expected accepted per draft)."""
        if self.spec is None or tokens <= 0:
            return
        rate = min(0.98, self.cfg.spec_acceptance * self.rng.uniform(0.92, 1.04))
        per_pos = [rate ** (i + 1) for i in range(self.spec.tokens)]
        drafts = tokens / (1.0 + sum(per_pos))
        self.spec.drafts += drafts
        self.spec.draft_tokens += drafts * self.spec.tokens
        for i, p in enumerate(per_pos):
            self.spec.accepted_per_pos[i] += drafts * p
            self.spec.accepted_tokens += drafts * p
