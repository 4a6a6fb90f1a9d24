"""The Costs page: the daily report for any day (the latest day with spend when none is
asked for), daily spend charts by model and by run, tokens per day by kind (chart and
table, beside USD per day), the CSV download, team budgets and recent report deliveries.
Views only: data from analytics.costs.report and analytics.costs.series, figures from
analytics.costs.charts, each over what the user may see (`seen_of`): their teams' runs,
serving targets and teams, and the deliveries to their teams' recipients; narrowed to
one team by `?team=` (dashboard.pages.team_filter), kept in every link and chart URL.
Every table is a CSV too (`?format=csv&table=<name>`, TABLES' names).
"""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from analytics import charts
from analytics.costs import charts as cost_charts
from analytics.costs import queries as cost_queries
from analytics.costs import report_formats as formats
from analytics.costs.api import read_day
from analytics.costs.report import DailyReport, build_daily_report, read_zone
from analytics.costs.report_delivery import visible_deliveries
from analytics.costs.series import DAILY_TOKEN_KINDS, SpendSeries, build_spend_series
from dashboard.pages.team_filter import TeamFilter, read_team_filter, team_refused
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Seen, seen_of
from lib.errors import ForbiddenError, ParameterError

CHART_DAYS = 30
CHARTS = ("model", "run", "tokens")  # daily spend by model, by run; daily tokens by kind
RECENT_DELIVERIES = 10  # on the page; the CSV has them all


def latest_spend_day(zone: ZoneInfo, seen: Seen) -> date:
    """The latest day (in `zone`) with priced spend among the CHART_DAYS ending on the day
    of the latest call `seen` covers; that day itself when none of them is priced (the page
    then says which models lack a price); yesterday before any call, as the API's default."""
    latest = cost_queries.latest_call_time(seen)
    if latest is None:
        return read_day(None, zone.key)
    last_day = latest.astimezone(zone).date()
    series = build_spend_series(last_day, CHART_DAYS, zone.key, seen=seen)
    for n in reversed(range(len(series.days))):
        if any(values[n] for values in series.by_model.values()):
            return series.days[n]
    return last_day


def _read(request: HttpRequest, seen: Seen) -> tuple[date, str]:
    tz = request.GET.get("tz") or "UTC"
    zone = read_zone(tz)
    asked = request.GET.get("date")
    day = read_day(asked, zone.key) if asked else latest_spend_day(zone, seen)
    return day, zone.key


def _problem(exc: Exception) -> HttpResponse:
    return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")


def _day_problem(request: HttpRequest, exc: ParameterError, team: TeamFilter) -> HttpResponse:
    """422: the day and zone as typed, with why they cannot be read."""
    typed = request.GET.get("date", "")
    try:
        date.fromisoformat(typed or "2000-01-01")
        day_input = "date"
    except ValueError:
        day_input = "text"  # the date picker would show a value it cannot hold as blank
    context = {
        "nav": "costs",
        "day": typed,
        "day_input": day_input,
        "tz": request.GET.get("tz", ""),
        "problem": str(exc),
        "team_choices": team.teams,
        "team": team.team,
    }
    return render(request, "costs/day_problem.html", context, status=422)


def _day_rows(series: SpendSeries) -> list[dict[str, object]]:
    """The days table: each day's calls, tokens by kind and USD, latest day first."""
    return [
        {
            "day": day,
            "calls": series.calls[n],
            **{kind: series.tokens[kind][n] for kind in DAILY_TOKEN_KINDS},
            "usd": series.usd[n],
        }
        for n, day in reversed(list(enumerate(series.days)))
    ]


