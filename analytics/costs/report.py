"""The daily cost report: what a day cost, where it went, and whether it is drifting.

Builds a DailyReport (the JSON of GET /api/costs/daily plus the report's extras: the
day's bounds and its top runs) from analytics.costs.queries and the price table; renders
nothing and sends nothing. The rows are dataclasses whose fields are in the order the
report's JSON lists them (analytics.costs.report_formats dumps them as they are). A model
without a price is listed in `unpriced` and its unlogged calls add nothing to any total:
never a silent zero. The day is a calendar day in `tz` (UTC by default).

Every figure covers only what a `Seen` (lib.access) covers: the calls of its runs (filtered
in the queries' SQL, before any sum), the GPU cost of its serving targets and its teams.
Who sees what is decided by analytics.access, never here: callers pass the Seen.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from analytics.costs import queries
from analytics.costs.models import GpuPrice, Team
from analytics.costs.pricing import PriceBook, Usage, cache_savings_usd, cost_usd
from analytics.serving import queries as serving
from lib.access import Seen
from lib.errors import ParameterError

TREND_DAYS = 7
TOP_RUNS = 10
UNKNOWN_MODEL = "(no model)"
_FLEET = Seen.all()


@dataclass(frozen=True)
class ModelCost:
    """One model's calls of the day; `computed_usd` is None when it has no price."""

    model: str
    priced_as: str | None  # the price table's name for it, None: unpriced
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


@dataclass(frozen=True)
class RunCost:
    run: str
    usd: float
    calls: int
    unpriced_calls: int


@dataclass(frozen=True)
class PersonCost:
    """One person's calls of the day (the telemetry's person and team columns)."""

    person: str
    team: str | None
    usd: float
    calls: int
    unpriced_calls: int


@dataclass(frozen=True)
class TeamCost:
    team: str
    usd: float
    daily_budget_usd: float | None


@dataclass(frozen=True)
class GpuCost:
    """A self-hosted serving target's day: GPUs x price per GPU-hour x hours."""

    target: str
    gpus: int
    usd_per_gpu_hour: float
    hours: float
    usd: float
    generated_tokens: int
    usd_per_mtok: float | None  # None: no tokens generated


@dataclass(frozen=True)
class TrendPoint:
    date: str  # YYYY-MM-DD
    usd: float


@dataclass(frozen=True)
class DailyReport:
    """What one calendar day in `tz` cost; money rounded by _money."""

    date: str  # YYYY-MM-DD
    tz: str
    start: datetime  # the day's [start, end) in UTC
    end: datetime
    total_usd: float  # API and GPUs
    api_usd: float
    gpu_usd: float
    logged_usd: float
    computed_usd: float
    cache_savings_usd: float
    calls: int
    by_model: list[ModelCost]  # most expensive first
    by_run: list[RunCost]  # most expensive first
    top_runs: list[RunCost]  # the first TOP_RUNS of by_run
    by_team: list[TeamCost]
    gpu: list[GpuCost]
    by_person: list[PersonCost]  # calls with a person (telemetry), most expensive first
    unpriced: list[str]  # models with unlogged calls and no price
    price_problems: list[str]  # price rows that cannot be used, each with why (PriceBook)
    previous_day_usd: float
    change_usd: float
    change_pct: float | None  # None: nothing spent the day before
    trend: list[TrendPoint]  # the TREND_DAYS days before, oldest first
    mean_7d_usd: float


