"""A continuous-batching model of one vLLM engine, advanced in fixed time steps.

Pure (no I/O, seeded randomness). What it reproduces, after the reference article:
requests arrive (Poisson, with bursts), wait, are admitted when enough free KV blocks
exist, prefill (their shared system prompt hits the prefix cache while it stays cached),
then decode one token per step each; every block holds `block_size` tokens and a request
takes a new block only when its last one fills. When a running request needs a block and
none is free, the newest request is preempted (recompute: its blocks are dropped and it
waits again). Inter-token latency grows with the batch; TTFT is queueing plus prefill.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import deque
from dataclasses import dataclass, field

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
TOKEN_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)


class Histogram:
    """Cumulative-bucket histogram that can observe one value many times at once."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)  # last is +Inf
        self.total = 0.0

    def observe(self, value: float, times: float = 1.0) -> None:
        # the first bucket whose bound is >= value; past the last bound, +Inf
        self.counts[bisect.bisect_left(self.bounds, value)] += times
        self.total += value * times

    def cumulative(self) -> list[float]:
        out, running = [], 0.0
        for c in self.counts:
            running += c
            out.append(running)
        return out


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
    running: bool = False  # in the engine's batch (a flag: a list lookup per token is O(n))


@dataclass
class Counters:
    preemptions: float = 0.0
    prompt_tokens: float = 0.0
    generation_tokens: float = 0.0
    prefix_queries: float = 0.0
    prefix_hits: float = 0.0
    iterations: float = 0.0
    iteration_tokens: float = 0.0
    finished: dict[str, float] = field(default_factory=lambda: {"stop": 0.0, "length": 0.0})


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
        self.iteration_tokens = Histogram(TOKEN_BUCKETS)
        self.inference_time = Histogram(REQUEST_SECONDS_BUCKETS)
        self.params_n = Histogram(N_BUCKETS)
        self.params_max_tokens = Histogram(TOKEN_BUCKETS)
        self.prefix_cached_until = -1.0
        self.burst_phase = self.rng.uniform(0, config.burst_every_s)
        self.blocks_in_use = 0  # sum of the running requests' blocks, kept as they change
        self.rate_factor = 1.0  # arrivals times this: a surge (the demo's history raises it)

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
            self.waiting.append(Request(self.now, prompt, output, self.cfg.system_prompt_tokens))

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
            computed = req.prompt_tokens + int(req.generated) - hits
            self.counters.prefix_queries += req.prompt_tokens
            self.counters.prefix_hits += hits
            self.counters.prompt_tokens += computed
            if req.admitted is None:
                req.admitted = self.now
                self.queue_time.observe(self.now - req.arrived)
            req.blocks = self._blocks_for(own_tokens)
            req.prefill_done_at = self.now + computed / self.cfg.prefill_tokens_per_s
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
        for req in list(decoding):
            if not req.running:
                continue
            if req.first_token_at is None:
                req.first_token_at = req.prefill_done_at
                self.ttft.observe(req.first_token_at - req.arrived)
            tokens = min(per_request, req.output_tokens - req.generated)
            req.generated += tokens
            self.counters.generation_tokens += tokens
            self.itl.observe(itl * self.rng.uniform(0.85, 1.2), tokens)
            own = req.prompt_tokens - req.shared_prefix + req.generated
            needed = self._blocks_for(own) - req.blocks
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

    def _finish(self, req: Request) -> None:
        self.running.remove(req)
        req.running = False
        self.blocks_in_use -= req.blocks
        reason = "length" if req.output_tokens >= self.cfg.max_output_tokens else "stop"
        self.counters.finished[reason] += 1
        self.e2e.observe(self.now - req.arrived)
        self.prefill_time.observe(max(0.0, req.prefill_done_at - (req.admitted or req.arrived)))
        self.decode_time.observe(max(0.0, self.now - req.prefill_done_at))
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
