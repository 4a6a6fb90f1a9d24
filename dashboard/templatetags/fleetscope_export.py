"""The link that downloads a page's table as CSV: the page's own URL with its current
filters, plus `format=csv&table=<name>`; the page's view answers it with
dashboard.export.csv_response (see wants_csv). One convention for every table."""

from __future__ import annotations

from django import template
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


def csv_url(request: HttpRequest, table: str) -> str:
    query = request.GET.copy()
    for name in ("format", "table", "cursor", "offset"):
        query.pop(name, None)
    query["format"] = "csv"
    query["table"] = table
    return f"{request.path}?{query.urlencode()}"


def wants_csv(request: HttpRequest) -> str | None:
    """The table a request asks for as CSV, or None for the page itself."""
    if request.GET.get("format") != "csv":
        return None
    return request.GET.get("table") or ""


@register.simple_tag(takes_context=True)
def csv_link(context: template.Context, table: str, label: str = "CSV") -> SafeString:
    request = context["request"]
    return format_html(
        '<a class="csv-link" href="{}" download title="Download this table as CSV">{}</a>',
        csv_url(request, table),
        label,
    )
