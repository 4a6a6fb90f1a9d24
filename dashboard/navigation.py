"""The top navigation: one entry per page family, shown when its URL is installed."""

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

# (key, label, url name). Pages set `nav` in their context to the key they belong to.
NAV_ITEMS = (
    ("overview", "Overview", "overview"),
    ("serving", "Serving", "serving"),
    ("tokens", "Token tax", "tokens"),  # the per-language tax, not usage (Costs has that)
    ("costs", "Costs", "costs"),
    ("people", "People", "people"),
    ("alerts", "Alerts", "alerts"),
    ("settings", "Settings", "settings"),  # every signed-in user: their own API tokens
)


def navigation(request: HttpRequest) -> dict[str, Any]:
    items = []
    signed_in = getattr(getattr(request, "user", None), "is_authenticated", False)
    for key, label, url_name in NAV_ITEMS:
        if key == "settings" and not signed_in:
            continue
        try:
            items.append({"key": key, "label": label, "url": reverse(url_name)})
        except NoReverseMatch:
            continue
    return {"nav_extra": items}
