"""The serving latency a run's own model calls saw: the per-request records (`requests`,
from vLLM's llm_request spans or any request log) that belong to the run, and the mean,
median and 95th percentile of their TTFT, queue time and end-to-end latency.

A record belongs to the run when it names the run (`requests.run`), or when the caller
propagated `traceparent` so that its trace is one of the run's events' traces: its
parent span one of the run's calls (events.span_id), or, when the trace holds events of
one run only, anywhere in that trace (an HTTP client's span between the call and vLLM).
Percentiles interpolate linearly between the closest ranks (DuckDB's `quantile_cont`,
numpy's default: p at position p * (n - 1) of the sorted values). SQL as a constant with
bound parameters; a run the reader does not see is a 404 (queries.ensure_run). Must not
know how the records were ingested (ingest/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import warehouse
from analytics.runs.queries import ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from lib.window import TimeRange

FIGURES = ("ttft_ms", "queue_ms", "latency_ms")


def _stats(column: str) -> str:
    return (
        f"count({column}) AS {column}_count, avg({column}) AS {column}_mean, "
        f"quantile_cont({column}, 0.5) AS {column}_p50, "
        f"quantile_cont({column}, 0.95) AS {column}_p95"
    )


SERVING_LATENCY_SQL = f"""
WITH run_spans AS (
    SELECT DISTINCT trace_id, span_id FROM events
    WHERE run = $run AND trace_id IS NOT NULL
),
shared_traces AS (
    SELECT trace_id FROM events
    WHERE trace_id IN (SELECT trace_id FROM run_spans)
    GROUP BY trace_id
    HAVING count(DISTINCT run) > 1
),
calls AS (
    SELECT r.* FROM requests AS r
    WHERE (
        r.run = $run
        OR EXISTS (
            SELECT 1 FROM run_spans AS s
            WHERE s.trace_id = r.trace_id AND s.span_id = r.parent_span_id
        )
        OR (
            r.trace_id IN (SELECT trace_id FROM run_spans)
            AND r.trace_id NOT IN (SELECT trace_id FROM shared_traces)
        )
    )
    AND ($start::TIMESTAMPTZ IS NULL OR r.ts >= $start)
    AND ($end::TIMESTAMPTZ IS NULL OR r.ts < $end)
)
SELECT count(*) AS requests,
       {", ".join(_stats(c) for c in FIGURES)}
FROM calls
"""


@dataclass(frozen=True)
class LatencyStats:
    """One latency over the run's records that report it, in milliseconds."""

    count: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None


@dataclass(frozen=True)
class ServingLatency:
    run: str
    requests: int
    ttft: LatencyStats
    queue: LatencyStats
    e2e: LatencyStats

    @property
    def figures(self) -> list[tuple[str, LatencyStats]]:
        """The three latencies with the names a page prints them under."""
        return [("Time to first token", self.ttft), ("Queue", self.queue), ("End to end", self.e2e)]


def _figure(row: dict[str, Any], column: str) -> LatencyStats:
    def value(name: str) -> float | None:
        found = row[f"{column}_{name}"]
        return None if found is None else float(found)

    return LatencyStats(
        count=int(row[f"{column}_count"]),
        mean_ms=value("mean"),
        p50_ms=value("p50"),
        p95_ms=value("p95"),
    )


def serving_latency(
    run: str, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW
) -> ServingLatency:
    """The run's records in [start, end) (by the request's arrival) and their latencies."""
    ensure_run(run, seen)
    [row] = warehouse.fetch_all(
        SERVING_LATENCY_SQL, {"run": run, **(window or TimeRange()).params()}
    )
    ttft, queue, e2e = (_figure(row, c) for c in FIGURES)
    return ServingLatency(run=run, requests=int(row["requests"]), ttft=ttft, queue=queue, e2e=e2e)
