"""Schemas of the serving endpoints kept beside analytics/serving/api.py, which routes
them: the query parameters every endpoint reads, and the Out schemas of the endpoints
added for every vLLM signal (spec decode, SLO attainment, the fleet table).

Schemas only: they read the typed rows of spec_decode.py, slo.py and fleet.py; no
queries, no handlers.
"""

from __future__ import annotations

from ninja import Schema

from lib.durations import Time


class SeriesQuery(Schema):
    """`?instance=&engine=`: one instance's series (every instance's when not named), of
    one engine (every engine's, summed, when not named)."""

    instance: str | None = None
    engine: str | None = None


class LatencyQuery(Schema):
    metric: str = "ttft"
    quantile: float = 0.95
    model: str | None = None


class ModelQuery(Schema):
    """`?model=`: only the instances serving this model (vLLM's model_name)."""

    model: str | None = None


class SloQuery(Schema):
    metric: str = "ttft"
    target_seconds: float
    model: str | None = None


class CapacityQuery(Schema):
    instance: str
    context_tokens: float | None = None


class ScrapesQuery(Schema):
    instance: str
    limit: int = 50


class SpecDecodeTotalsOut(Schema):
    drafts: float
    draft_tokens: float
    accepted_tokens: float
    acceptance_rate: float | None
    mean_acceptance_length: float | None


class SpecDecodePointOut(SpecDecodeTotalsOut):
    t: Time


class PositionOut(Schema):
    position: int
    accepted_tokens: float
    acceptance_rate: float | None


class SpecDecodeOut(Schema):
    instance: str | None
    bucket_seconds: int
    points: list[SpecDecodePointOut]
    overall: SpecDecodeTotalsOut
    by_position: list[PositionOut]


class SloTotalsOut(Schema):
    attained: float
    total: float
    ratio: float | None


class SloPointOut(SloTotalsOut):
    t: Time


class SloOut(Schema):
    instance: str | None
    metric: str
    target_seconds: float
    bucket_seconds: int
    points: list[SloPointOut]
    overall: SloTotalsOut
    target_is_bucket_bound: bool
    bound_seconds: float | None
    note: str | None


class FleetRowOut(Schema):
    instance: str
    engine: str | None
    model: str | None
    up: bool
    last_scrape: Time
    kv_usage: float | None
    running: float | None
    waiting: float | None
    waiting_by_reason: dict[str, float]
    preemptions: float | None
    prefix_hit_rate: float | None
    ttft_p95_seconds: float | None
    spec_acceptance_rate: float | None
    sleep_state: str | None
    admission_rejections: float | None
    admission_rejections_by_reason: dict[str, float]


class FleetOut(Schema):
    start: Time
    end: Time
    rows: list[FleetRowOut]
