"""The Costs page: the daily report for any day (the latest day with spend when none is
asked for), daily spend charts by model and by run, the CSV download, team budgets and
recent report deliveries. Views only: data from analytics.costs.report, figures from
analytics.costs.charts, each over what the user may see (`seen_of`): their teams' runs,
serving targets and teams, and the deliveries to their teams' recipients.
"""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from analytics import charts
from analytics.costs import charts as cost_charts
from analytics.costs import queries as cost_queries
from analytics.costs import report_formats as formats
from analytics.costs.api import read_day
from analytics.costs.report import build_daily_report, build_spend_series, read_zone
from analytics.costs.report_delivery import visible_deliveries
from lib.access import Seen, seen_of
from lib.errors import ParameterError

CHART_DAYS = 30
CHARTS = ("model", "run")  # daily spend stacked by model, by run


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


def _read(request: HttpRequest) -> tuple[date, str]:
    tz = request.GET.get("tz") or "UTC"
    zone = read_zone(tz)
    asked = request.GET.get("date")
    day = read_day(asked, zone.key) if asked else latest_spend_day(zone, seen_of(request))
    return day, zone.key


def _problem(exc: Exception) -> HttpResponse:
    return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")


def _day_problem(request: HttpRequest, exc: ParameterError) -> HttpResponse:
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
    }
    return render(request, "costs/day_problem.html", context, status=422)


@login_required
def costs_page(request: HttpRequest) -> HttpResponse:
    seen = seen_of(request)
    try:
        day, tz = _read(request)
        report = build_daily_report(day, tz, seen=seen)
    except ParameterError as exc:
        return _day_problem(request, exc)
    query = urlencode({"date": day.isoformat(), "tz": tz})
    return render(
        request,
        "costs/costs.html",
        {
            "nav": "costs",
            **formats.html_context(report),
            "tz": tz,
            "chart_days": CHART_DAYS,
            "model_chart_url": reverse("costs-chart", args=["model"]) + "?" + query,
            "run_chart_url": reverse("costs-chart", args=["run"]) + "?" + query,
            "csv_url": reverse("costs-csv") + "?" + query,
            "json_url": reverse("api:costs_daily") + "?" + query,
            "deliveries": visible_deliveries(seen)[:10],
            "in_no_team": not seen.everything and not seen.team_ids,
        },
    )


@login_required
def costs_chart(request: HttpRequest, name: str) -> HttpResponse:
    if name not in CHARTS:
        raise Http404("no such chart")
    try:
        day, tz = _read(request)
        series = build_spend_series(day, CHART_DAYS, tz, seen=seen_of(request))
    except ParameterError as exc:
        return JsonResponse({"detail": str(exc)}, status=422)
    spend = series.by_model if name == "model" else series.by_run
    fig = cost_charts.spend_figure(series.days, spend, name)
    return HttpResponse(charts.to_json(fig), content_type="application/json")


@login_required
def costs_csv(request: HttpRequest) -> HttpResponse:
    try:
        day, tz = _read(request)
        report = build_daily_report(day, tz, seen=seen_of(request))
    except ParameterError as exc:
        return _problem(exc)
    response = HttpResponse(formats.to_csv(report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="fleetscope-costs-{day}.csv"'
    return response
