"""The run pages: a run's page, its chart JSON and its refreshable fragments (the runs list
is dashboard/pages/runs_list.py).

Views only: answers come from analytics/runs/ (queries, details, status: the same
functions the API calls, so pages and API agree), figures from analytics/runs/charts.py,
the tree from analytics/runs/tree.py. No SQL here. Every view needs a login, and asks
with the request's Seen (lib.access.seen_of): the list shows only the runs its user sees,
a run they do not see is the 404 of a run that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics import charts
from analytics.costs.pricing import PriceBook
from analytics.runs import charts as run_charts
from analytics.runs import details as run_details
from analytics.runs import quarantine as run_quarantine
from analytics.runs import queries, serving_charts, serving_latency
from analytics.runs.agent_costs import agent_costs
from analytics.runs.model_costs import priced_models, run_cost
from analytics.runs.paging import COMMIT_SORTS, TREE_SORTS, AgentSort, Paging
from analytics.runs.status import RunStatus, run_statuses
from analytics.runs.tree import TreePage, build_agent_tree, open_depth, page_tree
from dashboard.pages import run_links
from dashboard.pages.run_serving import Build, serving_chart, serving_context
from dashboard.pages.run_tables import run_table_csv
from dashboard.pages.run_window import (
    BUCKETS,
    DEFAULT_MIN_GAP,
    MIN_GAPS,
    PRESETS,
    REFRESH_OPTIONS,
    RunWindow,
    read_run_window,
)
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Seen, seen_of
from lib.bounds import NAME_LENGTH
from lib.durations import format_time, parse_duration
from lib.errors import ParameterError

# The tree opens as many levels as fit in about a screen (the root at least); deeper
# levels start collapsed, so a run of hundreds of workers stays usable.
TREE_OPEN_ROWS = 40
# Shared by every request of this process: a page's few independent queries run at once.
_QUERIES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="page-query")
BADGES = {"finished": "info", "stalled": "bad", "active": "good", "idle": "warn"}
DRIFT_BADGES = {"rising": "bad", "falling": "good", "flat": "info"}
# A run of a thousand agents stays a page long: its lists show this many rows at a time.
PAGE_ROWS = 50
# The commits-per-agent table's columns, each a sort (analytics.runs.paging.COMMIT_SORTS).
COMMIT_COLUMNS = (
    (AgentSort.AGENT, "Agent"),
    (AgentSort.COMMITS, "Commits"),
    (AgentSort.WORK, "Work"),
    (AgentSort.CLAIMS, "Claims"),
    (AgentSort.FILES, "Files"),
    (AgentSort.INSERTIONS, "Insertions"),
    (AgentSort.DELETIONS, "Deletions"),
)


def _rate(errors: int, attempts: int) -> float | None:
    return errors / attempts if attempts else None


def _bad_parameter(request: HttpRequest, exc: ParameterError) -> HttpResponse:
    return render(request, "runs/bad_parameter.html", {"message": str(exc)}, status=422)


def in_no_team(seen: Seen) -> bool:
    """A user who sees no team's data (the empty pages tell them to ask an admin)."""
    return not seen.everything and not seen.team_ids


# --- a run ---------------------------------------------------------------------------------


def _window(request: HttpRequest, run: str) -> tuple[RunWindow, RunStatus]:
    """The run's status and the window the request asks for; 404 for an unknown run."""
    min_gap = parse_duration(request.GET.get("min_gap") or DEFAULT_MIN_GAP, name="min_gap")
    status = run_statuses(min_gap, run=run, seen=seen_of(request)).get(run)
    if status is None:
        raise Http404(f"There is no run named {run!r}.")
    return read_run_window(request, status.first_ts, status.last_ts), status


def _gather(**calls: Callable[[], Any]) -> dict[str, Any]:
    """Run independent warehouse queries side by side (DuckDB releases the GIL and the
    warehouse gives each thread its own cursor); their answers by name."""
    futures = {name: _QUERIES.submit(call) for name, call in calls.items()}
    return {name: future.result() for name, future in futures.items()}


