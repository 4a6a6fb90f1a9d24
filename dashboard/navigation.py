"""The top navigation: one entry per page family, shown when its URL is installed."""

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

# (key, label, url name). Pages set `nav` in their context to the key they belong to.
NAV_ITEMS = (
    ("overview", "Overview", "overview"),
    ("serving", "Serving", "serving"),
    ("tokens", "Tokens", "tokens"),
    ("costs", "Costs", "costs"),
    ("alerts", "Alerts", "alerts"),
)


def navigation(request: HttpRequest) -> dict[str, Any]:
    items = []
    for key, label, url_name in NAV_ITEMS:
        try:
            items.append({"key": key, "label": label, "url": reverse(url_name)})
        except NoReverseMatch:
            continue
    return {"nav_extra": items}
