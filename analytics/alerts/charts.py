"""The rule editor's preview timeline: what a rule would have fired on, one row per
subject, a bar from when it fired to when it resolved (or the end of the range), its
pending stretch before that lighter. Incidents in (a Preview's, analytics.alerts.preview),
a Plotly figure out; never queries, never evaluates.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import plotly.graph_objects as go

from analytics import charts
from analytics.alerts.preview import Incident
from lib.durations import format_time

ROW_PX = 34  # height of one subject's row; the figure grows with the subjects
MIN_ROWS = 3  # so one subject's bar still sits on a readable chart
NEVER_FIRED = (
    "This rule would not have fired in this range: try a longer range or another threshold."
)


def _bar(
    name: str, color: str, spans: Sequence[tuple[str, datetime, datetime, str]], show: bool
) -> go.Bar:
    """Horizontal bars on a date axis, as plotly.express.timeline draws them: `base` is the
    start, `x` the length in milliseconds."""
    return go.Bar(
        name=name,
        orientation="h",
        y=[subject for subject, _, _, _ in spans],
        base=[format_time(start) for _, start, _, _ in spans],
        x=[(end - start).total_seconds() * 1000 for _, start, end, _ in spans],
        customdata=[
            [format_time(start), format_time(end), summary] for _, start, end, summary in spans
        ],
        hovertemplate=f"{name} %{{customdata[0]}} to %{{customdata[1]}}<br>%{{customdata[2]}}"
        "<extra>%{y}</extra>",
        marker={"color": color},
        showlegend=show,
    )


def preview_timeline_figure(
    incidents: Sequence[Incident], start: datetime, end: datetime
) -> go.Figure:
    """`incidents` of a Preview over [start, end]; one still firing at `end` runs to `end`."""
    pending: list[tuple[str, datetime, datetime, str]] = []
    firing: list[tuple[str, datetime, datetime, str]] = []
    for incident in incidents:
        fired = incident.fired_at
        if fired is None:
            continue
        subject, summary = incident.subject, incident.summary
        began = incident.pending_at
        if began is not None and began < fired:
            pending.append((subject, began, fired, summary))
        firing.append((subject, fired, incident.resolved_at or end, summary))
    subjects = sorted({subject for subject, _, _, _ in firing}, reverse=True)
    fig = go.Figure()
    fig.add_trace(_bar("pending", "#fbbf77", pending, bool(pending)))
    fig.add_trace(_bar("firing", charts.COLORS["bad"], firing, True))
    fig.update_layout(
        **charts.base_layout(
            height=90 + ROW_PX * max(len(subjects), MIN_ROWS),
            hovermode="closest",
            barmode="overlay",
            margin={"l": 140, "r": 20, "t": 30, "b": 40},
            xaxis={
                "type": "date",
                "range": [format_time(start), format_time(end)],
                "gridcolor": "#eef0f3",
                "title": {"text": "UTC"},
            },
            yaxis={
                "type": "category",
                "categoryorder": "array",
                "categoryarray": subjects,
                "automargin": True,
            },
            legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        )
    )
    if not firing:  # the time axis is the range previewed, so it stays
        charts.show_empty(fig, NEVER_FIRED, hide_x=False)
    return fig
