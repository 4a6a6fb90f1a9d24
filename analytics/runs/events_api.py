"""`GET /api/runs/{run}/events` (docs/api.md): the events explorer's question, a page of a
run's events by a keyset cursor, or with `format=csv|jsonl` every event the filter
matches as a streamed file; from analytics/runs/events.py, as the explorer page asks it.
Mounted in dashboard/api.py before the runs router, so its path is never read as part
of a run name. No SQL here; a run the reader does not see is a 404 like a missing one.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.runs import events, events_export
from analytics.runs.events_filters import read_filter, read_format, read_limit
from lib.access import seen_of
from lib.durations import Time, format_time

router = Router()


class EventsIn(Schema):
    kind: str | None = None  # an event kind (spawn, llm_call, tool_call, commit, error...)
    ok: str | None = (
        None  # false: the errors (failed attempts, error events); true: attempts that did not fail
    )
    agent: str | None = None
    subtree: str | None = None  # 1/true: the agent and every agent below it
    model: str | None = None
    tool: str | None = None
    q: str | None = None  # text in error messages, commit messages and handoff notes
    start: str | None = None  # RFC 3339, inclusive
    end: str | None = None  # RFC 3339, exclusive
    order: str | None = None  # newest (default) or oldest
    limit: str | None = None  # 1-1000, default 50
    cursor: str | None = None  # the `next` of the page before
    format: str | None = None  # csv or jsonl: every matching event as a file


class UsageOut(Schema):
    input_tokens: int | None
    cached_input_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None


class CommitOut(Schema):
    sha: str | None
    subject: str | None
    message: str | None
    files: int | None
    insertions: int | None
    deletions: int | None


class ErrorOut(Schema):
    kind: str | None
    message: str | None


class HandoffOut(Schema):
    to: str | None
    status: str | None
    notes: str | None


class EventOut(Schema):
    event: str
    ts: Time
    run: str
    agent: str
    id: str | None
    parent: str | None
    role: str | None
    model: str | None
    usage: UsageOut | None
    cost_usd: float | None  # as logged
    usd: float | None  # the call's USD (logged, else priced); null when it has no price
    tool: str | None
    ok: bool | None
    failed: bool  # an error event, or an attempt with ok false (as the error rate counts)
    duration_ms: float | None
    task: str | None
    commit: CommitOut | None
    push: dict[str, bool | None] | None
    error: ErrorOut | None
    handoff: HandoffOut | None
    attrs: Any
    source_kind: str
    source: str
    source_line: int | None


class EventsOut(Schema):
    events: list[EventOut]
    next: str | None


_USAGE = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


def _some(values: dict[str, Any]) -> dict[str, Any] | None:
    return values if any(v is not None for v in values.values()) else None


def event_record(run: str, e: events.Event) -> dict[str, Any]:
    """An event as the API (and the page's whole record) spells it: the contract's shape."""
    f = e.fields
    return {
        "event": e.event,
        "ts": format_time(e.ts),
        "run": run,
        "agent": e.agent,
        **{name: f[name] for name in ("id", "parent", "role", "model", "cost_usd", "tool", "ok")},
        "usage": _some({name: f[name] for name in _USAGE}),
        "usd": e.usd,
        "failed": e.failed,
        "duration_ms": f["duration_ms"],
        "task": f["task"],
        "commit": _some(
            {
                "sha": f["commit_sha"],
                "subject": e.subject,
                "message": f["commit_message"],
                "files": f["commit_files"],
                "insertions": f["commit_insertions"],
                "deletions": f["commit_deletions"],
            }
        ),
        "push": _some({"conflict": f["push_conflict"]}),
        "error": _some({"kind": f["error_kind"], "message": f["error_message"]}),
        "handoff": _some(
            {"to": f["handoff_to"], "status": f["handoff_status"], "notes": f["handoff_notes"]}
        ),
        "attrs": e.attrs,
        "source_kind": f["source_kind"],
        "source": f["source"],
        "source_line": f["source_line"],
    }


@router.get(
    "/{path:run}/events",
    response=EventsOut,
    url_name="run_events",
    summary="A run's events, filtered, a page at a time (or every one as CSV or JSONL)",
)
def run_events(request: HttpRequest, run: str, params: Query[EventsIn]) -> Any:
    values = params.dict()
    flt = read_filter(values)
    fmt = read_format(params.format)
    limit = read_limit(params.limit)
    if fmt is not None:
        return events_export.export_response(run, flt, fmt, seen_of(request))
    page = events.events_page(run, flt, seen_of(request), limit=limit, cursor=params.cursor or None)
    return {"events": [event_record(run, e) for e in page.events], "next": page.next}
