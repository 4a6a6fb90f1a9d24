"""Number and duration formatting for page templates: `{% load fleetscope_format %}`.

Formatting only; every filter returns plain text (autoescaped like any other value) and
shows an en dash for a missing value.
"""

from __future__ import annotations

from django import template

register = template.Library()

DASH = "\u2013"


@register.filter
def thousands(value: int | float | None) -> str:
    """12345 -> 12,345."""
    if value is None:
        return DASH
    return f"{value:,.0f}"


@register.filter
def compact(value: int | float | None) -> str:
    """1234 -> 1.2k, 3400000 -> 3.4M, 999 -> 999."""
    if value is None:
        return DASH
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.1f}{suffix}"
    return f"{value:.0f}"


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """0.0523 -> 5.2%."""
    if value is None:
        return DASH
    return f"{100 * value:.{int(digits)}f}%"


@register.filter
def minutes(value: float | None) -> str:
    """95.5 -> 1 h 35 min; 42.2 -> 42 min; 0.5 -> 30 s."""
    if value is None:
        return DASH
    if value < 1:
        return f"{round(value * 60)} s"
    whole = round(value)
    hours, rest = divmod(whole, 60)
    if hours >= 24:
        days, hours = divmod(hours, 24)
        return f"{days} d {hours} h"
    return f"{hours} h {rest} min" if hours else f"{rest} min"
