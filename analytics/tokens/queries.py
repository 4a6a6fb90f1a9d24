"""Token questions answered from the warehouse: parallel-text counts for the tax, traffic by
language under each encoding, and where reported usage disagrees with our counts.

One function per question; SQL as module constants with bound parameters; typed rows out.
The tax arithmetic itself lives in analytics/tokens/tax.py.

Requests are read only where a `Seen` (lib.access) covers their run or their serving
instance (a request with neither: only all-seeing users), filtered in the SQL before any
sum. Parallel texts are reference data: everyone sees them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import warehouse
from analytics.tokens.tax import ParallelCount
from lib.access import Seen, visible_instance_sql, visible_run_sql

PARALLEL_COUNTS_SQL = """
SELECT p.id, p.language, p.chars, p.bytes, k.tokens
FROM parallel_texts AS p
JOIN parallel_tokens AS k ON k.id = p.id AND k.language = p.language
WHERE k.encoding = ?
ORDER BY p.language, p.id
"""

PARALLEL_ENCODINGS_SQL = "SELECT DISTINCT encoding FROM parallel_tokens ORDER BY encoding"

REQUEST_ENCODINGS_SQL = "SELECT DISTINCT encoding FROM request_tokens ORDER BY encoding"
REQUEST_RUNS_SQL = "SELECT DISTINCT run FROM requests WHERE run IS NOT NULL ORDER BY run"

# A request the caller sees: by its run or by its instance (bound with _seen_params).
_VISIBLE_REQUEST = f"({visible_run_sql('r.run')} OR {visible_instance_sql('r.instance')})"

# Requests whose ts falls in [start, end); NULL bounds mean the data's own range.
TRAFFIC_BY_LANGUAGE_SQL = f"""
SELECT coalesce(r.language, 'und') AS language,
       k.encoding,
       count(*) AS requests,
       coalesce(sum(k.prompt_tokens), 0) AS prompt_tokens,
       coalesce(sum(k.completion_tokens), 0) AS completion_tokens,
       coalesce(sum(r.prompt_chars), 0) + coalesce(sum(r.completion_chars), 0) AS chars,
       coalesce(sum(r.prompt_bytes), 0) + coalesce(sum(r.completion_bytes), 0) AS bytes
FROM requests AS r
JOIN request_tokens AS k ON k.request_id = r.request_id
WHERE ($start::TIMESTAMPTZ IS NULL OR r.ts >= $start)
  AND ($end::TIMESTAMPTZ IS NULL OR r.ts < $end)
  AND {_VISIBLE_REQUEST}
GROUP BY ALL
ORDER BY language, k.encoding
"""

# What providers reported (and billed) per language, where records carry usage.
REPORTED_BY_LANGUAGE_SQL = f"""
SELECT coalesce(language, 'und') AS language,
       count(*) FILTER (WHERE usage_prompt_tokens IS NOT NULL
                        OR usage_completion_tokens IS NOT NULL) AS requests_with_usage,
       coalesce(sum(usage_prompt_tokens), 0) AS prompt_tokens,
       coalesce(sum(usage_completion_tokens), 0) AS completion_tokens,
       coalesce(sum(usage_cached_tokens), 0) AS cached_tokens
FROM requests AS r
WHERE ($start::TIMESTAMPTZ IS NULL OR ts >= $start)
  AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)
  AND {_VISIBLE_REQUEST}
GROUP BY ALL
ORDER BY language
"""

MISMATCHES_SQL = f"""
SELECT r.request_id, r.ts, r.model, r.reference_encoding,
       r.usage_prompt_tokens, k.prompt_tokens AS counted_prompt_tokens,
       r.usage_completion_tokens, k.completion_tokens AS counted_completion_tokens
FROM requests AS r
JOIN request_tokens AS k ON k.request_id = r.request_id AND k.encoding = r.reference_encoding
WHERE r.usage_mismatch AND {_VISIBLE_REQUEST}
ORDER BY r.ts DESC, r.request_id
LIMIT $limit
"""

MISMATCH_SUMMARY_SQL = f"""
SELECT count(*) FILTER (WHERE usage_mismatch IS NOT NULL) AS compared,
       count(*) FILTER (WHERE usage_mismatch) AS mismatched
