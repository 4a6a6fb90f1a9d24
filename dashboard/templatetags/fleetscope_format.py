"""Number, size and duration formatting for page templates: `{% load fleetscope_format %}`.

One spelling of each kind of value on every page: counts with thousands separators
(`count`, the reports' own; `thousands` is its first name), sizes in binary units
(`binary_size`: KiB, MiB, GiB), durations in the compact style the API accepts
(`duration`: 15m, 1h, 1d; `minutes` for a length in minutes). Formatting only; every
filter returns plain text (autoescaped like any other value) and shows an en dash for a
missing value.
"""

from __future__ import annotations

from django import template

from analytics.templatetags.humanize_usd import DASH, count
from lib.durations import format_duration

register = template.Library()
thousands = count
register.filter("count", count)
register.filter("thousands", thousands)

BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


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
def binary_size(value: int | float | None) -> str:
    """Bytes in powers of 1024: 512 -> 512 B, 131072 -> 128 KiB, 1.5 * 2**30 -> 1.5 GiB
    (one decimal, dropped when it is 0)."""
    if value is None:
        return DASH
    size = float(value)
    if abs(size) < 1024:
        return f"{size:.0f} B"
    for unit in BINARY_UNITS:
        size /= 1024
        if abs(size) < 1024 or unit == BINARY_UNITS[-1]:
            break
    text = f"{size:,.1f}".removesuffix(".0")
    return f"{text} {unit}"


@register.filter
def duration(seconds: int | float | None) -> str:
    """A whole number of seconds as the API spells a duration: 900 -> 15m, 3600 -> 1h,
    90 -> 90s."""
    if seconds is None:
        return DASH
    return format_duration(round(seconds))


@register.filter
def elapsed(seconds: float | None) -> str:
    """A length in seconds, to the second under an hour (1770 -> 29m 30s, 45 -> 45s,
    600 -> 10m), past it as `minutes` spells it (5430 -> 1h 30m)."""
    if seconds is None:
        return DASH
    whole = round(seconds)
    if whole >= 3600:
        return minutes(whole / 60)
    parts = [(whole // 60, "m"), (whole % 60, "s")]
    return " ".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


@register.filter
def minutes(value: float | None) -> str:
    """A length in minutes, compact: 0.5 -> 30s, 42.2 -> 42m, 95.5 -> 1h 36m, 60 -> 1h,
    1500 -> 1d 1h."""
    if value is None:
        return DASH
    if value < 1:
        return f"{round(value * 60)}s"
    hours, rest = divmod(round(value), 60)
    days, hours = divmod(hours, 24)
    parts = [(days, "d"), (hours, "h"), (rest, "m")] if days == 0 else [(days, "d"), (hours, "h")]
    return " ".join(f"{n}{unit}" for n, unit in parts if n) or "0m"
