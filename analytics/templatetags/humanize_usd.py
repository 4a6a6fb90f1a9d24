"""`usd`: a dollar amount for reports, to the cent, with more places under one cent."""

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