def _summary(run: str, window: RunWindow, status: RunStatus, seen: Seen) -> dict[str, Any]:
    """Stat cards, drift and stalls of the run in the window."""
    span, bucket = window.time_range, window.bucket_seconds
    book = PriceBook.load()  # here, not in a query thread: Django's connections are per thread
    calls: dict[str, Callable[[], Any]] = {
        "rate": lambda: queries.commit_rate(run, bucket, span, seen=seen),
        "errors": lambda: queries.error_rate(run, bucket, span, seen=seen),
        "stalls": lambda: queries.stalls(run, window.min_gap_delta, span, seen=seen),
        "cost": lambda: run_cost(run, span, seen=seen, book=book),
    }
    if bucket != 3600:
        calls["hourly"] = lambda: queries.commit_rate(run, 3600, span, seen=seen)
    answers = _gather(**calls)
    rate: queries.CommitRate = answers["rate"]
    errors: queries.ErrorRate = answers["errors"]
    stalls: queries.Stalls = answers["stalls"]
    hourly: queries.CommitRate = answers.get("hourly", rate)
    attempts = sum(p.attempts for p in errors.points)
    error_count = sum(p.errors for p in errors.points)
    drift = errors.drift
    return {
        "commits": rate.total,
        "peak": hourly.peak,
        "errors": error_count,
        "attempts": attempts,
        "error_rate": _rate(error_count, attempts),
        "drift": drift,
        "drift_text": run_charts.drift_text(drift),
        "drift_badge": DRIFT_BADGES.get(drift.trend, "info"),
        "stalls": stalls.stalls,
        "stall_rows": run_links.stall_rows(run, stalls),
        "current_stall": stalls.current,
        "current_stall_link": run_links.current_stall_link(run, stalls),
        "run_cost": answers["cost"],
        "state": str(status.state),
        "badge": BADGES[str(status.state)],
    }


def _agent_rows(run: str, window: RunWindow, seen: Seen) -> list[queries.AgentFigures]:
    """Every agent of the run, placed by the whole run's parent links and roles (a spawn
    before the range still places its agent), with its figures inside the range."""
    if window.start is None and window.end is None:
        return queries.agents(run, seen=seen)
    answers = _gather(
        whole=lambda: queries.agents(run, seen=seen),
        inside=lambda: queries.agents(run, window.time_range, seen=seen),
    )
    inside = {r.agent: r for r in answers["inside"]}
    return [_placed(row, inside.get(row.agent)) for row in answers["whole"]]


def _placed(
    whole: queries.AgentFigures, inside: queries.AgentFigures | None
) -> queries.AgentFigures:
    """The agent's figures inside the range (none, when it logged nothing there) at its
    place in the whole run."""
    if inside is None:
        return replace(
            whole,
            events=0,
            commits=0,
            errors=0,
            attempts=0,
            input_tokens=0,
            cached_input_tokens=0,
            cache_write_tokens=0,
            output_tokens=0,
            cost_usd=None,
            first_ts=None,
            last_ts=None,
        )
    return replace(inside, parent=whole.parent, role=whole.role)


@dataclass(frozen=True)
class RunLists:
    """Where the run page's long lists stand, from its query string: the agent tree's
    sort, page and find (`tree_sort`, `tree_offset`, `find`), the commits-per-agent
    table's (`commits_sort`, `commits_offset`) and the quarantine's (`quarantine_offset`)."""

    tree_sort: AgentSort
    tree: Paging
    find: str
    commits_sort: AgentSort
    commits: Paging
    quarantine: Paging

    @classmethod
    def read(cls, request: HttpRequest) -> RunLists:
        find = request.GET.get("find", "").strip()
        if len(find) > NAME_LENGTH:
            raise ParameterError(f"find is longer than {NAME_LENGTH} characters")
        return cls(
            tree_sort=AgentSort.read(request.GET.get("tree_sort"), TREE_SORTS),
            tree=Paging.read(request.GET.get("tree_offset"), PAGE_ROWS),
            find=find,
            commits_sort=AgentSort.read(request.GET.get("commits_sort"), COMMIT_SORTS),
            commits=Paging.read(request.GET.get("commits_offset"), PAGE_ROWS),
            quarantine=Paging.read(request.GET.get("quarantine_offset"), PAGE_ROWS),
        )

    def params(self) -> dict[str, str]:
        """The query parameters that keep these lists as they are (defaults left out)."""
        params = {
            "tree_sort": self.tree_sort.value if self.tree_sort != TREE_SORTS[0] else "",
            "tree_offset": str(self.tree.offset or ""),
            "find": self.find,
            "commits_sort": self.commits_sort.value if self.commits_sort != COMMIT_SORTS[0] else "",
            "commits_offset": str(self.commits.offset or ""),
            "quarantine_offset": str(self.quarantine.offset or ""),
        }
        return {k: v for k, v in params.items() if v}


