"""The Tokens answers the API and the Tokens page share: the tax table (parallel texts or
traffic), traffic by language under each encoding, and what a change of encoding saves.

Turns a question into queries (analytics/queries/tokens.py) and the tax arithmetic
(analytics/tokens/tax.py) into plain dicts; writes no SQL and renders nothing.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from analytics.tokens import queries
from analytics.tokens.shipped import shipped_counts
from analytics.tokens.tax import BASELINE, ParallelCount, build_tax_table
from analytics.tokens.vocabularies import AVAILABLE_ENCODINGS, configured_encodings
from lib.errors import ParameterError


class TaxSource(StrEnum):
    PARALLEL = "parallel"
    TRAFFIC = "traffic"


class Corpus(StrEnum):
    """Which parallel texts: the ones users ingested, or the set shipped with Fleetscope."""

    INGESTED = "ingested"
    SHIPPED = "shipped"


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def check_encoding(encoding: str) -> str:
    if encoding not in AVAILABLE_ENCODINGS:
        raise ParameterError(
            f"unknown encoding {encoding!r}; available: {', '.join(AVAILABLE_ENCODINGS)}"
        )
    return encoding


def resolve_corpus(corpus: str | None) -> Corpus:
    """The named corpus, or by default the ingested texts once there are any."""
    if corpus:
        try:
            return Corpus(corpus)
        except ValueError:
            raise ParameterError("corpus must be 'ingested' or 'shipped'") from None
    return Corpus.INGESTED if queries.parallel_encodings() else Corpus.SHIPPED


def parallel_counts(encoding: str, corpus: Corpus) -> list[ParallelCount]:
    check_encoding(encoding)
    if corpus is Corpus.SHIPPED:
        return list(shipped_counts(encoding))
    counted = queries.parallel_encodings()
    if counted and encoding not in counted:
        raise ParameterError(
            f"the ingested parallel texts were not counted under {encoding}; "
            f"counted: {', '.join(counted)}"
        )
    return queries.parallel_counts(encoding)


def tax_table(
    encoding: str,
    source: str = TaxSource.PARALLEL,
    *,
    corpus: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> dict[str, Any]:
    """GET /api/tokens/tax: per language, tokens, characters and the tax vs English."""
    try:
        kind = TaxSource(source)
    except ValueError:
        raise ParameterError("source must be 'parallel' or 'traffic'") from None
    check_encoding(encoding)
    if kind is TaxSource.TRAFFIC:
        return _traffic_tax(encoding, start, end)
    chosen = resolve_corpus(corpus)
    table = build_tax_table(parallel_counts(encoding, chosen), BASELINE)
    return {
        "encoding": encoding,
        "source": kind.value,
        "corpus": chosen.value,
        "baseline": BASELINE,
        "languages": [
            {
                "language": row.language,
                "samples": row.samples,
                "texts": row.texts,
                "tokens": row.tokens,
                "chars": row.chars,
                "bytes": row.bytes,
                "tokens_per_char": row.tokens_per_char,
                "tokens_per_byte": row.tokens_per_byte,
                "tax": row.tax,
            }
            for row in table
        ],
    }


def _traffic_tax(encoding: str, start: datetime | None, end: datetime | None) -> dict[str, Any]:
    """Traffic has no parallel ids, so no content-matched tax: what it does have is tokens
    per character and per UTF-8 byte, and those relative to English traffic."""
    rows = [r for r in queries.traffic_by_language(start, end) if r.encoding == encoding]
    total_tokens = sum(r.tokens for r in rows)
    baseline = next((r for r in rows if r.language == BASELINE), None)
    baseline_tpc = _ratio(baseline.tokens, baseline.chars) if baseline else None
    languages: list[dict[str, Any]] = []
    for row in rows:
        tokens_per_char = _ratio(row.tokens, row.chars)
        languages.append(
            {
                "language": row.language,
                "samples": row.requests,
                "tokens": row.tokens,
                "chars": row.chars,
                "bytes": row.bytes,
                "tokens_per_char": tokens_per_char,
                "tokens_per_byte": _ratio(row.tokens, row.bytes),
                "tokens_per_char_vs_baseline": (
                    tokens_per_char / baseline_tpc
                    if tokens_per_char is not None and baseline_tpc
                    else None
                ),
                "share_of_tokens": _ratio(row.tokens, total_tokens),
                "tax": None,
            }
        )
    languages.sort(key=lambda r: (-(r["tokens_per_char"] or 0.0), r["language"]))
    return {
        "encoding": encoding,
        "source": TaxSource.TRAFFIC.value,
        "baseline": BASELINE,
        "languages": languages,
    }


def traffic_report(
    start: datetime | None,
    end: datetime | None,
    from_encoding: str | None = None,
    to_encoding: str | None = None,
) -> dict[str, Any]:
    """Traffic by language under every counted encoding, and the saving of moving from
    one encoding to another (default: the oldest configured to the newest)."""
    rows = queries.traffic_by_language(start, end)
    reported = {r.language: r for r in queries.reported_by_language(start, end)}
    reported_total = sum(r.prompt_tokens + r.completion_tokens for r in reported.values())
    counted = sorted({r.encoding for r in rows}, key=_encoding_order)
    configured = list(configured_encodings())
    source = check_encoding(from_encoding or configured[0])
    target = check_encoding(to_encoding or configured[-1])
    for name in (source, target):
        if counted and name not in counted:
            raise ParameterError(
                f"requests were not counted under {name}; counted: {', '.join(counted)}"
            )
    by_language: dict[str, dict[str, queries.TrafficRow]] = {}
    for row in rows:
        by_language.setdefault(row.language, {})[row.encoding] = row
    total_requests = sum(next(iter(v.values())).requests for v in by_language.values())
    total_by_encoding = {
        name: sum(r.tokens for r in rows if r.encoding == name) for name in counted
    }
    languages: list[dict[str, Any]] = []
    for language, per_encoding in by_language.items():
        any_row = next(iter(per_encoding.values()))
        before = per_encoding[source].tokens if source in per_encoding else 0
        after = per_encoding[target].tokens if target in per_encoding else 0
        languages.append(
            {
                "language": language,
                "requests": any_row.requests,
                "share_of_requests": _ratio(any_row.requests, total_requests),
                "chars": any_row.chars,
                "bytes": any_row.bytes,
                "encodings": {
                    name: {
                        "prompt_tokens": row.prompt_tokens,
                        "completion_tokens": row.completion_tokens,
                        "tokens": row.tokens,
                        "share_of_tokens": _ratio(row.tokens, total_by_encoding[name]),
                        "tokens_per_char": _ratio(row.tokens, row.chars),
                        "tokens_per_byte": _ratio(row.tokens, row.bytes),
                    }
                    for name, row in per_encoding.items()
                },
                "saving": {
                    "tokens_before": before,
                    "tokens_after": after,
                    "saved_tokens": before - after,
                    "saved_fraction": _ratio(before - after, before),
                },
                "reported": _reported(reported.get(language), reported_total),
            }
        )
    languages.sort(key=lambda r: (-r["requests"], r["language"]))
    before_total = total_by_encoding.get(source, 0)
    after_total = total_by_encoding.get(target, 0)
    return {
        "encodings": counted,
        "from": source,
        "to": target,
        "requests": total_requests,
        "languages": languages,
        "saving": {
            "tokens_before": before_total,
            "tokens_after": after_total,
            "saved_tokens": before_total - after_total,
            "saved_fraction": _ratio(before_total - after_total, before_total),
        },
    }


def _reported(usage: queries.ReportedUsage | None, total: int) -> dict[str, Any]:
    """Provider-reported (billed) tokens of a language and their share of all reported
    tokens: what its requests cost, relative to the rest, at one price per token."""
    if usage is None:
        return {
            "requests": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cached_tokens": 0,
            "share_of_tokens": None,
        }
    return {
        "requests": usage.requests_with_usage,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "share_of_tokens": _ratio(usage.prompt_tokens + usage.completion_tokens, total),
    }


def _encoding_order(name: str) -> int:
    return (
        AVAILABLE_ENCODINGS.index(name) if name in AVAILABLE_ENCODINGS else len(AVAILABLE_ENCODINGS)
    )
