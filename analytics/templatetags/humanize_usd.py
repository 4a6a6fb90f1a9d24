"""Report numbers: `usd` (to the cent, more places under one cent) and `count`."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def usd(value: float | None) -> str:
    if value is None:
        return "\u2013"  # an en dash: no amount
    amount = float(value)
    sign = "-" if amount < 0 else ""
    if amount != 0 and abs(amount) < 0.01:
        return f"{sign}${abs(amount):.4f}"
    return f"{sign}${abs(amount):,.2f}"


@register.filter
def count(value: int | None) -> str:
    """A token or call count with thousands separators."""
    return "\u2013" if value is None else f"{int(value):,}"
