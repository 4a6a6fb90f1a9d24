"""Costs endpoints of the JSON API (docs/api.md): the daily report and adding prices.
Handlers parse and answer: parameters through Query schemas, the report is the
DailyReport analytics.costs.report builds over what the caller may see (`seen_of`),
shaped here by DailyOut. Adding prices needs the editor role."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.costs.price_files import parse_price_entries, save_prices
from analytics.costs.report import DailyReport, build_daily_report, read_zone
from lib.access import Role, require_role, seen_of
from lib.bounds import EVENT_YEARS
from lib.errors import ParameterError

costs_router = Router()
prices_router = Router()


class DailyIn(Schema):
    date: str | None = None  # YYYY-MM-DD; default: yesterday in tz
    tz: str | None = None  # an IANA time zone; default UTC


class ModelCostOut(Schema):
    model: str
    priced_as: str | None
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    usd: float
    logged_usd: float
    computed_usd: float | None
    cache_savings_usd: float
    unpriced_calls: int


class RunCostOut(Schema):
    run: str
    usd: float
    calls: int
    unpriced_calls: int


class TeamCostOut(Schema):
    team: str
    usd: float
    daily_budget_usd: float | None


class PersonCostOut(Schema):
    person: str
    team: str | None
    usd: float
    calls: int
    unpriced_calls: int


class GpuCostOut(Schema):
    target: str
    gpus: int
    usd_per_gpu_hour: float
    hours: float
    usd: float
    generated_tokens: int
    usd_per_mtok: float | None


class TrendPointOut(Schema):
    date: str
    usd: float


class DailyOut(Schema):
    date: str
    tz: str
    total_usd: float
    api_usd: float
    gpu_usd: float
    logged_usd: float
    computed_usd: float
    cache_savings_usd: float
    calls: int
    by_model: list[ModelCostOut]
    by_run: list[RunCostOut]
    by_team: list[TeamCostOut]
    gpu: list[GpuCostOut]
    by_person: list[PersonCostOut]
    unpriced: list[str]
    price_problems: list[str]
    previous_day_usd: float
    change_usd: float
    change_pct: float | None
    trend: list[TrendPointOut]
    mean_7d_usd: float


def read_day(text: str | None, tz: str | None) -> date:
    """YYYY-MM-DD, or yesterday in `tz` when not given."""
    if not text:
        return datetime.now(read_zone(tz)).date() - timedelta(days=1)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ParameterError(f"date must be YYYY-MM-DD, got {text[:40]!r}") from None
    if not EVENT_YEARS.holds_date(day):
        raise ParameterError(f"date is {EVENT_YEARS.reason()}, got {text!r}")
    return day


@costs_router.get("/daily", response=DailyOut, url_name="costs_daily")
def daily(request: HttpRequest, params: Query[DailyIn]) -> DailyReport:
    """What one day cost: by model, by run and by team, cache savings, the 7-day trend,
    self-hosted GPU cost, and the models without a price; of the caller's teams only."""
    day = read_day(params.date, params.tz)
    return build_daily_report(day, params.tz, seen=seen_of(request))


class PriceIn(Schema):
    model: str
    input_per_mtok: float
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None
    cache_write_1h_per_mtok: float | None = None
    output_per_mtok: float
    long_input_per_mtok: float | None = None
    long_cached_input_per_mtok: float | None = None
    long_cache_write_per_mtok: float | None = None
    long_cache_write_1h_per_mtok: float | None = None
    long_output_per_mtok: float | None = None
    fast_input_per_mtok: float | None = None
    fast_cached_input_per_mtok: float | None = None
    fast_cache_write_per_mtok: float | None = None
    fast_cache_write_1h_per_mtok: float | None = None
    fast_output_per_mtok: float | None = None
    valid_from: date
    aliases: list[str] = []
    provider: str = ""


class SavedOut(Schema):
    saved: int


@prices_router.post("", response=SavedOut, url_name="prices_save")
def save(request: HttpRequest, body: list[PriceIn]) -> SavedOut:
    """Add prices (USD per million tokens, valid from a UTC day, each in the range of
    analytics.costs.models.price_problem); a (model, valid_from) already in the table is
    replaced. One bad entry refuses them all (422 naming it). Editors and admins only."""
    require_role(request, Role.EDITOR)
    rows = parse_price_entries([price.dict() for price in body])
    return SavedOut(saved=save_prices(rows, "api"))
