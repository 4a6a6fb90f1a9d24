"""The Overview page: one run's commit rate and error rate on the same time axis as the
serving instances' KV usage and preemptions, so a slowdown in landing can be seen next to
its cause. Views only: runs answers from analytics/runs/, serving answers from
analytics/serving/ (queries, instances), the figure from analytics/serving/charts.py.

Everything here is what the request's Seen (lib.access.seen_of) sees: its runs (another
team's run is the 404 of a run that does not exist), its serving instances, and a default
range drawn from those only; a user in no team is told to ask an admin. `?team=` narrows
it to one team's runs, people and serving targets (dashboard.pages.team_filter), kept in
the run picker, the time picker and the chart URL.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from analytics import charts
from analytics.runs import queries as runs
from analytics.serving import charts as serving_charts
from analytics.serving import queries as serving
from analytics.serving.instances import list_instances
from dashboard.pages.runs import in_no_team
from dashboard.pages.team_filter import read_team_filter, team_refused
from dashboard.pages.time_window import PageWindow, range_problem, read_window
from lib.access import Seen, seen_of
from lib.errors import ForbiddenError, NotFoundError, ParameterError


def _problem(exc: Exception) -> HttpResponse:
    """The chart's answer to a bad request: JSON with a one-line `detail`, as the API's."""
    status = (
        404 if isinstance(exc, NotFoundError) else 403 if isinstance(exc, ForbiddenError) else 422
    )
    return JsonResponse({"detail": str(exc)}, status=status)


def _pick_run(request: HttpRequest, all_runs: list[runs.RunTotals]) -> runs.RunTotals | None:
    """The run asked for, or the one active most recently."""
    wanted = request.GET.get("run")
    if wanted:
        for r in all_runs:
            if r.run == wanted:
                return r
        raise NotFoundError(f"unknown run {wanted!r}")
    return max(all_runs, key=lambda r: r.last_ts, default=None)


def _resolve(page: PageWindow, run: runs.RunTotals | None, seen: Seen) -> serving.Window:
    """Explicit range or `last=`; otherwise the run's own range (or the serving data's),
    over the instances `seen` allows."""
    start, end = page.start, page.end
    if (start is None or end is None) and run is not None:
        start, end = run.first_ts, run.last_ts + timedelta(seconds=1)
    return serving.make_window(None, start, end, page.bucket_s, seen=seen)


def _read(
    request: HttpRequest, seen_runs: list[runs.RunTotals], seen: Seen
) -> tuple[PageWindow, runs.RunTotals | None, serving.Window]:
    run = _pick_run(request, seen_runs)
    page = read_window(request, default_last="")
    return page, run, _resolve(page, run, seen)


@login_required
def overview_page(request: HttpRequest) -> HttpResponse:
    if in_no_team(seen_of(request)):
        return render(request, "overview/no_team.html", {"nav": "overview"})
    try:
        team = read_team_filter(request)
    except ForbiddenError as exc:
        return team_refused(request, exc, title="Overview", nav="overview")
    seen = team.seen
    all_runs = runs.list_runs(seen)
    wanted = request.GET.get("run")
    try:
        page, run, window = _read(request, all_runs, seen)
    except NotFoundError as exc:
        raise Http404(str(exc)) from None
    except ParameterError as exc:
        keep = {"run": wanted, **team.params()} if wanted else team.params()
        return range_problem(request, exc, title="Overview", nav="overview", keep=keep)
    instances = list_instances(seen=seen)
    # Without an explicit range the chart view resolves the same default (the run's range).
    query = page.query(run=run.run if run else None, **team.params())
    keep = {"run": run.run, **team.params()} if run else team.params()
    return render(
        request,
        "serving/fleet_overview.html",
        {
            "nav": "overview",
            "runs": sorted(all_runs, key=lambda r: r.last_ts, reverse=True),
            "run": run,
            "instances": instances,
            "window": window,
            "range": page.context(keep, shown=(window.start, window.end, window.bucket_s)),
            "chart_src": reverse("overview-chart") + "?" + query,
            "team": team.team,
            "team_choices": team.teams,
            # A new team drops the run (it may not be the team's); the window stays.
            "team_keep": {
                k: v for k, v in request.GET.items() if k in ("last", "start", "end", "bucket")
            },
        },
    )


@login_required
def overview_chart(request: HttpRequest) -> HttpResponse:
    try:
        seen = read_team_filter(request).seen
        _, run, w = _read(request, runs.list_runs(seen), seen)
    except (NotFoundError, ForbiddenError, ParameterError) as exc:
        return _problem(exc)
    commits: list[tuple[datetime, float | None]] = []
    errors: list[tuple[datetime, float | None]] = []
    if run is not None:
        span = runs.TimeRange(w.start, w.end)
        rate = runs.commit_rate(run.run, w.bucket_s, span, seen=seen)
        commits = [(p.t, p.commits) for p in rate.points]
        error_rate = runs.error_rate(run.run, w.bucket_s, span, seen=seen)
        errors = [(p.t, p.rate if p.attempts else None) for p in error_rate.points]
    kv: dict[str, list[tuple[datetime, float | None]]] = {}
    preemptions: dict[str, list[tuple[datetime, float | None]]] = {}
    for name, data in sorted(serving.fleet_series(w).items()):
        if not seen.sees_instance(name):
            continue
        kv[name] = [(p.t, p.usage) for p in data.kv_usage]
        preemptions[name] = [(p.t, p.preemptions) for p in data.preemptions]
    fig = serving_charts.overview_figure(
        commits, errors, kv, preemptions, run.run if run else None, (w.start, w.end)
    )
    return HttpResponse(charts.to_json(fig), content_type="application/json")