def _lists_links(
    run: str, window: RunWindow, lists: RunLists, total: dict[str, int]
) -> dict[str, Any]:
    """Links that move one list (a sort, a page) and keep the window and the others;
    `total` is each list's row count."""
    page = reverse("run", kwargs={"run": run})

    def link(anchor: str, **changes: str) -> str:
        params = {**window.params(), **lists.params(), **changes}
        return f"{page}?{urlencode({k: v for k, v in params.items() if v})}#{anchor}"

    def pager(name: str, paging: Paging, anchor: str) -> dict[str, str | None]:
        after, before = paging.next_offset(total[name]), paging.previous_offset()
        return {
            "next": link(anchor, **{f"{name}_offset": str(after)}) if after is not None else None,
            "previous": link(anchor, **{f"{name}_offset": str(before or "")})
            if before is not None
            else None,
        }

    tree_kept = {**window.params(), **lists.params()}
    for name in ("tree_sort", "tree_offset", "find"):
        tree_kept.pop(name, None)
    return {
        "tree": pager("tree", lists.tree, "agents"),
        "commits": pager("commits", lists.commits, "run-commits-by-agent"),
        "quarantine": pager("quarantine", lists.quarantine, "run-quarantine"),
        "commit_columns": [
            (sort.value, label, link("run-commits-by-agent", commits_sort=sort, commits_offset=""))
            for sort, label in COMMIT_COLUMNS
        ],
        "tree_form": sorted(tree_kept.items()),
    }


def _agent_stats(rows: list[queries.AgentFigures]) -> dict[str, Any]:
    active = [r for r in rows if r.events]
    return {
        "agents_active": len(active),
        "tokens": sum(r.input_tokens + r.output_tokens for r in active),
        "cached_tokens": sum(r.cached_input_tokens for r in active),
        "roles": _role_counts(active),
    }


def _tree_context(run: str, window: RunWindow, lists: RunLists, seen: Seen) -> dict[str, Any]:
    # The USD of every agent in one grouped statement, beside the rows (not nested in
    # _agent_rows' own gather: a pool task waiting on the pool could starve it); prices
    # are read here, on the request's own database connection.
    costs = _QUERIES.submit(agent_costs, run, window.time_range, PriceBook.load())
    rows = _agent_rows(run, window, seen)
    roots = build_agent_tree(rows, costs.result())
    tree: TreePage = page_tree(roots, lists.tree_sort, lists.tree, lists.find)
    return {
        "tree": tree.roots,
        "tree_page": tree,
        "tree_sorts": [s.value for s in TREE_SORTS],
        "open_depth": open_depth(tree.roots, TREE_OPEN_ROWS),
        **_agent_stats(rows),
    }


def _details_context(run: str, window: RunWindow, lists: RunLists, seen: Seen) -> dict[str, Any]:
    """Sources, tools, tokens by model, a page of commits per agent (analytics/runs/
    details.py, as the API serves them) and a page of the run's quarantined lines."""
    span = window.time_range
    answers = _gather(
        sources=lambda: run_details.sources(run, span, seen=seen),
        tools=lambda: run_details.tools(run, span, seen=seen),
        models=lambda: run_details.models(run, span, seen=seen),
        commits=lambda: run_details.commits_by_agent_page(
            run, span, lists.commits_sort, lists.commits, seen=seen
        ),
        quarantine=lambda: run_quarantine.run_quarantine(run, lists.quarantine, seen=seen),
        serving=lambda: serving_latency.serving_latency(run, span, seen=seen),
    )
    commits: run_details.AgentCommitsPage = answers["commits"]
    return {
        "details_sources": answers["sources"],
        "details_tools": answers["tools"],
        "details_models": answers["models"],
        "details_commits": commits,
        "quarantine": answers["quarantine"],
        "serving_latency": answers["serving"],
    }


def _totals(context: dict[str, Any]) -> dict[str, int]:
    """Each long list's row count, for its pager."""
    commits = context.get("details_commits")
    quarantined = context.get("quarantine")
    return {
        "tree": context["tree_page"].leaves,
        "commits": commits.agents if commits else 0,
        "quarantine": quarantined.total if quarantined else 0,
    }


