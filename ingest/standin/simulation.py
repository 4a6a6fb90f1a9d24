"""A continuous-batching model of one vLLM engine, advanced in fixed time steps.

Pure (no I/O, seeded randomness). What it reproduces, after the reference article:
requests arrive (Poisson, with bursts), wait, are admitted when enough free KV blocks
exist, prefill (their shared system prompt hits the prefix cache while it stays cached),
then decode one token per step each; every block holds `block_size` tokens and a request
takes a new block only when its last one fills. When a running request needs a block and
none is free, the newest request is preempted (recompute: its blocks are dropped and it
waits again). Inter-token latency grows with the batch; TTFT is queueing plus prefill.
Speculative decoding, LoRA and a KV connector are switches of `EngineConfig`
(ingest/standin/features.py); the bucket bounds are vLLM's (vllm/v1/metrics/loggers.py).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field

from ingest.standin.features import Features
from ingest.standin.histogram import Histogram

TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
ITL_BUCKETS = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
REQUEST_SECONDS_BUCKETS = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)
N_BUCKETS = (1, 2, 5, 10, 20)
ITERATION_TOKEN_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def one_two_five(max_value: int) -> tuple[int, ...]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to `max_value`."""
    out: list[int] = []
    exponent = 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_value:
                return tuple(out)
            out.append(value)
        exponent += 1


MAX_MODEL_LEN = 32_768
TOKEN_BUCKETS = one_two_five(MAX_MODEL_LEN)


@dataclass(eq=False)  # compared by identity: the batch's list.remove() finds this one
class Request:
    arrived: float
    prompt_tokens: int
    output_tokens: int
    shared_prefix: int
    admitted: float | None = None
    first_token_at: float | None = None
    prefill_done_at: float = 0.0
    generated: float = 0.0
    blocks: int = 0
    kv_computed: int | None = None  # new KV tokens of its first prefill (cached ones excluded)
    adapter: str | None = None  # the LoRA adapter it names, None for the base model
    running: bool = False  # in the engine's batch (a flag: a list lookup per token is O(n))


@dataclass
class Counters:
    preemptions: float = 0.0
    prompt_tokens: float = 0.0  # every prompt token prefilled: the three sources' sum
    prompt_computed: float = 0.0  # source local_compute
    prompt_external: float = 0.0  # source external_kv_transfer (the local hits are prefix_hits)
    generation_tokens: float = 0.0
    prefix_queries: float = 0.0
    prefix_hits: float = 0.0
    iterations: float = 0.0
    iteration_tokens: float = 0.0
    finished: dict[str, float] = field(
        default_factory=lambda: {"stop": 0.0, "length": 0.0, "abort": 0.0}
    )


@dataclass
class EngineConfig:
    num_gpu_blocks: int = 4096
    block_size: int = 16
    max_num_seqs: int = 128
    system_prompt_tokens: int = 1024
    base_rate_per_s: float = 1.2
    burst_rate_per_s: float = 6.0
    burst_every_s: float = 180.0
    burst_length_s: float = 30.0
    prefill_tokens_per_s: float = 12_000.0
    max_output_tokens: int = 2048
    # Switches, off by default as on a server started without the flag:
    spec_tokens: int = 0  # num_speculative_tokens of --speculative-config; 0 = no spec decode
    spec_acceptance: float = 0.75  # chance a draft token is accepted after the one before it
    lora_adapters: tuple[str, ...] = ()  # --lora-modules names; () = LoRA off
    max_loras: int = 4  # --max-loras (the stand-in never makes a request wait for a slot)
    kv_connector: bool = False  # NixlConnector with a cross-instance prefix cache
    external_hit_fraction: float = 0.6  # at most this share of locally missed tokens is found


