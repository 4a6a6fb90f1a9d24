"""Tokens endpoints of the JSON API (docs/api.md): count a text, the tax
table, traffic by language, and where provider usage disagrees with our counts.

Parameters come in through Query schemas (the time window through lib.window's
WindowQuery); answers are analytics.tokens.report's dataclasses, shaped by the Out schemas
here. Request traffic is the caller's (`seen_of`); the parallel texts' tax is
everyone's."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.tokens import queries
from analytics.tokens import report as tokens_report
from analytics.tokens.counting import count_text, split_tokens
from analytics.tokens.languages import detect_language
from analytics.tokens.vocabularies import AVAILABLE_ENCODINGS, configured_encodings
from lib.access import seen_of
from lib.durations import format_time
from lib.errors import ParameterError
from lib.window import WindowQuery

router = Router()

MAX_COUNT_CHARS = 1_000_000
MAX_PIECES_CHARS = 100_000  # splitting for display sends every token back: keep it small


class CountIn(Schema):
    text: str
    encodings: list[str] | None = None  # default: the configured encodings
    pieces: bool = False  # also return the text cut into its tokens, per encoding


class PieceOut(Schema):
    text: str
    ids: list[int]


class CountOut(Schema):
    counts: dict[str, int]
    language: str | None
    chars: int
    bytes: int
    pieces: dict[str, list[PieceOut]] | None = None


@router.post("/count", response=CountOut, url_name="tokens_count")
def count(request: HttpRequest, body: CountIn) -> CountOut:
    """Tokens of one text under each encoding, its detected language, and optionally the
    pieces each encoding cuts it into."""
    encodings = list(dict.fromkeys(body.encodings or configured_encodings()))
    for name in encodings:
        tokens_report.check_encoding(name)
    if len(body.text) > MAX_COUNT_CHARS:
        raise ParameterError(f"text must be at most {MAX_COUNT_CHARS} characters")
    if body.pieces and len(body.text) > MAX_PIECES_CHARS:
        raise ParameterError(f"pieces are shown for texts up to {MAX_PIECES_CHARS} characters")
    pieces = None
    if body.pieces:
        pieces = {
            name: [PieceOut(text=p.text, ids=list(p.ids)) for p in split_tokens(body.text, name)]
            for name in encodings
        }
    return CountOut(
        counts=count_text(body.text, encodings),
        language=detect_language(body.text),
        chars=len(body.text),
        bytes=len(body.text.encode("utf-8", "surrogatepass")),
        pieces=pieces,
    )


class TaxLanguageOut(Schema):
    language: str
    samples: int
    texts: int | None = None
    tokens: int
    chars: int
    bytes: int
    tokens_per_char: float | None
    tokens_per_byte: float | None
    tax: float | None
    tokens_per_char_vs_baseline: float | None = None
    share_of_tokens: float | None = None


class TaxOut(Schema):
    encoding: str
    source: str
    corpus: str | None = None
    baseline: str
    languages: list[TaxLanguageOut]


class TaxIn(Schema):
    encoding: str = "o200k_base"
    source: str = "parallel"  # a TaxSource, checked by the report
    corpus: str | None = None  # a Corpus; default: ingested once any are


@router.get("/tax", response=TaxOut, url_name="tokens_tax")
def tax(
    request: HttpRequest, params: Query[TaxIn], window: Query[WindowQuery]
) -> tokens_report.TaxTable | tokens_report.TrafficTaxTable:
    """Per language: tokens, characters and the tax, the mean over parallel ids of
    tokens(language) / tokens(en). `source=traffic` has no parallel ids: it gives tokens
    per character and per byte instead (and `tax` is null). `corpus` picks the ingested
    parallel texts or the set shipped with Fleetscope (default: ingested once any are)."""
    # Each end is read on its own: a reversed window answers nothing, as it always has.
    return tokens_report.tax_table(
        params.encoding,
        params.source,
        corpus=params.corpus,
        start=window.start_time(),
        end=window.end_time(),
        seen=seen_of(request),
    )


class EncodingTrafficOut(Schema):
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    share_of_tokens: float | None
    tokens_per_char: float | None
    tokens_per_byte: float | None


class SavingOut(Schema):
    tokens_before: int
    tokens_after: int
    saved_tokens: int
    saved_fraction: float | None


class ReportedOut(Schema):
    requests: int  # requests that carried provider-reported usage
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    share_of_tokens: float | None  # of all reported tokens in the range


class TrafficLanguageOut(Schema):
    language: str
    requests: int
    share_of_requests: float | None
    chars: int
    bytes: int
    encodings: dict[str, EncodingTrafficOut]
    saving: SavingOut
    reported: ReportedOut


class TrafficOut(Schema):
    encodings: list[str]
    from_encoding: str
    to_encoding: str
    requests: int
    languages: list[TrafficLanguageOut]
    saving: SavingOut


class TrafficIn(Schema):
    from_encoding: str | None = None  # default: the oldest configured
    to_encoding: str | None = None  # default: the newest configured


@router.get("/traffic", response=TrafficOut, url_name="tokens_traffic")
def traffic(
    request: HttpRequest, window: Query[WindowQuery], params: Query[TrafficIn]
) -> tokens_report.TrafficReport:
    """Requests by language under every counted encoding, with the tokens a move from
    `from_encoding` to `to_encoding` saves (default: oldest to newest configured)."""
    return tokens_report.traffic_report(
        window.start_time(),
        window.end_time(),
        params.from_encoding,
        params.to_encoding,
        seen=seen_of(request),
    )


class EncodingsOut(Schema):
    available: list[str]
    configured: list[str]


@router.get("/encodings", response=EncodingsOut, url_name="tokens_encodings")
def encodings(request: HttpRequest) -> EncodingsOut:
    """Encodings that load offline here, and the ones every text is counted under."""
    return EncodingsOut(
        available=list(AVAILABLE_ENCODINGS), configured=list(configured_encodings())
    )


class MismatchOut(Schema):
    request_id: str
    ts: str
    model: str | None
    encoding: str
    reported_prompt_tokens: int | None
    counted_prompt_tokens: int | None
    reported_completion_tokens: int | None
    counted_completion_tokens: int | None


class MismatchesOut(Schema):
    compared: int
    mismatched: int
    requests: list[MismatchOut]


class MismatchesIn(Schema):
    limit: int = 50  # 1 to 1000


@router.get("/mismatches", response=MismatchesOut, url_name="tokens_mismatches")
def mismatches(request: HttpRequest, params: Query[MismatchesIn]) -> MismatchesOut:
    """Requests whose provider-reported usage is far from our count under the model's own
    encoding (more than 16 tokens and 25% apart), newest first."""
    if not 1 <= params.limit <= 1000:
        raise ParameterError("limit must be between 1 and 1000")
    seen = seen_of(request)
    compared, mismatched = queries.mismatch_summary(seen)
    return MismatchesOut(
        compared=compared,
        mismatched=mismatched,
        requests=[
            MismatchOut(**{**asdict(m), "ts": format_time(m.ts)})
            for m in queries.usage_mismatches(seen, params.limit)
        ],
    )
