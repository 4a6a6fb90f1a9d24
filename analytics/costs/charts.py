"""Cost figures for the Costs page: daily API spend stacked by model or by run, and
daily tokens stacked by kind (input, output, cache read, cache write).

Turns analytics.costs.series' SpendSeries into Plotly figures; never queries.
"""

from __future__ import annotations

from datetime import date

import plotly.graph_objects as go

from analytics.charts import base_layout, show_empty

TOP_SERIES = 8  # more stacked series than this are folded into "other"
NO_SPEND = (
    "No priced API spend in these days: pick a day with llm_call events, or load prices"
    " for their models (manage.py load_prices FILE)."
)
NO_TOKENS = (
    "No llm_call events in these days: pick another day, or ingest agent events"
    " (manage.py ingest agent-events PATH)."
)
# What each token kind is called on the chart, in stacking order (bottom first).
TOKEN_LABELS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cached_input_tokens": "cache read",
    "cache_write_tokens": "cache write",
}


def spend_figure(days: list[date], series: dict[str, list[float]], what: str) -> go.Figure:
    """Stacked daily bars, largest series first; the rest folded into `other`. Series
    with no priced spend (unpriced models) are left out: the page warns about them."""
    ranked = sorted(
        ((name, values) for name, values in series.items() if any(values)),
        key=lambda item: (-sum(item[1]), item[0]),
    )
    shown = ranked[:TOP_SERIES]
    rest = ranked[TOP_SERIES:]
    if rest:
        other = [sum(values[n] for _, values in rest) for n in range(len(days))]
        shown.append((f"other {what}s ({len(rest)})", other))
    fig = go.Figure()
    x = [d.isoformat() for d in days]
    for name, values in shown:
        fig.add_trace(
            go.Bar(
                x=x,
                y=values,
                name=name,
                hovertemplate="%{x}: $%{y:.2f}<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        **base_layout(
            barmode="stack",
            hovermode="closest",
            xaxis={"type": "date", "gridcolor": "#eef0f3"},
            yaxis={"gridcolor": "#eef0f3", "rangemode": "tozero", "title": {"text": "USD"}},
        )
    )
    if not shown:
        show_empty(fig, NO_SPEND)
    return fig


def tokens_figure(days: list[date], tokens: dict[str, list[int]]) -> go.Figure:
    """Stacked daily bars of tokens by kind (TOKEN_LABELS' order), every kind drawn so
    the legend is the same whatever the days hold; no bars at all when no day has any."""
    fig = go.Figure()
    x = [d.isoformat() for d in days]
    empty = not any(any(values) for values in tokens.values())
    for kind, label in ({} if empty else TOKEN_LABELS).items():
        fig.add_trace(
            go.Bar(
                x=x,
                y=tokens.get(kind, [0] * len(days)),
                name=label,
                hovertemplate="%{x}: %{y:,} tokens<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        **base_layout(
            barmode="stack",
            hovermode="closest",
            xaxis={"type": "date", "gridcolor": "#eef0f3"},
            yaxis={"gridcolor": "#eef0f3", "rangemode": "tozero", "title": {"text": "tokens"}},
        )
    )
    if empty:
        show_empty(fig, NO_TOKENS)
    return fig
