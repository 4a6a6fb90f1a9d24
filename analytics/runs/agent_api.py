"""`GET /api/runs/{run}/agents/{agent}` (docs/api.md): one agent of a run, its place in
the tree, figures, USD, timeline and longest gaps, from analytics/runs/agent.py (the same
question the agent page asks). Mounted in dashboard/api.py before the runs router, so the
path is never read as part of a run's name; the run's name and the agent's id may each
hold `/` (the run ends at the last `/agents/`). No SQL here; a run the reader does not
see is a 404 like one that does not exist, and so is an agent the run does not hold.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from analytics.runs.agent import agent_page
from lib.access import seen_of
from lib.durations import Time

router = Router()


class AgentLinkOut(Schema):
    agent: str
    role: str | None


class TimelinePointOut(Schema):
    t: Time
    lane: str
    events: int
    label: str | None


class GapOut(Schema):
    start: Time
    end: Time
    seconds: float


class AgentPageOut(Schema):
    run: str
    agent: str
    role: str | None
    parent: AgentLinkOut | None
    children: list[AgentLinkOut]
    events: int
    commits: int
    errors: int
    attempts: int
    error_rate: float | None
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    tokens: int
    llm_calls: int
    usd: float | None
    unpriced_calls: int
    first_ts: Time | None
    last_ts: Time | None
    bucket_seconds: int | None
    timeline: list[TimelinePointOut]
    gaps: list[GapOut]


@router.get(
    "/{path:run}/agents/{path:agent}",
    response=AgentPageOut,
    url_name="run_agent",
    summary="One agent: its place in the tree, figures, USD, timeline and longest gaps",
)
def run_agent(request: HttpRequest, run: str, agent: str) -> dict[str, Any]:
    page = agent_page(run, agent, seen_of(request))
    return {**vars(page), "tokens": page.tokens}