def _tables(report: DailyReport, days: list[dict[str, object]], seen: Seen) -> dict[str, CsvTable]:
    """Every table of the page, by its CSV name (docs/api.md lists them)."""
    day_header = ("day", "calls", *DAILY_TOKEN_KINDS, "usd")

    def deliveries() -> list[list[object]]:
        return [
            [d.attempted_at, d.report_date, d.kind, d.target, d.ok, d.error]
            for d in visible_deliveries(seen).iterator()
        ]

    return {
        "days": CsvTable(day_header, lambda: ([row[k] for k in day_header] for row in days)),
        "models": CsvTable(
            (
                "model",
                "priced_as",
                "calls",
                "input_tokens",
                "cached_input_tokens",
                "cache_write_tokens",
                "output_tokens",
                "usd",
                "cache_savings_usd",
                "unpriced_calls",
            ),
            lambda: (
                [
                    m.model,
                    m.priced_as,
                    m.calls,
                    m.input_tokens,
                    m.cached_input_tokens,
                    m.cache_write_tokens,
                    m.output_tokens,
                    m.usd,
                    m.cache_savings_usd,
                    m.unpriced_calls,
                ]
                for m in report.by_model
            ),
        ),
        "runs": CsvTable(
            ("run", "calls", "usd", "unpriced_calls"),
            lambda: ([r.run, r.calls, r.usd, r.unpriced_calls] for r in report.by_run),
        ),
        "people": CsvTable(
            ("person", "team", "calls", "usd", "unpriced_calls"),
            lambda: (
                [p.person, p.team, p.calls, p.usd, p.unpriced_calls] for p in report.by_person
            ),
        ),
        "teams": CsvTable(
            ("team", "usd", "daily_budget_usd"),
            lambda: ([t.team, t.usd, t.daily_budget_usd] for t in report.by_team),
        ),
        "gpu": CsvTable(
            (
                "target",
                "gpus",
                "usd_per_gpu_hour",
                "hours",
                "usd",
                "generated_tokens",
                "usd_per_mtok",
            ),
            lambda: (
                [
                    g.target,
                    g.gpus,
                    g.usd_per_gpu_hour,
                    g.hours,
                    g.usd,
                    g.generated_tokens,
                    g.usd_per_mtok,
                ]
                for g in report.gpu
            ),
        ),
        "deliveries": CsvTable(
            ("attempted_at", "report_date", "kind", "target", "ok", "error"), deliveries
        ),
    }


def _chart_url(name: str, query: str) -> str:
    return reverse("costs-chart", args=[name]) + "?" + query


@login_required
def costs_page(request: HttpRequest) -> HttpResponseBase:
    try:
        team = read_team_filter(request)
    except ForbiddenError as exc:
        return team_refused(request, exc, title="Costs", nav="costs")
    seen = team.seen
    try:
        day, tz = _read(request, seen)
        report = build_daily_report(day, tz, seen=seen)
        series = build_spend_series(day, CHART_DAYS, tz, seen=seen)
    except ParameterError as exc:
        return _day_problem(request, exc, team)
    days = _day_rows(series)
    if wants_csv(request) is not None:
        return table_csv(request, "costs", _tables(report, days, seen))
    query = urlencode({"date": day.isoformat(), "tz": tz, **team.params()})
    reader = seen_of(request)
    deliveries = visible_deliveries(seen)[:RECENT_DELIVERIES]
    return render(
        request,
        "costs/costs.html",
        {
            "nav": "costs",
            **formats.html_context(report),
            "tz": tz,
            "chart_days": CHART_DAYS,
            "model_chart_url": _chart_url("model", query),
            "run_chart_url": _chart_url("run", query),
            "tokens_chart_url": _chart_url("tokens", query),
            "csv_url": reverse("costs-csv") + "?" + query,
            # The API answers for everything the reader sees: no team filter there.
            "json_url": None if team.team else reverse("api:costs_daily") + "?" + query,
            "days": days,
            "deliveries": deliveries,
            "in_no_team": not reader.everything and not reader.team_ids,
            "team_choices": team.teams,
            "team": team.team,
        },
    )


@login_required
def costs_chart(request: HttpRequest, name: str) -> HttpResponse:
    if name not in CHARTS:
        raise Http404("no such chart")
    try:
        seen = read_team_filter(request).seen
        day, tz = _read(request, seen)
        series = build_spend_series(day, CHART_DAYS, tz, seen=seen)
    except ForbiddenError as exc:
        return JsonResponse({"detail": str(exc)}, status=403)
    except ParameterError as exc:
        return JsonResponse({"detail": str(exc)}, status=422)
    if name == "tokens":
        fig = cost_charts.tokens_figure(series.days, series.tokens)
    else:
        spend = series.by_model if name == "model" else series.by_run
        fig = cost_charts.spend_figure(series.days, spend, name)
    return HttpResponse(charts.to_json(fig), content_type="application/json")


@login_required
def costs_csv(request: HttpRequest) -> HttpResponse:
    try:
        seen = read_team_filter(request).seen
        day, tz = _read(request, seen)
        report = build_daily_report(day, tz, seen=seen)
    except ForbiddenError as exc:
        return HttpResponse(str(exc), status=403, content_type="text/plain; charset=utf-8")
    except ParameterError as exc:
        return _problem(exc)
    response = HttpResponse(formats.to_csv(report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="fleetscope-costs-{day}.csv"'
    return response
