"""Turns query rows into Plotly figures (server-side), serialised as JSON for the pages.

Owns look and feel: one layout for every chart, UTC time axes, how an axis of whole
numbers ticks, what a chart with nothing to draw shows, and data links (a click on a
point or an annotation opens a page: `link_points`, `link_annotation`, read by
fleetscope.js). Never queries the warehouse, never builds a URL (its callers hand it
the hrefs).
"""

import html
import math
import textwrap
from collections.abc import Iterable, Sequence
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
# An integer axis gets at most about this many ticks.
INTEGER_TICKS = 5
# Plotly never wraps an annotation: an empty state is cut into lines this long, which
# fit a chart on a 375 px screen.
EMPTY_LINE_CHARS = 40


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


def plain(text: str) -> str:
    """Data (a model's or an instance's name) as Plotly text: Plotly reads names, hover
    text and annotations as pseudo-HTML (`<b>`, `<a href>`), so its markup is escaped;
    Plotly turns the entities back into the characters."""
    return html.escape(text, quote=False)


def has_values(values: Iterable[float | int | None]) -> bool:
    """Whether a series has anything to draw: one value that is not missing."""
    return any(value is not None for value in values)


def integer_axis(values: Iterable[float | int | None]) -> dict[str, Any]:
    """Axis settings for counts (commits, attempts, preemptions, tokens): ticks on whole
    numbers with thousands separators, a step of 1, 2 or 5 times a power of ten, so a
    bucket with 0.2 attempts on average never reads as "0.211 attempts"."""
    top = max((float(v) for v in values if v is not None), default=0.0)
    raw = max(top, 1.0) / INTEGER_TICKS
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return {
        "tickformat": ",d",
        "tick0": 0,
        "dtick": max(1, int(step)),
        "rangemode": "tozero",
    }


def show_empty(
    fig: go.Figure,
    text: str,
    *,
    x: str = "x",
    y: str = "y",
    extra: str = "",
    hide_x: bool = True,
) -> None:
    """Draw `text` (a sentence saying what to do) where an empty chart would be, and no
    axes: an axis without data invents a range (Plotly's default is January 2000).
    `x`/`y` name one subplot's axes ("x3", "y3"); `extra` a second y axis to hide too;
    `hide_x=False` keeps a time axis shared with rows that have data."""
    for axis in (x if hide_x else "", y, extra):
        if axis:
            fig.update_layout({_layout_key(axis): {"visible": False}})
    # Placed on the paper, in the middle of the subplot's domain: Plotly.js draws no
    # subplot (and so no "x3 domain" reference) for axes without a trace.
    x_domain, y_domain = _domain(fig, x), _domain(fig, y)
    fig.add_annotation(
        text="<br>".join(textwrap.wrap(text, EMPTY_LINE_CHARS)),
        showarrow=False,
        xref="paper",
        yref="paper",
        x=(x_domain[0] + x_domain[1]) / 2,
        y=(y_domain[0] + y_domain[1]) / 2,
        font={"color": "#4b5563", "size": 13},
    )


def _domain(fig: go.Figure, axis: str) -> tuple[float, float]:
    key = _layout_key(axis)
    domain = fig.layout[key].domain if key in fig.layout else None
    return (domain[0], domain[1]) if domain else (0.0, 1.0)


def _layout_key(axis: str) -> str:
    """`x` -> `xaxis`, `y3` -> `yaxis3`."""
    return f"{axis[0]}axis{axis[1:]}"


def to_json(fig: go.Figure) -> str:
    """The figure as the JSON that fleetscope.js passes to Plotly.react()."""
    return str(pio.to_json(fig, validate=False, engine="json"))


# --- data links ------------------------------------------------------------------------
# A figure's links sit in layout.meta["links"]: "points" maps a trace's index to one href
# (or null) per point, "annotations" an annotation's index to its href. fleetscope.js opens
# them on plotly_click / plotly_clickannotation and shows a pointer over them.
LINKS = "links"


def _add_link(fig: go.Figure, kind: str, index: int, value: Any) -> None:
    meta = dict(fig.layout.meta or {})
    links = meta.get(LINKS) or {"points": {}, "annotations": {}}
    fig.layout.meta = {**meta, LINKS: {**links, kind: {**links[kind], str(index): value}}}


def link_points(fig: go.Figure, trace: int, hrefs: Sequence[str | None]) -> None:
    """A click on point i of the figure's trace number `trace` opens hrefs[i] (None: no
    link there)."""
    if len(hrefs) != len(fig.data[trace].x or ()):
        raise ValueError("link_points needs one href per point of the trace")
    _add_link(fig, "points", trace, list(hrefs))


def link_annotation(fig: go.Figure, href: str, **annotation: Any) -> None:
    """Add an annotation (Plotly's attributes) that opens `href` when clicked."""
    fig.add_annotation(captureevents=True, **annotation)
    _add_link(fig, "annotations", len(fig.layout.annotations) - 1, href)
