"""Times on pages: `{% load fleetscope_time %}`, then `{{ value|timetag }}` prints a UTC
time inside `<time datetime="...">` and `{% zone_label %}` the name of the zone shown.

Server-side the text is always UTC; when the user chose the browser's zone, fleetscope.js
rewrites each <time> and each zone label in the browser's zone (CONTRIBUTING.md, "Times on
a page"). A missing value prints an en dash, like fleetscope_format's filters.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

DASH = "\u2013"
# Precision name -> the UTC text; fleetscope.js formats the browser's zone the same way.
PRECISIONS = {
    "minute": "%Y-%m-%d %H:%M",
    "second": "%Y-%m-%d %H:%M:%S",
    "date": "%Y-%m-%d",
    "clock": "%H:%M:%S",
}


@register.filter
def timetag(value: datetime | None, precision: str = "minute") -> str | SafeString:
    """2026-01-14 10:10 UTC -> <time datetime="2026-01-14T10:10:00Z" data-precision="minute">
    2026-01-14 10:10</time>. Naive datetimes are taken as UTC, as the warehouse stores them."""
    if value is None:
        return DASH
    if precision not in PRECISIONS:
        raise template.TemplateSyntaxError(
            f"timetag precision must be one of {', '.join(PRECISIONS)}, got {precision!r}"
        )
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    stamp = utc.isoformat(timespec="milliseconds" if utc.microsecond else "seconds")
    return format_html(
        '<time datetime="{}" data-precision="{}">{}</time>',
        stamp.replace("+00:00", "Z"),
        precision,
        utc.strftime(PRECISIONS[precision]),
    )


@register.simple_tag
def zone_label() -> SafeString:
    """The zone the page's times are in: "UTC", renamed by fleetscope.js to the browser's."""
    return format_html('<span class="tz" data-zone-label>{}</span>', "UTC")
