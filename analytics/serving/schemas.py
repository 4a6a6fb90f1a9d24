"""Out schemas of the serving endpoints added for every vLLM signal (spec decode, SLO
attainment, the fleet table), kept beside analytics/serving/api.py, which routes them.

Schemas only: they read the typed rows of spec_decode.py, slo.py and fleet.py; no
queries, no handlers.
"""

from __future__ import annotations

from ninja import Schema

from lib.durations import Time


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


class FleetOut(Schema):
    start: Time
    end: Time
    rows: list[FleetRowOut]