def read_zone(tz: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(tz or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise ParameterError(f"unknown time zone {tz!r}") from None


def day_bounds(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """[start, end) of a calendar day in `zone`, as UTC (23 or 25 hours across DST)."""
    start = datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(), tzinfo=zone).astimezone(UTC)
    return start, end


@dataclass
class _Totals:
    """One group's usage (all calls and unlogged calls) and money."""

    calls: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(queries.TOKEN_FIELDS, 0))
    logged_usd: float = 0.0
    priced_usd: float = 0.0  # unlogged calls priced from the table
    computed_usd: float = 0.0  # every call priced from the table
    cache_savings_usd: float = 0.0
    unpriced_calls: int = 0

    @property
    def usd(self) -> float:
        return self.logged_usd + self.priced_usd


@dataclass
class _Priced:
    row: queries.UsageRow
    price_model: str | None
    usd: float | None  # None: unpriced (an unlogged call without a price)
    computed_usd: float | None
    savings_usd: float


def _usage(row: queries.UsageRow) -> Usage:
    return Usage(**{name: getattr(row, name) for name in queries.TOKEN_FIELDS})


def price_rows(rows: list[queries.UsageRow], book: PriceBook) -> list[_Priced]:
    priced = []
    for row in rows:
        price = book.price(row.model, row.utc_day)
        usage = _usage(row)
        computed = cost_usd(price, usage, fast=row.fast) if price is not None else None
        savings = cache_savings_usd(price, usage, fast=row.fast) if price is not None else 0.0
        usd = row.logged_usd if row.logged else computed
        priced.append(
            _Priced(row, book.canonical(row.model) if row.model else None, usd, computed, savings)
        )
    return priced


def _add(totals: _Totals, p: _Priced) -> None:
    totals.calls += p.row.calls
    for name in queries.TOKEN_FIELDS:
        totals.tokens[name] += getattr(p.row, name)
    totals.cache_savings_usd += p.savings_usd
    if p.computed_usd is not None:
        totals.computed_usd += p.computed_usd
    if p.row.logged:
        totals.logged_usd += p.row.logged_usd
    elif p.usd is None:
        totals.unpriced_calls += p.row.calls
    else:
        totals.priced_usd += p.usd


def money(value: float) -> float:
    return round(value, 8)  # sub-cent: sums of many small calls stay true to the cent


def in_team(
    team: Team, run: str | None, source: str | None, telemetry_team: str | None = None
) -> bool:
    """A call belongs to a team when its run or its source file matches a pattern, or its
    event carries the team's name (telemetry from its members, analytics.access's rule)."""
    runs = team.run_patterns or []
    sources = team.source_patterns or []
    return (
        (telemetry_team is not None and telemetry_team == team.name)
        or (run is not None and any(fnmatch.fnmatchcase(run, p) for p in runs))
        or (source is not None and any(fnmatch.fnmatchcase(source, p) for p in sources))
    )


def gpu_costs(day: date, zone: ZoneInfo, seen: Seen) -> list[GpuCost]:
    """Self-hosted serving of the targets `seen` covers: GPUs x price per GPU-hour x hours
    of the day, and per million generated tokens from the scraped generation-token counter
    (reset-adjusted)."""
    start, end = day_bounds(day, zone)
    hours = (end - start).total_seconds() / 3600
    prices = GpuPrice.objects.filter(valid_from__lte=day)
    if not seen.everything:
        prices = prices.filter(target__in=sorted(seen.instances))
    latest: dict[str, GpuPrice] = {}
    for price in prices.order_by("target", "valid_from"):
        latest[price.target] = price
    answer = []
    for target, price in sorted(latest.items()):
        usd = price.gpus * float(price.usd_per_gpu_hour) * hours
        window = serving.make_window(target, start, end, 3600)
        generated = sum(
            p.increase for p in serving.counter_increase("generation_tokens", target, window)
        )
        answer.append(
            GpuCost(
                target=target,
                gpus=price.gpus,
                usd_per_gpu_hour=float(price.usd_per_gpu_hour),
                hours=hours,
                usd=money(usd),
                generated_tokens=int(generated),
                usd_per_mtok=money(usd / generated * 1_000_000) if generated else None,
            )
        )
    return answer


def priced_usage(
    segments: list[queries.Segment],
    *,
    by_source: bool,
    seen: Seen = _FLEET,
    by_person: bool = False,
) -> list[tuple[queries.UsageRow, float]]:
    """Each usage row (by segment, model, run, source, and person and team when
    `by_person`) of the runs `seen` covers (the whole fleet unless told) with its USD: the
    logged cost, else the price table's; unpriced calls count 0. The alerts' daily-spend
    rule and analytics.people read spend through this, so they agree with the report to
    the cent."""
    rows = queries.read_usage(
        segments, seen=seen, by_run=True, by_source=by_source, by_person=by_person
    )
    return [(p.row, p.usd or 0.0) for p in price_rows(rows, PriceBook.load())]


def _daily_usd(priced: list[_Priced]) -> dict[date, float]:
    per_day: dict[date, float] = defaultdict(float)
    for p in priced:
        per_day[p.row.day] += p.usd or 0.0
    return per_day


def _model_cost(model: str, t: _Totals, priced_as: str | None) -> ModelCost:
    return ModelCost(
        model=model,
        priced_as=priced_as,
        calls=t.calls,
        input_tokens=t.tokens["input_tokens"],
        cached_input_tokens=t.tokens["cached_input_tokens"],
        cache_write_tokens=t.tokens["cache_write_tokens"],
        output_tokens=t.tokens["output_tokens"],
        usd=money(t.usd),
        logged_usd=money(t.logged_usd),
        computed_usd=money(t.computed_usd) if priced_as else None,
        cache_savings_usd=money(t.cache_savings_usd),
        unpriced_calls=t.unpriced_calls,
    )


def _team_costs(teams: list[Team], priced: list[_Priced]) -> list[TeamCost]:
    team_usd: dict[str, float] = defaultdict(float)
    for p in priced:
        usd = p.usd or 0.0
        for team in teams:
            if in_team(team, p.row.run, p.row.source, p.row.team):
                team_usd[team.name] += usd
    return [
        TeamCost(
            team=t.name,
            usd=money(team_usd.get(t.name, 0.0)),
            daily_budget_usd=float(t.daily_budget_usd) if t.daily_budget_usd is not None else None,
        )
        for t in teams
    ]


def visible_teams(seen: Seen) -> list[Team]:
    """The teams `seen` covers, by name."""
    teams = Team.objects.order_by("name")
    if not seen.everything:
        teams = teams.filter(pk__in=sorted(seen.team_ids))
    return list(teams)


def build_daily_report(day: date, tz: str | None = None, *, seen: Seen) -> DailyReport:
    """The report for one calendar day in `tz` of what `seen` covers; see the module
    docstring."""
    zone = read_zone(tz)
    start, end = day_bounds(day, zone)
    book = PriceBook.load()
    teams = visible_teams(seen)
    # Grouping by source file costs time over millions of calls: only when a team needs it.
    by_source = any(t.source_patterns for t in teams)
    segments = queries.day_segments(day, day, zone)
    today = price_rows(
        queries.read_usage(segments, seen=seen, by_run=True, by_source=by_source, by_person=True),
        book,
    )
    last_week = queries.day_segments(
        day - timedelta(days=TREND_DAYS), day - timedelta(days=1), zone
    )
    earlier = _daily_usd(price_rows(queries.read_usage(last_week, seen=seen, by_run=False), book))

    by_model: dict[str, _Totals] = defaultdict(_Totals)
    by_run: dict[str, _Totals] = defaultdict(_Totals)
    by_person: dict[tuple[str, str | None], _Totals] = defaultdict(_Totals)
    price_names: dict[str, str | None] = {}
    total = _Totals()
    for p in today:
        model = p.row.model or UNKNOWN_MODEL
        price_names[model] = p.price_model
        for totals in (by_model[model], by_run[p.row.run or ""], total):
            _add(totals, p)
        if p.row.person is not None:
            _add(by_person[(p.row.person, p.row.team)], p)

    gpu = gpu_costs(day, zone, seen)
    gpu_usd = sum(g.usd for g in gpu)
    trend = [
        TrendPoint(d.isoformat(), money(earlier.get(d, 0.0)))
        for d in (day - timedelta(days=offset) for offset in range(TREND_DAYS, 0, -1))
    ]
    previous = earlier.get(day - timedelta(days=1), 0.0)
    week = [earlier.get(day - timedelta(days=n), 0.0) for n in range(1, TREND_DAYS + 1)]
    mean_7d = sum(week) / TREND_DAYS
    run_rows = [
        RunCost(run=run, usd=money(t.usd), calls=t.calls, unpriced_calls=t.unpriced_calls)
        for run, t in sorted(by_run.items(), key=lambda item: (-item[1].usd, item[0]))
    ]
    return DailyReport(
        date=day.isoformat(),
        tz=zone.key,
        start=start,
        end=end,
        total_usd=money(total.usd + gpu_usd),
        api_usd=money(total.usd),
        gpu_usd=money(gpu_usd),
        logged_usd=money(total.logged_usd),
        computed_usd=money(total.computed_usd),
        cache_savings_usd=money(total.cache_savings_usd),
        calls=total.calls,
        by_model=sorted(
            (_model_cost(model, t, price_names[model]) for model, t in by_model.items()),
            key=lambda m: (-m.usd, m.model),
        ),
        by_run=run_rows,
        top_runs=run_rows[:TOP_RUNS],
        by_team=_team_costs(teams, today),
        gpu=gpu,
        by_person=[
            PersonCost(person, team, money(t.usd), t.calls, t.unpriced_calls)
            for (person, team), t in sorted(
                by_person.items(), key=lambda item: (-item[1].usd, item[0][0], item[0][1] or "")
            )
        ],
        unpriced=sorted(m for m, t in by_model.items() if t.unpriced_calls),
        price_problems=book.problems,
        previous_day_usd=money(previous),
        change_usd=money(total.usd - previous),
        change_pct=money((total.usd - previous) / previous * 100) if previous else None,
        trend=trend,
        mean_7d_usd=money(mean_7d),
    )
