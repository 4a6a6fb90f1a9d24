"""The Tokens answers the API and the Tokens page share: the tax table (parallel texts or
traffic), traffic by language under each encoding, and what a change of encoding saves.

Turns a question into queries (analytics/tokens/queries.py) and the tax arithmetic
(analytics/tokens/tax.py) into the dataclasses below, the shapes of GET /api/tokens/tax
and /traffic (analytics/tokens/api.py's Out schemas name the same fields); writes no SQL
and renders nothing. Traffic covers the requests a `Seen` (lib.access) covers, which the
caller passes; the parallel texts' tax is reference data, the same for everyone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from analytics.tokens import queries
from analytics.tokens.shipped import shipped_counts
from analytics.tokens.tax import BASELINE, LanguageTax, ParallelCount, build_tax_table
from analytics.tokens.vocabularies import AVAILABLE_ENCODINGS, configured_encodings
from lib.access import Seen
from lib.errors import ParameterError


class TaxSource(StrEnum):
    PARALLEL = "parallel"
    TRAFFIC = "traffic"


class Corpus(StrEnum):
    """Which parallel texts: the ones users ingested, or the set shipped with Fleetscope."""

    INGESTED = "ingested"
    SHIPPED = "shipped"


@dataclass(frozen=True)
class TaxTable:
    """The tax per language over parallel texts, highest first."""

    encoding: str
    source: str  # TaxSource.PARALLEL
    corpus: str  # a Corpus
    baseline: str
    languages: list[LanguageTax]


@dataclass(frozen=True)
class TrafficTax:
    """One language's traffic under one encoding. Traffic has no parallel ids, so there is
    no tax: tokens per character, and that relative to the baseline's, stand in for it."""

    language: str
    samples: int  # requests
    tokens: int
    chars: int
    bytes: int
    tokens_per_char: float | None
    tokens_per_byte: float | None
    tokens_per_char_vs_baseline: float | None
    share_of_tokens: float | None
    tax: None = None


@dataclass(frozen=True)
class TrafficTaxTable:
    """Tokens per character per language of the requests, highest first."""

    encoding: str
    source: str  # TaxSource.TRAFFIC
    baseline: str
    languages: list[TrafficTax]


@dataclass(frozen=True)
class Saving:
    """Tokens before and after a change of encoding."""

    tokens_before: int
    tokens_after: int
    saved_tokens: int
    saved_fraction: float | None  # None: nothing before

    @classmethod
    def between(cls, before: int, after: int) -> Saving:
        return cls(before, after, before - after, _ratio(before - after, before))


@dataclass(frozen=True)
class EncodingTraffic:
    """A language's requests counted under one encoding."""

    prompt_tokens: int
    completion_tokens: int
    tokens: int
    share_of_tokens: float | None  # of all the encoding's tokens
    tokens_per_char: float | None
    tokens_per_byte: float | None


@dataclass(frozen=True)
class Reported:
    """Provider-reported (billed) tokens of a language."""

    requests: int  # requests that carried provider-reported usage
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    share_of_tokens: float | None  # of all reported tokens in the range

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class TrafficLanguage:
    language: str
    requests: int
    share_of_requests: float | None
    chars: int
    bytes: int
    encodings: dict[str, EncodingTraffic]  # by encoding name, only those it was counted under
    saving: Saving  # from_encoding -> to_encoding
    reported: Reported


@dataclass(frozen=True)
class TrafficReport:
    """Requests by language under every counted encoding, most requests first."""

    encodings: list[str]  # oldest first
    from_encoding: str
    to_encoding: str
    requests: int
    languages: list[TrafficLanguage]
    saving: Saving  # of all the traffic


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
    seen: Seen,
) -> TaxTable | TrafficTaxTable:
    """GET /api/tokens/tax: per language, tokens, characters and the tax vs English (of
    the traffic `seen` covers, for source=traffic)."""
    try:
        kind = TaxSource(source)
    except ValueError:
        raise ParameterError("source must be 'parallel' or 'traffic'") from None
    check_encoding(encoding)
    if kind is TaxSource.TRAFFIC:
        return traffic_tax_table(encoding, start, end, seen)
    return parallel_tax_table(encoding, resolve_corpus(corpus))


