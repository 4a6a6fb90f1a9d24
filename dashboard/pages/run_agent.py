"""The agent page, `/runs/<run>/agents/<agent>/`, and its timeline chart JSON: one agent of
a run (role, parent, children, figures, USD, the timeline, the longest gaps), from
analytics/runs/agent.py (the question the API asks too), its figure from
analytics/runs/agent_chart.py.

Views only: no SQL. Login required; a run the user does not see, or an agent the run
does not hold, is the 404 of one that does not exist. The run's name and the agent's id
may each hold `/`: the run ends at the last `/agents/` of the path.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics import charts
from analytics.runs.agent import AgentPage, agent_page
from analytics.runs.agent_chart import LANES, build_timeline_figure
from lib.access import seen_of
from lib.errors import NotFoundError

LANE_NAMES = {lane: (name, one) for lane, name, one, _ in LANES}


def _page(request: HttpRequest, run: str, agent: str) -> AgentPage:
    try:
        return agent_page(run, agent, seen_of(request))
    except NotFoundError:
        raise Http404(f"Run {run!r} has no agent {agent!r}.") from None


def _agent_url(run: str, agent: str) -> str:
    return reverse("run-agent", kwargs={"run": run, "agent": agent})


@login_required
def run_agent(request: HttpRequest, run: str, agent: str) -> HttpResponse:
    page = _page(request, run, agent)
    lanes: dict[str, int] = {}
    for point in page.timeline:
        lanes[point.lane] = lanes.get(point.lane, 0) + point.events
    context = {
        "nav": "runs",
        "run": run,
        "page": page,
        "run_url": reverse("run", kwargs={"run": run}),
        "parent_url": _agent_url(run, page.parent.agent) if page.parent else None,
        "children": [(child, _agent_url(run, child.agent)) for child in page.children],
        "lanes": [
            (LANE_NAMES[lane][lanes[lane] == 1], lanes[lane])
            for lane, _, _, _ in LANES
            if lane in lanes
        ],
        "chart_url": reverse("run-agent-timeline-chart", kwargs={"run": run, "agent": agent}),
        "api_url": reverse("api:run_agent", kwargs={"run": run, "agent": agent}),
    }
    return render(request, "runs/agent.html", context)


@login_required
def run_agent_timeline_chart(request: HttpRequest, run: str, agent: str) -> HttpResponse:
    """The timeline figure: what /api/runs/{run}/agents/{agent} answers as `timeline`."""
    fig = build_timeline_figure(_page(request, run, agent))
    return HttpResponse(charts.to_json(fig), content_type="application/json")
