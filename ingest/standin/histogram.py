"""A cumulative-bucket histogram for the stand-in's simulation: it observes one value many
times at once (a step's tokens), which prometheus_client's own Histogram cannot. Pure; the
exposition copies its buckets into prometheus_client's Histogram at each scrape."""

from __future__ import annotations

import bisect


class Histogram:
    """Cumulative-bucket histogram that can observe one value many times at once."""

    __slots__ = ("bounds", "counts", "total")  # observed ~10^6 times by the demo's history

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
