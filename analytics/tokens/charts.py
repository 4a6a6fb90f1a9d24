"""Plotly figures of the Tokens page: the tax per language under each encoding, and
traffic tokens per language under each encoding. Rows in, figures out; never queries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from analytics import charts
from analytics.tokens.language_names import language_name
from analytics.tokens.report import TrafficLanguage
from analytics.tokens.tax import LanguageTax

# One color per encoding, oldest (most expensive outside English) to newest.
ENCODING_COLORS = {
    "gpt2": charts.COLORS["muted"],
    "r50k_base": charts.COLORS["muted"],
    "cl100k_base": charts.COLORS["secondary"],
    "o200k_base": charts.COLORS["primary"],
    "o200k_harmony": charts.COLORS["good"],
}
NO_TRAFFIC = "No requests counted yet: ingest request records with manage.py ingest requests PATH."
NO_PARALLEL = (
    "No parallel texts yet: ingest some with manage.py ingest parallel PATH, or pick the"
    " set shipped with Fleetscope."
)


def _category_layout(y_title: str, **overrides: Any) -> dict[str, Any]:
    return charts.base_layout(
        xaxis={"type": "category", "gridcolor": "#eef0f3", "tickangle": -45},
        yaxis={"gridcolor": "#eef0f3", "rangemode": "tozero", "title": {"text": y_title}},
        barmode="group",
        hovermode="x unified",
        height=360,
        margin={"l": 56, "r": 20, "t": 10, "b": 90},
        **overrides,
    )


def build_tax_figure(
    tables: Mapping[str, Sequence[LanguageTax]], order: Sequence[str]
) -> go.Figure:
    """Grouped bars: tax per language (in `order`, highest first), one trace per encoding;
    a dashed line at 1.0, English."""
    labels = [language_name(code) for code in order]
    fig = go.Figure()
    for encoding, rows in tables.items():
        by_language = {row.language: row.tax for row in rows}
        fig.add_trace(
            go.Bar(
                name=encoding,
                x=labels,
                y=[by_language.get(code) for code in order],
                marker_color=ENCODING_COLORS.get(encoding, charts.COLORS["warn"]),
                hovertemplate="%{y:.2f}\u00d7 English<extra>" + encoding + "</extra>",
            )
        )
    fig.update_layout(_category_layout("tokens vs English (\u00d7)"))
    if not order:
        charts.show_empty(fig, NO_PARALLEL)
        return fig
    fig.add_hline(y=1.0, line_dash="dash", line_color=charts.COLORS["bad"], line_width=1)
    return fig


def build_traffic_figure(
    languages: Sequence[TrafficLanguage], encodings: Sequence[str]
) -> go.Figure:
    """Grouped bars: traffic tokens per language, one trace per encoding."""
    labels = [language_name(row.language) for row in languages]
    fig = go.Figure()
    for encoding in encodings:
        fig.add_trace(
            go.Bar(
                name=encoding,
                x=labels,
                y=[_tokens(row, encoding) for row in languages],
                marker_color=ENCODING_COLORS.get(encoding, charts.COLORS["warn"]),
                hovertemplate="%{y:,} tokens<extra>" + encoding + "</extra>",
            )
        )
    layout = _category_layout("tokens")
    layout["yaxis"].update(
        charts.integer_axis(_tokens(row, name) for row in languages for name in encodings)
    )
    fig.update_layout(layout)
    if not languages:
        charts.show_empty(fig, NO_TRAFFIC)
    return fig


def _tokens(row: TrafficLanguage, encoding: str) -> int | None:
    counted = row.encodings.get(encoding)
    return counted.tokens if counted else None
