"""The display time zone each user chooses (UTC or the browser's): the POST that stores
it on the user (dashboard.models.Preference) and the context every page reads it from.

Stores and exposes the choice only: the pages print UTC inside <time> elements
(templatetags/fleetscope_time.py) and fleetscope.js converts them in the browser.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from dashboard.models import DisplayZone, Preference


def display_zone(request: HttpRequest) -> str:
    """The signed-in user's choice, UTC for anyone else or anyone who never chose."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return DisplayZone.UTC
    cached: str | None = getattr(request, "_display_zone", None)
    if cached is None:
        found = Preference.objects.filter(user=user).values_list("time_zone", flat=True).first()
        cached = found or DisplayZone.UTC
        request._display_zone = cached  # type: ignore[attr-defined]
    return cached


def display_preferences(request: HttpRequest) -> dict[str, Any]:
    """Template context: `display_zone` ("utc" or "browser") for base.html's toggle."""
    return {"display_zone": display_zone(request)}


@login_required
@require_POST
def set_time_zone(request: HttpRequest) -> HttpResponse:
    """Store the choice and go back to the page it was made on (`next`, same host only)."""
    choice = request.POST.get("time_zone", "")
    if choice not in DisplayZone.values:
        allowed = " or ".join(DisplayZone.values)
        return HttpResponseBadRequest(
            f"time_zone must be {allowed}, got {choice[:40]!r}\n", content_type="text/plain"
        )
    Preference.objects.update_or_create(user=request.user, defaults={"time_zone": choice})
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    return HttpResponseRedirect(target)