FROM requests AS r
WHERE {_VISIBLE_REQUEST}
"""


def _seen_params(seen: Seen) -> dict[str, object]:
    return {"seen_runs": seen.run_list(), "seen_instances": seen.instance_list()}


def request_run_names() -> list[str]:
    """The runs request records name (what team run patterns are matched against, with
    the runs of events)."""
    return [row["run"] for row in warehouse.fetch_all(REQUEST_RUNS_SQL)]


def parallel_counts(encoding: str) -> list[ParallelCount]:
    """Every ingested parallel text counted under `encoding`."""
    return [
        ParallelCount(
            id=row["id"],
            language=row["language"],
            chars=int(row["chars"]),
            bytes=int(row["bytes"]),
            tokens=int(row["tokens"]),
        )
        for row in warehouse.fetch_all(PARALLEL_COUNTS_SQL, [encoding])
    ]


def parallel_encodings() -> list[str]:
    """Encodings the ingested parallel texts were counted under (empty: none ingested)."""
    return [row["encoding"] for row in warehouse.fetch_all(PARALLEL_ENCODINGS_SQL)]


def request_encodings() -> list[str]:
    return [row["encoding"] for row in warehouse.fetch_all(REQUEST_ENCODINGS_SQL)]


@dataclass(frozen=True)
class TrafficRow:
    """Requests of one language counted under one encoding."""

    language: str
    encoding: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    chars: int
    bytes: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def traffic_by_language(
    start: datetime | None, end: datetime | None, seen: Seen
) -> list[TrafficRow]:
    """The requests `seen` covers in [start, end), by language and encoding."""
    params = {"start": start, "end": end, **_seen_params(seen)}
    rows = warehouse.fetch_all(TRAFFIC_BY_LANGUAGE_SQL, params)
    return [
        TrafficRow(
            language=row["language"],
            encoding=row["encoding"],
            requests=int(row["requests"]),
            prompt_tokens=int(row["prompt_tokens"]),
            completion_tokens=int(row["completion_tokens"]),
            chars=int(row["chars"]),
            bytes=int(row["bytes"]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class ReportedUsage:
    """Provider-reported usage of one language's requests."""

    language: str
    requests_with_usage: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int


def reported_by_language(
    start: datetime | None, end: datetime | None, seen: Seen
) -> list[ReportedUsage]:
    params = {"start": start, "end": end, **_seen_params(seen)}
    rows = warehouse.fetch_all(REPORTED_BY_LANGUAGE_SQL, params)
    return [
        ReportedUsage(
            language=row["language"],
            requests_with_usage=int(row["requests_with_usage"]),
            prompt_tokens=int(row["prompt_tokens"]),
            completion_tokens=int(row["completion_tokens"]),
            cached_tokens=int(row["cached_tokens"]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class Mismatch:
    request_id: str
    ts: datetime
    model: str | None
    encoding: str
    reported_prompt_tokens: int | None
    counted_prompt_tokens: int | None
    reported_completion_tokens: int | None
    counted_completion_tokens: int | None


def usage_mismatches(seen: Seen, limit: int = 50) -> list[Mismatch]:
    """Newest requests `seen` covers whose provider-reported usage is far from our count."""
    return [
        Mismatch(
            request_id=row["request_id"],
            ts=row["ts"],
            model=row["model"],
            encoding=row["reference_encoding"],
            reported_prompt_tokens=row["usage_prompt_tokens"],
            counted_prompt_tokens=row["counted_prompt_tokens"],
            reported_completion_tokens=row["usage_completion_tokens"],
            counted_completion_tokens=row["counted_completion_tokens"],
        )
        for row in warehouse.fetch_all(MISMATCHES_SQL, {"limit": limit, **_seen_params(seen)})
    ]


def mismatch_summary(seen: Seen) -> tuple[int, int]:
    """(requests `seen` covers whose usage could be compared with our count, how many
    disagreed)."""
    row = warehouse.fetch_one(MISMATCH_SUMMARY_SQL, _seen_params(seen))
    return (int(row["compared"]), int(row["mismatched"])) if row else (0, 0)
