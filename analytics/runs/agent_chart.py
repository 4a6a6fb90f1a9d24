"""The agent page's timeline figure: one time axis, one lane (a trace) per kind of event,
each event a mark, or each bucket's count a mark sized by it when the agent logged too
many events for one mark each (analytics.runs.agent decides). Rows in, figure out; never
queries.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from analytics import charts
from analytics.runs.agent import ERROR_LANE, OTHER_LANE, AgentPage, TimelinePoint
from lib.durations import format_duration

# Lanes top to bottom, with their legend names (many, and one) and colours.
LANES = (
    ("spawn", "spawns", "spawn", charts.COLORS["secondary"]),
    ("task", "tasks", "task", charts.COLORS["muted"]),
    ("llm_call", "LLM calls", "LLM call", charts.COLORS["primary"]),
    ("tool_call", "tool calls", "tool call", "#0e7490"),
    ("commit", "commits", "commit", charts.COLORS["good"]),
    ("push", "pushes", "push", "#65a30d"),
    ("handoff", "handoffs", "handoff", charts.COLORS["warn"]),
    (ERROR_LANE, "errors", "error", charts.COLORS["bad"]),
    ("summary", "summaries", "summary", charts.COLORS["muted"]),
    ("stop", "stops", "stop", charts.COLORS["muted"]),
    (OTHER_LANE, "other", "other", charts.COLORS["muted"]),
)
NO_EVENTS = "This agent logged no events: it is only named as a parent by its children."
MARK_PX = 9
MAX_MARK_PX = 26  # the busiest bucket's mark


def _sizes(points: list[TimelinePoint], busiest: int) -> list[float]:
    """Marks whose area grows with the bucket's count."""
    return [MARK_PX + (MAX_MARK_PX - MARK_PX) * math.sqrt(p.events / busiest) for p in points]


def build_timeline_figure(page: AgentPage) -> go.Figure:
    fig = go.Figure()
    by_lane: dict[str, list[TimelinePoint]] = {}
    for point in page.timeline:
        by_lane.setdefault(point.lane, []).append(point)
    busiest = max((p.events for p in page.timeline), default=1)
    width = page.bucket_seconds
    names = []
    for lane, name, one, color in LANES:
        points = by_lane.get(lane)
        if not points:
            continue
        names.append(name)
        if width:
            text = [
                f"{p.events:,} {name if p.events != 1 else one} from this {format_duration(width)}"
                for p in points
            ]
            size: float | list[float] = _sizes(points, busiest)
        else:
            text = [f"{name}: {p.label}" if p.label else name for p in points]
            size = MARK_PX
        fig.add_trace(
            go.Scatter(
                name=name,
                x=[p.t for p in points],
                y=[name] * len(points),
                mode="markers",
                marker={"color": color, "size": size, "line": {"width": 0}, "opacity": 0.85},
                text=text,
                hovertemplate="%{text}<extra>%{x}</extra>",
            )
        )
    layout = charts.base_layout(
        height=max(220, 70 + 34 * len(names)),
        hovermode="closest",
        showlegend=False,
        margin={"l": 90, "r": 20, "t": 10, "b": 50},
    )
    layout["yaxis"] = {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": list(reversed(names)),
        "gridcolor": "#eef0f3",
        "automargin": True,
    }
    fig.update_layout(layout)
    if not page.timeline:
        charts.show_empty(fig, NO_EVENTS)
    return fig
