"""A run's serving latency: the vLLM records its own calls made (by their propagated
trace and parent span), never those of a trace's other run, with mean, median and 95th
percentile interpolated between closest ranks, computed here by hand."""

from dataclasses import astuple
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from analytics.runs.serving_latency import LatencyStats, ServingLatency, serving_latency
from lib.access import Seen
from lib.errors import NotFoundError
from lib.window import TimeRange
from tests.analytics.runs import serving_world


@pytest.fixture
def world(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    serving_world.build()


def test_a_run_sees_the_latency_of_the_requests_its_calls_made(world: None) -> None:
    # agent-run: a1 and b2 (parents are its calls), e5 (its trace, under an HTTP span).
    # TTFT 250, 500, 1000: mean 1750 / 3; p50 the middle one; p95 at rank 0.95 * 2 = 1.9,
    # 500 + 0.9 * (1000 - 500) = 950. Queue 125, 250, 500: p95 250 + 0.9 * 250 = 475.
    # e2e 1500, 2500, 4000: p95 2500 + 0.9 * 1500 = 3850.
    answer = serving_latency("agent-run")
    assert (answer.run, answer.requests) == ("agent-run", 3)
    figures = [astuple(s) for s in (answer.ttft, answer.queue, answer.e2e)]
    expected = [(3, 1750 / 3, 500, 950), (3, 875 / 3, 250, 475), (3, 8000 / 3, 2500, 3850)]
    for got, wanted in zip(figures, expected, strict=True):
        assert got == pytest.approx(wanted, rel=1e-12)


def test_a_shared_trace_gives_a_run_only_the_requests_its_own_calls_made(world: None) -> None:
    # The shared trace's f6 hangs under no one's call: neither run gets it; g7 is
    # other-run's call's.
    assert serving_latency("other-run") == ServingLatency(
        run="other-run",
        requests=1,
        ttft=LatencyStats(1, 2000.0, 2000.0, 2000.0),
        queue=LatencyStats(1, 1000.0, 1000.0, 1000.0),
        e2e=LatencyStats(1, 3000.0, 3000.0, 3000.0),
    )


def test_the_window_is_the_requests_arrival_and_a_run_without_requests_has_none(
    world: None,
) -> None:
    first_only = TimeRange(None, datetime(2026, 3, 2, 9, 0, 5, tzinfo=UTC))
    answer = serving_latency("agent-run", first_only)
    assert (answer.requests, answer.ttft, answer.e2e) == (
        1,
        LatencyStats(1, 250.0, 250.0, 250.0),
        LatencyStats(1, 1500.0, 1500.0, 1500.0),
    )
    empty = LatencyStats(0, None, None, None)
    assert serving_latency("quiet-run") == ServingLatency("quiet-run", 0, empty, empty, empty)


def test_a_run_the_reader_does_not_see_is_unknown(world: None) -> None:
    with pytest.raises(NotFoundError):
        serving_latency("agent-run", seen=Seen.nothing())
    with pytest.raises(NotFoundError):
        serving_latency("no-such-run")
