"""`GET /api/runs/{run}/replay` (docs/api.md): a session's turns in order, a page at a
time, from analytics/runs/replay.py (the same question the replay page asks). Mounted
in dashboard/api.py before the runs router, so its path is never read as part of a run
name. No SQL here; a run the reader does not see is a 404 like one that does not exist.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema

from analytics.runs import replay
from lib.access import seen_of
from lib.durations import Time

router = Router()


class ReplayIn(Schema):
    agent: str | None = None  # only this agent's turns (`main`, `agent-<id>`)
    limit: int = replay.DEFAULT_LIMIT
    cursor: str | None = None  # the `next` of the page before
    before: str | None = None  # the `previous` of the page after (paging back)


class ResultOut(Schema):
    ts: Time
    agent: str
    kind: str
    tool_use_id: str | None
    text: str | None
    text_chars: int | None
    truncated: bool
    is_error: bool
    captured: bool
    missing: str | None
    source: str
    source_line: int
    seq: int


class TurnOut(ResultOut):
    tool: str | None
    model: str | None
    result: ResultOut | None


class LabelOut(Schema):
    project: str | None
    cwd: str | None
    branch: str | None
    first_prompt: str | None
    first_ts: Time | None


class ReplayOut(Schema):
    run: str
    origin: str | None  # transcript, otlp, or null when the run has no turns
    captured: bool  # whether any turn's content was captured
    agents: list[str]
    label: LabelOut | None
    turns: list[TurnOut]
    next: str | None
    previous: str | None


@router.get(
    "/{path:run}/replay",
    response=ReplayOut,
    url_name="run_replay",
    summary="A session's turns: prompts, responses, tool calls with their results",
)
def run_replay(request: HttpRequest, run: str, params: Query[ReplayIn]) -> dict[str, Any]:
    page = replay.replay_page(
        run,
        seen_of(request),
        agent=params.agent or None,
        limit=params.limit,
        cursor=params.cursor or None,
        before=params.before or None,
    )
    return vars(page)