def _role_counts(rows: list[queries.AgentFigures]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for row in rows:
        role = row.role or "unknown"
        counts[role] = counts.get(role, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@login_required
def run_detail(request: HttpRequest, run: str) -> HttpResponse | StreamingHttpResponse:
    seen = seen_of(request)
    try:
        window, status = _window(request, run)
        lists = RunLists.read(request)
        if (table := wants_csv(request)) is not None:
            return run_table_csv(run, table, window, lists.commits_sort, seen)
        fragment = request.GET.get("fragment")
        context: dict[str, Any] = {"nav": "runs", "run": run, "window": window, "status": status}
        if fragment == "summary":
            context.update(_summary(run, window, status, seen))
            context.update(_agent_stats(_agent_rows(run, window, seen)))
            return render(request, "runs/partials/run_summary.html", context)
        if fragment == "tree":
            context.update(_tree_context(run, window, lists, seen))
            context["lists"] = _lists_links(run, window, lists, _totals(context))
            return render(request, "runs/partials/agent_tree.html", context)
        context.update(_summary(run, window, status, seen))
        context.update(_tree_context(run, window, lists, seen))
        context.update(_details_context(run, window, lists, seen))
        context["lists"] = _lists_links(run, window, lists, _totals(context))
        context["priced_models"] = priced_models(context["details_models"], context["run_cost"])
        context.update(serving_context(run, window, context["details_models"], seen))
    except ParameterError as exc:
        return _bad_parameter(request, exc)
    page = reverse("run", kwargs={"run": run})
    query = window.query()
    context.update(
        presets=PRESETS,
        buckets=BUCKETS,
        min_gaps=MIN_GAPS,
        refresh_options=REFRESH_OPTIONS,
        commit_chart_url=reverse("run-commit-rate-chart", kwargs={"run": run}) + "?" + query,
        error_chart_url=reverse("run-error-rate-chart", kwargs={"run": run}) + "?" + query,
        summary_url=f"{page}?{window.query(fragment='summary')}",
        tree_url=f"{page}?{window.query(fragment='tree', **lists.params())}",
        api=_api_queries(window),
        range_links=run_links.range_links(run, window.start, window.end),
    )
    return render(request, "runs/run.html", context)


def _api_queries(window: RunWindow) -> dict[str, str]:
    """The same window as the API spells it, for the page's "as JSON" links: query
    strings for the bucketed endpoints, the stalls and the agents."""
    span = {}
    if window.start:
        span["start"] = format_time(window.start) or ""
    if window.end:
        span["end"] = format_time(window.end) or ""
    return {
        "bucketed": urlencode({"bucket": f"{window.bucket_seconds}s", **span}),
        "stalls": urlencode({"min_gap": window.min_gap, **span}),
        "agents": urlencode(span),
    }


@login_required
def run_commit_rate_chart(request: HttpRequest, run: str) -> HttpResponse:
    """The commit-rate figure: what /api/runs/{run}/commit-rate and /stalls answer."""
    try:
        window, status = _window(request, run)
        span, seen = window.time_range, seen_of(request)
        rate = queries.commit_rate(run, window.bucket_seconds, span, seen=seen)
        stalls = queries.stalls(run, window.min_gap_delta, span, seen=seen)
    except ParameterError as exc:
        return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
    fig = run_charts.build_commit_rate_figure(
        rate, stalls, status.last_ts, run_links.explore_of(run)
    )
    return HttpResponse(charts.to_json(fig), content_type="application/json")


@login_required
def run_error_rate_chart(request: HttpRequest, run: str) -> HttpResponse:
    """The error-rate figure: what /api/runs/{run}/error-rate answers, drift included."""
    try:
        window, _ = _window(request, run)
        errors = queries.error_rate(
            run, window.bucket_seconds, window.time_range, seen=seen_of(request)
        )
    except ParameterError as exc:
        return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
    fig = run_charts.build_error_rate_figure(errors, run_links.explore_of(run))
    return HttpResponse(charts.to_json(fig), content_type="application/json")


def _serving_chart(request: HttpRequest, run: str, build: Build) -> HttpResponse:
    try:
        window, _ = _window(request, run)
        figure = serving_chart(run, window, seen_of(request), build)
    except ParameterError as exc:
        return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
    return HttpResponse(figure, content_type="application/json")


@login_required
def run_serving_kv_chart(request: HttpRequest, run: str) -> HttpResponse:
    """KV-cache usage per bucket of the instances that served the run's models."""
    return _serving_chart(request, run, serving_charts.build_serving_kv_figure)


@login_required
def run_serving_preemptions_chart(request: HttpRequest, run: str) -> HttpResponse:
    """Preemptions per bucket of the instances that served the run's models."""
    return _serving_chart(request, run, serving_charts.build_serving_preemptions_figure)