def parallel_tax_table(encoding: str, corpus: Corpus) -> TaxTable:
    """The tax per language of `corpus`'s parallel texts counted under `encoding`."""
    return TaxTable(
        encoding=encoding,
        source=TaxSource.PARALLEL.value,
        corpus=corpus.value,
        baseline=BASELINE,
        languages=build_tax_table(parallel_counts(encoding, corpus), BASELINE),
    )


def traffic_tax_table(
    encoding: str, start: datetime | None, end: datetime | None, seen: Seen
) -> TrafficTaxTable:
    """Traffic has no parallel ids, so no content-matched tax: what it does have is tokens
    per character and per UTF-8 byte, and those relative to English traffic."""
    rows = [r for r in queries.traffic_by_language(start, end, seen) if r.encoding == encoding]
    total_tokens = sum(r.tokens for r in rows)
    baseline = next((r for r in rows if r.language == BASELINE), None)
    baseline_tpc = _ratio(baseline.tokens, baseline.chars) if baseline else None
    languages = []
    for row in rows:
        tokens_per_char = _ratio(row.tokens, row.chars)
        languages.append(
            TrafficTax(
                language=row.language,
                samples=row.requests,
                tokens=row.tokens,
                chars=row.chars,
                bytes=row.bytes,
                tokens_per_char=tokens_per_char,
                tokens_per_byte=_ratio(row.tokens, row.bytes),
                tokens_per_char_vs_baseline=(
                    tokens_per_char / baseline_tpc
                    if tokens_per_char is not None and baseline_tpc
                    else None
                ),
                share_of_tokens=_ratio(row.tokens, total_tokens),
            )
        )
    languages.sort(key=lambda r: (-(r.tokens_per_char or 0.0), r.language))
    return TrafficTaxTable(
        encoding=encoding,
        source=TaxSource.TRAFFIC.value,
        baseline=BASELINE,
        languages=languages,
    )


def traffic_report(
    start: datetime | None,
    end: datetime | None,
    from_encoding: str | None = None,
    to_encoding: str | None = None,
    *,
    seen: Seen,
) -> TrafficReport:
    """Traffic `seen` covers by language under every counted encoding, and the saving of
    moving from one encoding to another (default: the oldest configured to the newest)."""
    rows = queries.traffic_by_language(start, end, seen)
    reported = {r.language: r for r in queries.reported_by_language(start, end, seen)}
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
    languages = []
    for language, per_encoding in by_language.items():
        any_row = next(iter(per_encoding.values()))
        before = per_encoding[source].tokens if source in per_encoding else 0
        after = per_encoding[target].tokens if target in per_encoding else 0
        languages.append(
            TrafficLanguage(
                language=language,
                requests=any_row.requests,
                share_of_requests=_ratio(any_row.requests, total_requests),
                chars=any_row.chars,
                bytes=any_row.bytes,
                encodings={
                    name: EncodingTraffic(
                        prompt_tokens=row.prompt_tokens,
                        completion_tokens=row.completion_tokens,
                        tokens=row.tokens,
                        share_of_tokens=_ratio(row.tokens, total_by_encoding[name]),
                        tokens_per_char=_ratio(row.tokens, row.chars),
                        tokens_per_byte=_ratio(row.tokens, row.bytes),
                    )
                    for name, row in per_encoding.items()
                },
                saving=Saving.between(before, after),
                reported=_reported(reported.get(language), reported_total),
            )
        )
    languages.sort(key=lambda r: (-r.requests, r.language))
    return TrafficReport(
        encodings=counted,
        from_encoding=source,
        to_encoding=target,
        requests=total_requests,
        languages=languages,
        saving=Saving.between(total_by_encoding.get(source, 0), total_by_encoding.get(target, 0)),
    )


def _reported(usage: queries.ReportedUsage | None, total: int) -> Reported:
    """Provider-reported (billed) tokens of a language and their share of all reported
    tokens: what its requests cost, relative to the rest, at one price per token."""
    if usage is None:
        return Reported(0, 0, 0, 0, None)
    return Reported(
        requests=usage.requests_with_usage,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        share_of_tokens=_ratio(usage.prompt_tokens + usage.completion_tokens, total),
    )


def _encoding_order(name: str) -> int:
    return (
        AVAILABLE_ENCODINGS.index(name) if name in AVAILABLE_ENCODINGS else len(AVAILABLE_ENCODINGS)
    )