class Engine:
    def __init__(self, config: EngineConfig, seed: int, start: float) -> None:
        self.cfg = config
        self.rng = random.Random(seed)  # noqa: S311 - a seeded simulation, not security
        self.now = start
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.counters = Counters()
        self.ttft = Histogram(TTFT_BUCKETS)
        self.itl = Histogram(ITL_BUCKETS)
        self.e2e = Histogram(REQUEST_SECONDS_BUCKETS)
        self.queue_time = Histogram(REQUEST_SECONDS_BUCKETS)
        self.prefill_time = Histogram(REQUEST_SECONDS_BUCKETS)
        self.decode_time = Histogram(REQUEST_SECONDS_BUCKETS)
        self.prompt_len = Histogram(TOKEN_BUCKETS)
        self.output_len = Histogram(TOKEN_BUCKETS)
        self.iteration_tokens = Histogram(ITERATION_TOKEN_BUCKETS)
        self.inference_time = Histogram(REQUEST_SECONDS_BUCKETS)
        self.request_tpot = Histogram(ITL_BUCKETS)
        self.prefill_kv_computed = Histogram(TOKEN_BUCKETS)
        self.max_generation_tokens = Histogram(TOKEN_BUCKETS)
        self.params_n = Histogram(N_BUCKETS)
        self.params_max_tokens = Histogram(TOKEN_BUCKETS)
        self.prefix_cached_until = -1.0
        self.burst_phase = self.rng.uniform(0, config.burst_every_s)
        self.blocks_in_use = 0  # sum of the running requests' blocks, kept as they change
        self.rate_factor = 1.0  # arrivals times this: a surge (the demo's history raises it)
        self.features = Features(config, seed)

    # --- derived gauges ---
    @property
    def prefix_blocks(self) -> int:
        return self.cfg.system_prompt_tokens // self.cfg.block_size

    def used_blocks(self) -> int:
        shared = self.prefix_blocks if self.running else 0
        return shared + self.blocks_in_use

    def kv_usage(self) -> float:
        return min(1.0, self.used_blocks() / self.cfg.num_gpu_blocks)

    # --- simulation ---
    def _rate(self) -> float:
        in_burst = (self.now + self.burst_phase) % self.cfg.burst_every_s < self.cfg.burst_length_s
        rate = self.cfg.burst_rate_per_s if in_burst else self.cfg.base_rate_per_s
        return rate * self.rate_factor

    def _arrivals(self, dt: float) -> None:
        expected = self._rate() * dt
        # Poisson by inversion: small expectations per step
        k, p, threshold = 0, 1.0, math.exp(-expected)
        while True:
            p *= self.rng.random()
            if p <= threshold:
                break
            k += 1
        for _ in range(k):
            user = int(min(12_000, self.rng.lognormvariate(6.3, 0.9)))
            output = int(min(self.cfg.max_output_tokens, max(8, self.rng.lognormvariate(5.3, 0.8))))
            prompt = self.cfg.system_prompt_tokens + user
            request = Request(self.now, prompt, output, self.cfg.system_prompt_tokens)
            request.adapter = self.features.adapter()
            self.waiting.append(request)

    def _blocks_for(self, tokens: float) -> int:
        return max(1, math.ceil(tokens / self.cfg.block_size))

    def _admit(self) -> None:
        while self.waiting and len(self.running) < self.cfg.max_num_seqs:
            req = self.waiting[0]
            prefix_cached = self.now <= self.prefix_cached_until or bool(self.running)
            own_tokens = req.prompt_tokens - req.shared_prefix + int(req.generated)
            need = self._blocks_for(own_tokens) + (0 if self.running else self.prefix_blocks)
            if self.used_blocks() + need > self.cfg.num_gpu_blocks:
                return
            self.waiting.popleft()
            hits = req.shared_prefix if prefix_cached else 0
            tokens = req.prompt_tokens + int(req.generated)
            external, load_s = self.features.external_hits(tokens - hits)
            computed = tokens - hits - external
            self.counters.prefix_queries += req.prompt_tokens
            self.counters.prefix_hits += hits
            self.counters.prompt_tokens += tokens
            self.counters.prompt_computed += computed
            self.counters.prompt_external += external
            if req.kv_computed is None:
                req.kv_computed = computed
            if req.admitted is None:
                req.admitted = self.now
                self.queue_time.observe(self.now - req.arrived)
            req.blocks = self._blocks_for(own_tokens)
            req.prefill_done_at = self.now + load_s + computed / self.cfg.prefill_tokens_per_s
            self.running.append(req)
            req.running = True
            self.blocks_in_use += req.blocks
            self.prefix_cached_until = self.now + 600.0

    def _preempt_newest(self) -> None:
        victim = max(self.running, key=lambda r: r.admitted or 0.0)
        self.running.remove(victim)
        victim.running = False
        self.blocks_in_use -= victim.blocks
        victim.blocks = 0
        self.waiting.appendleft(victim)
        self.counters.preemptions += 1

    def step(self, dt: float) -> None:
        self.now += dt
        self._arrivals(dt)
        self._admit()
        decoding = [r for r in self.running if r.prefill_done_at <= self.now]
        if not decoding:
            return
        itl = (
            0.011
            + 0.00035 * len(self.running)
            + 0.0000004 * self.used_blocks() * self.cfg.block_size
        )
        per_request = dt / itl
        self.counters.iterations += per_request
        self.iteration_tokens.observe(float(len(decoding)), per_request)
        # The per-token loop binds what it touches to locals (the demo's history runs it
        # ~10^6 times); the arithmetic and the random draws are the same, in the same order.
        counters, uniform01, itl_hist, ceil = self.counters, self.rng.random, self.itl, math.ceil
        itl_bounds, itl_counts = itl_hist.bounds, itl_hist.counts
        block_size, generated_before = self.cfg.block_size, counters.generation_tokens
        gpu_blocks, prefix_blocks = self.cfg.num_gpu_blocks, self.prefix_blocks
        for req in list(decoding):
            if not req.running:
                continue
            if req.first_token_at is None:
                req.first_token_at = req.prefill_done_at
                self.ttft.observe(req.first_token_at - req.arrived)
            remaining = req.output_tokens - req.generated
            tokens = remaining if remaining < per_request else per_request  # min()
            req.generated += tokens
            counters.generation_tokens += tokens
            latency = itl * (0.85 + (1.2 - 0.85) * uniform01())  # rng.uniform(0.85, 1.2)
            itl_counts[bisect_left(itl_bounds, latency)] += tokens  # itl.observe(latency, tokens)
            itl_hist.total += latency * tokens
            own_blocks = ceil((req.prompt_tokens - req.shared_prefix + req.generated) / block_size)
            needed = (own_blocks if own_blocks > 1 else 1) - req.blocks  # _blocks_for()
            # `req` runs, so the shared prefix is held: the free blocks are the rest
            if 0 < needed <= gpu_blocks - prefix_blocks - self.blocks_in_use:
                req.blocks += needed
                self.blocks_in_use += needed
                needed = 0
            while needed > 0:
                taken = min(needed, self.cfg.num_gpu_blocks - self.used_blocks())
                if taken > 0:
                    req.blocks += taken
                    self.blocks_in_use += taken
                    needed -= taken
                else:
                    self._preempt_newest()
                    if not req.running:
                        break
            if req.running and req.generated >= req.output_tokens:
                self._finish(req)
        self.features.decoded(counters.generation_tokens - generated_before)

    def _finish(self, req: Request) -> None:
        self.running.remove(req)
        req.running = False
        self.blocks_in_use -= req.blocks
        reason = "length" if req.output_tokens >= self.cfg.max_output_tokens else "stop"
        self.counters.finished[reason] += 1
        self.e2e.observe(self.now - req.arrived)
        self.prefill_time.observe(max(0.0, req.prefill_done_at - (req.admitted or req.arrived)))
        decode_s = max(0.0, self.now - req.prefill_done_at)
        self.decode_time.observe(decode_s)
        if req.output_tokens > 1:
            self.request_tpot.observe(decode_s / (req.output_tokens - 1))
        self.prefill_kv_computed.observe(float(req.kv_computed or 0))
        self.max_generation_tokens.observe(float(self.cfg.max_output_tokens))
        self.prompt_len.observe(float(req.prompt_tokens))
        self.output_len.observe(float(req.output_tokens))
        self.inference_time.observe(max(0.0, self.now - (req.admitted or req.arrived)))
        self.params_n.observe(1.0)
        self.params_max_tokens.observe(float(self.cfg.max_output_tokens))

    def advance_to(self, t: float, dt: float = 0.25) -> None:
        # After a long idle gap (the demo was paused), skip ahead rather than replay hours.
        if t - self.now > 3600:
            self.now = t - 3600
        while self.now + dt <= t:
            self.step(dt)
        if self.features.lora:  # the adapters' state as a scrape finds it
            waiting = [r.adapter for r in self.waiting]
            self.features.lora_state(self.now, waiting, [r.adapter for r in self.running])
