"""Turns query rows into Plotly figures (server-side), serialised as JSON for the pages.

Owns look and feel: one layout for every chart, UTC time axes. Never queries the warehouse.
"""

from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

COLORS = {
    "primary": "#2f6fdb",
    "secondary": "#7c3aed",
    "good": "#1f9d55",
    "warn": "#d97706",
    "bad": "#dc2626",
    "muted": "#9ca3af",
}


def base_layout(**overrides: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "margin": {"l": 56, "r": 20, "t": 10, "b": 40},
        "height": 300,
        "hovermode": "x unified",
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"family": "-apple-system, Segoe UI, Roboto, Helvetica, Arial", "size": 12},
        "xaxis": {"type": "date", "gridcolor": "#eef0f3", "title": {"text": "UTC"}},
        "yaxis": {"gridcolor": "#eef0f3", "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.22},
        "showlegend": True,
    }
    layout.update(overrides)
    return layout


def to_json(fig: go.Figure) -> str:
    """The figure as the JSON that fleetscope.js passes to Plotly.react()."""
    return str(pio.to_json(fig, validate=False, engine="json"))
