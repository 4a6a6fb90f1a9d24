"""Report numbers: `usd` (to the cent, more places under one cent) and `count`, the one
formatter of counts on every page and report (the pages' `fleetscope_format` registers
this same function)."""

from __future__ import annotations

from django import template

register = template.Library()

DASH = "\u2013"  # an en dash: no value


@register.filter
def usd(value: float | None) -> str:
    if value is None:
        return DASH
    amount = float(value)
    sign = "-" if amount < 0 else ""
    if amount != 0 and abs(amount) < 0.01:
        return f"{sign}${abs(amount):.4f}"
    return f"{sign}${abs(amount):,.2f}"


@register.filter
def count(value: int | float | None) -> str:
    """A count with thousands separators, rounded to a whole number: 12345 -> 12,345,
    9876543.4 -> 9,876,543 (exact for integers of any size)."""
    return DASH if value is None else f"{round(value):,}"
