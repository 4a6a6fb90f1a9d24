"""Reads a Prometheus server's HTTP API: range queries (chunked under the server's
11,000-points-per-series limit) and metric metadata. Returns decoded JSON, nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from lib import http

MAX_POINTS_PER_SERIES = 11_000  # Prometheus rejects longer range-query results
DEFAULT_MAX_CHUNK = timedelta(hours=2)  # bounds one answer to a few MB for ~300 series


@dataclass(frozen=True)
class Series:
    labels: dict[str, str]  # including __name__
    values: list[tuple[float, str]]  # (unix seconds, value as Prometheus spells it)


def chunks(
    start: datetime, end: datetime, step_s: float, max_chunk: timedelta = DEFAULT_MAX_CHUNK
) -> Iterator[tuple[datetime, datetime]]:
    """Consecutive [chunk_start, chunk_end] ranges, each at most MAX_POINTS_PER_SERIES
    evaluation steps long; the next one starts one step after the last one ended."""
    step = timedelta(seconds=step_s)
    span = min(step * (MAX_POINTS_PER_SERIES - 1), max(max_chunk, step))
    current = start
    while current <= end:
        chunk_end = min(current + span, end)
        yield current, chunk_end
        current = chunk_end + step


def _api(base_url: str, path: str, params: dict[str, str], timeout_s: float) -> Any:
    response = http.get(
        base_url.rstrip("/") + path, params=params, timeout_s=timeout_s, accept="application/json"
    )
    try:
        body = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        raise http.FetchError(f"{path} did not answer JSON") from None
    if not isinstance(body, dict) or body.get("status") != "success":
        detail = body.get("error", "no status") if isinstance(body, dict) else "not an object"
        raise http.FetchError(f"{path} failed: {detail}")
    return body.get("data")


def query_range(
    base_url: str, query: str, start: datetime, end: datetime, step_s: float, *, timeout_s: float
) -> list[Series]:
    data = _api(
        base_url,
        "/api/v1/query_range",
        {
            "query": query,
            "start": f"{start.timestamp():.3f}",
            "end": f"{end.timestamp():.3f}",
            "step": f"{step_s:g}",
        },
        timeout_s,
    )
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        raise http.FetchError("/api/v1/query_range did not answer a matrix")
    out = []
    for item in data.get("result") or []:
        labels = {str(k): str(v) for k, v in (item.get("metric") or {}).items()}
        values = [(float(ts), str(v)) for ts, v in item.get("values") or []]
        out.append(Series(labels, values))
    return out


def metadata(base_url: str, *, timeout_s: float) -> dict[str, tuple[str, str]]:
    """metric family name -> (type, help), as the server learned them from `# TYPE`."""
    data = _api(base_url, "/api/v1/metadata", {}, timeout_s)
    out: dict[str, tuple[str, str]] = {}
    for name, entries in (data or {}).items():
        if entries:
            out[str(name)] = (str(entries[0].get("type", "")), str(entries[0].get("help", "")))
    return out
