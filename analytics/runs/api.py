"""Runs endpoints of the JSON API (docs/api.md). Handlers take their parameters as ninja
Query schemas (the time window as lib.window's WindowQuery) and call analytics.runs'
questions (queries, details); they never write SQL. The answers are those modules'
dataclasses, shaped by the Out schemas here. Every handler passes the request's Seen
(lib.access.seen_of): the list holds only the runs its user sees, and a run they do not
see is a 404 like a run that does not exist."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema

from analytics.runs import details as run_details
from analytics.runs import quarantine as run_quarantine
from analytics.runs import queries
from analytics.runs import serving_latency as run_serving
from analytics.runs.list_request import API_LIMIT, read_request
from analytics.runs.listing import ListedRun, list_runs_page
from analytics.runs.paging import COMMIT_SORTS, DEFAULT_LIMIT, AgentSort, Paging
from analytics.runs.status import RunState
from lib.access import seen_of, team_seen_of
from lib.durations import Time, parse_duration
from lib.window import WindowQuery

router = Router()
# GET /api/quarantine: quarantined lines by source, for those whose run is unknown.
quarantine_router = Router()

# The bucketed endpoints' bucket when none is asked for.
DEFAULT_BUCKET = "1h"


class RunOut(Schema):
    run: str
    first_ts: Time
    last_ts: Time
    agents: int
    events: int
    commits: int
    errors: int
    input_tokens: int
    output_tokens: int
    source_kind: str
    # Added with the runs list's search and paging (analytics/runs/listing.py):
    status: str  # finished, stalled, active or idle (analytics/runs/status.py)
    tokens: int  # input_tokens + output_tokens
    label: str | None  # a session's "project · branch — first prompt's words"
    project: str | None
    cwd: str | None
    branch: str | None
    first_prompt: str | None


class RunsIn(Schema):
    """`GET /api/runs`'s search, filters, sort and page (analytics/runs/list_request.py
    reads and checks them, for the runs page too)."""

    q: str | None = None  # a substring of the run's name or session label, any case
    status: str | None = None  # finished, stalled, active or idle
    source: str | None = None  # the source kind: agent-events, claude-code, codex...
    team: str | None = None  # a team's name: its run patterns, sources and people
    model: str | None = None  # runs that called this model
    start: str | None = None  # runs with an event at or after this time (RFC 3339)
    end: str | None = None  # runs with an event before this time
    sort: str | None = None  # a column, `-` first for largest/latest first: -last_seen
    limit: int | None = None  # 1 to 1000 (1000 unless given)
    cursor: str | None = None  # X-Next-Cursor of the page before


class CommitPoint(Schema):
    t: Time
    commits: int


class CommitRateOut(Schema):
    run: str
    bucket_seconds: int
    points: list[CommitPoint]
    total: int
    peak: CommitPoint | None


class StallOut(Schema):
    start: Time
    end: Time
    minutes: float
    busy_events: int


class CurrentStallOut(Schema):
    since: Time
    minutes: float


class StallsOut(Schema):
    run: str
    min_gap_seconds: int
    stalls: list[StallOut]
    current: CurrentStallOut | None


class ErrorPoint(Schema):
    t: Time
    attempts: int
    errors: int
    rate: float


class DriftOut(Schema):
    trend: str
    slope_per_hour: float | None
    p_value: float | None
    buckets: int
    min_buckets: int
    alpha: float


class ErrorRateOut(Schema):
    run: str
    bucket_seconds: int
    points: list[ErrorPoint]
    drift: DriftOut


class AgentOut(Schema):
    agent: str
    parent: str | None
    role: str | None
    events: int
    commits: int
    errors: int
    attempts: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float | None
    first_ts: Time | None
    last_ts: Time | None


class StallsIn(Schema):
    min_gap: str = "30m"  # a duration: shorter gaps between commits are not stalls


def _bucket_seconds(window: WindowQuery) -> int:
    seconds = window.bucket_seconds(default=DEFAULT_BUCKET)
    assert seconds is not None  # there is a default
    return seconds


def _run_out(run: ListedRun) -> dict[str, Any]:
    name = run.name
    return {
        **{k: v for k, v in vars(run).items() if k not in ("name", "status")},
        "status": str(run.status.state) if run.status else str(RunState.IDLE),
        "label": run.label,
        "project": name.project if name else None,
        "cwd": name.cwd if name else None,
        "branch": name.branch if name else None,
        "first_prompt": name.first_prompt if name else None,
    }


@router.get("", response=list[RunOut], summary="Runs with their totals, searched and paged")
def list_runs(
    request: HttpRequest, response: HttpResponse, params: Query[RunsIn]
) -> list[dict[str, Any]]:
    """A page of runs; the page after it is `X-Next-Cursor` (and the `Link` header's
    rel="next"), absent on the last page: the answer stays a bare list."""
    asked = read_request(params.dict(), default_limit=API_LIMIT)
    seen = seen_of(request)
    team = team_seen_of(request, asked.team) if asked.team else None
    page = list_runs_page(asked, seen, team=team)
    if page.next:
        query = request.GET.copy()
        query["cursor"] = page.next
        response["X-Next-Cursor"] = page.next
        response["Link"] = (
            f'<{request.build_absolute_uri(request.path)}?{query.urlencode()}>; rel="next"'
        )
    return [_run_out(run) for run in page.runs]


@router.get("/{path:run}/commit-rate", response=CommitRateOut, summary="Commits per bucket")
def commit_rate(request: HttpRequest, run: str, window: Query[WindowQuery]) -> queries.CommitRate:
    bucket_seconds = _bucket_seconds(window)
    return queries.commit_rate(run, bucket_seconds, window.time_range(), seen=seen_of(request))


@router.get("/{path:run}/stalls", response=StallsOut, summary="Commit stalls")
def stalls(
    request: HttpRequest, run: str, params: Query[StallsIn], window: Query[WindowQuery]
) -> queries.Stalls:
    gap = parse_duration(params.min_gap, name="min_gap")
    return queries.stalls(run, gap, window.time_range(), seen=seen_of(request))


@router.get("/{path:run}/error-rate", response=ErrorRateOut, summary="Error rate and drift")
def error_rate(request: HttpRequest, run: str, window: Query[WindowQuery]) -> queries.ErrorRate:
    bucket_seconds = _bucket_seconds(window)
    return queries.error_rate(run, bucket_seconds, window.time_range(), seen=seen_of(request))


class EventKindOut(Schema):
    kind: str
    events: int


@router.get("/{path:run}/event-kinds", response=list[EventKindOut], summary="Events per kind")
def event_kinds(
    request: HttpRequest, run: str, window: Query[WindowQuery]
) -> list[queries.EventKindCount]:
    return queries.event_kinds(run, window.time_range(), seen=seen_of(request))


@router.get("/{path:run}/agents", response=list[AgentOut], summary="The agent tree")
def agents(request: HttpRequest, run: str, window: Query[WindowQuery]) -> list[dict[str, Any]]:
    # Flat rows handed over as their dicts: ninja reads an object attribute by attribute,
    # a dict a third faster (`python -m bench runs_api`, agents median: 185 ms as objects,
    # 114-122 ms as dicts, 124 ms before the rows were typed).
    rows = queries.agents(run, window.time_range(), seen=seen_of(request))
    return [vars(agent) for agent in rows]


# --- what the log adapters add: sources, tools, tokens by model, commits per agent --------


class SourceOut(Schema):
    source_kind: str
    sources: int
    events: int
    first_ts: Time
    last_ts: Time


class ToolOut(Schema):
    tool: str | None
    calls: int
    answered: int
    errors: int
    error_rate: float | None
    mean_duration_ms: float | None
    agents: int


class ToolsOut(Schema):
    run: str
    calls: int
    answered: int
    errors: int
    error_rate: float | None
    tools: list[ToolOut]


class ModelOut(Schema):
    model: str
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    cache_write_5m_tokens: int | None
    cache_write_1h_tokens: int | None
    output_tokens: int
    reasoning_output_tokens: int | None
    cost_usd: float | None
    total_tokens: int


class AgentCommitsOut(Schema):
    agent: str
    commits: int
    claims: int
    work: int
    files: int
    insertions: int
    deletions: int
    first_ts: Time
    last_ts: Time


class WorkClaimsPoint(Schema):
    t: Time
    work: int
    claims: int


class WorkClaimsOut(Schema):
    run: str
    bucket_seconds: int
    points: list[WorkClaimsPoint]
    work: int
    claims: int


@router.get(
    "/{path:run}/work-and-claims",
    response=WorkClaimsOut,
    url_name="run_work_and_claims",
    summary="Commits per bucket, work apart from task claims",
)
def work_and_claims(
    request: HttpRequest, run: str, window: Query[WindowQuery]
) -> run_details.WorkAndClaims:
    bucket_seconds = _bucket_seconds(window)
    return run_details.work_and_claims(
        run, bucket_seconds, window.time_range(), seen=seen_of(request)
    )


@router.get(
    "/{path:run}/sources",
    response=list[SourceOut],
    url_name="run_sources",
    summary="Where the run's events came from",
)
def sources(request: HttpRequest, run: str, window: Query[WindowQuery]) -> list[run_details.Source]:
    return run_details.sources(run, window.time_range(), seen=seen_of(request))


@router.get(
    "/{path:run}/tools",
    response=ToolsOut,
    url_name="run_tools",
    summary="Tool calls and errors by tool",
)
def tools(request: HttpRequest, run: str, window: Query[WindowQuery]) -> run_details.Tools:
    return run_details.tools(run, window.time_range(), seen=seen_of(request))


@router.get(
    "/{path:run}/models", response=list[ModelOut], url_name="run_models", summary="Tokens by model"
)
def models(
    request: HttpRequest, run: str, window: Query[WindowQuery]
) -> list[run_details.ModelUse]:
    return run_details.models(run, window.time_range(), seen=seen_of(request))


class LatencyOut(Schema):
    count: int  # the records that report it
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None


class ServingLatencyOut(Schema):
    run: str
    requests: int
    ttft: LatencyOut
    queue: LatencyOut
    e2e: LatencyOut


@router.get(
    "/{path:run}/serving-latency",
    response=ServingLatencyOut,
    url_name="run_serving_latency",
    summary="The serving latency the run's own model calls saw",
)
def serving_latency(
    request: HttpRequest, run: str, window: Query[WindowQuery]
) -> run_serving.ServingLatency:
    return run_serving.serving_latency(run, window.time_range(), seen=seen_of(request))


class AgentCommitsIn(Schema):
    sort: str = "commits"  # commits, work, claims, files, insertions, deletions or agent
    limit: int | None = None  # every agent unless given (1 to 1000)
    offset: int = 0


@router.get(
    "/{path:run}/commits-by-agent",
    response=list[AgentCommitsOut],
    url_name="run_commits_by_agent",
    summary="Commits per agent, task claims apart from work",
)
def commits_by_agent(
    request: HttpRequest, run: str, params: Query[AgentCommitsIn], window: Query[WindowQuery]
) -> list[run_details.AgentCommits]:
    sort = AgentSort.read(params.sort, COMMIT_SORTS)
    paging = None if params.limit is None else Paging(params.limit, params.offset)
    return run_details.commits_by_agent(
        run, window.time_range(), sort, paging, seen=seen_of(request)
    )


# --- quarantine: the lines ingest set aside ------------------------------------------------


class PageIn(Schema):
    limit: int = DEFAULT_LIMIT  # 1 to 1000
    offset: int = 0


class QuarantineIn(PageIn):
    source: str | None = None  # the file (or upload) the lines came from
    source_kind: str | None = None  # agent-events, requests, claude-code, codex, parallel


class QuarantinedLineOut(Schema):
    source_kind: str
    source: str
    line_no: int | None
    byte_offset: int | None
    reason: str
    raw: str | None
    ingested_at: Time


class QuarantineOut(Schema):
    total: int
    limit: int
    offset: int
    lines: list[QuarantinedLineOut]


@router.get(
    "/{path:run}/quarantine",
    response=QuarantineOut,
    url_name="run_quarantine",
    summary="The run's quarantined lines, newest first",
)
def quarantine(
    request: HttpRequest, run: str, params: Query[PageIn]
) -> run_quarantine.QuarantinePage:
    paging = Paging(params.limit, params.offset)
    return run_quarantine.run_quarantine(run, paging, seen=seen_of(request))


@quarantine_router.get(
    "",
    response=QuarantineOut,
    url_name="quarantine",
    summary="Quarantined lines by source, newest first",
)
def quarantine_by_source(
    request: HttpRequest, params: Query[QuarantineIn]
) -> run_quarantine.QuarantinePage:
    paging = Paging(params.limit, params.offset)
    return run_quarantine.source_quarantine(
        params.source, params.source_kind, paging, seen=seen_of(request)
    )
