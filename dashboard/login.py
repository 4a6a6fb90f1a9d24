"""Logins a password-guessing loop cannot get through: the login page, the admin's login
and who may read the API docs.

Owns the lockout: every failed login is a LoginFailure row (account name, client
address), so the count holds across gunicorn workers and machines sharing the database.
FLEETSCOPE_LOGIN_MAX_FAILURES failures for one account name (whether or not it exists,
so the answer says nothing about which accounts do), or
FLEETSCOPE_LOGIN_MAX_ADDRESS_FAILURES from one address, within
FLEETSCOPE_LOGIN_LOCK_MINUTES refuse every login for it, the right password too, for
that many minutes from the last of them: one line saying when to retry, HTTP 429.
Refused attempts are not counted (the lock ends on time) and no password is checked
for them. A successful login clears its account's failures. Two workers checking at
the same instant may each let one more guess through; the lock holds after that.
It must not decide roles or visibility (dashboard/access.py does).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import wraps
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin import AdminSite
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView, redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from analytics.access.models import LoginFailure
from dashboard.auth import BearerToken
from lib.errors import ForbiddenError

TOO_MANY_REQUESTS = 429
FAILED_LOGIN = "Your username and password didn't match. Please try again."


@dataclass(frozen=True)
class Refusal:
    """A login refused before its password is checked, and when to try again."""

    retry_at: datetime

    def message(self, now: datetime) -> str:
        minutes = max(1, -(-int((self.retry_at - now).total_seconds()) // 60))
        return (
            f"Too many failed logins: try again after {self.retry_at:%Y-%m-%d %H:%M} UTC "
            f"(in {minutes} minute{'s' if minutes != 1 else ''})."
        )


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR; behind a proxy in FLEETSCOPE_TRUSTED_PROXIES, the nearest address in
    X-Forwarded-For that is not one of those proxies. Read from the right, because a
    proxy appends to whatever X-Forwarded-For the client sent: its first entry is
    whatever the client chose to write there."""
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    proxies = [ipaddress.ip_network(net) for net in settings.FLEETSCOPE_TRUSTED_PROXIES]
    if not _within(remote, proxies):
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if not _within(hop, proxies):
            return hop[:64]
    return remote


def _within(
    address: str, networks: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network]
) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in networks)


def account_key(username: str) -> str:
    """How failures are filed: case and spaces aside, as `Alice ` and `alice` are one
    account to a person typing."""
    return username.strip().casefold()[:150]


def refusal(username: str, address: str, now: datetime) -> Refusal | None:
    """Whether this account name or address is locked out at `now`, and until when."""
    lock = timedelta(minutes=settings.FLEETSCOPE_LOGIN_LOCK_MINUTES)
    since = now - 2 * lock  # a lock still running began within a lock's length of now
    recent = LoginFailure.objects.filter(at__gt=since, at__lte=now)
    ends = [
        _lock_end(
            list(recent.filter(username=account_key(username)).values_list("at", flat=True)),
            settings.FLEETSCOPE_LOGIN_MAX_FAILURES,
            lock,
        ),
        _lock_end(
            list(recent.filter(address=address).values_list("at", flat=True)),
            settings.FLEETSCOPE_LOGIN_MAX_ADDRESS_FAILURES,
            lock,
        ),
    ]
    latest = max((end for end in ends if end is not None), default=None)
    return Refusal(latest) if latest is not None and latest > now else None


def _lock_end(times: list[datetime], limit: int, lock: timedelta) -> datetime | None:
    """The end of the last lock among these failures: `lock` after the latest failure
    that had `limit` failures (itself included) within `lock` before it."""
    times.sort()
    end = None
    for index in range(limit - 1, len(times)):
        if times[index] - times[index - limit + 1] < lock:
            end = times[index] + lock
    return end


def record_failure(username: str, address: str, now: datetime) -> None:
    """File one failed login and prune failures too old to lock anything."""
    lock = timedelta(minutes=settings.FLEETSCOPE_LOGIN_LOCK_MINUTES)
    LoginFailure.objects.filter(at__lt=now - 2 * lock).delete()
    LoginFailure.objects.create(at=now, username=account_key(username), address=address[:64])


class LockoutMixin:
    """For an AuthenticationForm: refuse a locked account name or address before the
    password is checked, file each failure, clear an account's failures on success."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]
    refused: Refusal | None = None

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request) if self.request else "unknown"
        now = timezone.now()
        self.refused = refusal(username, address, now)
        if self.refused is not None:
            raise forms.ValidationError(self.refused.message(now), code="locked")
        try:
            cleaned: dict[str, Any] = super().clean()  # type: ignore[misc]
        except forms.ValidationError:
            record_failure(username, address, now)
            raise
        if self.get_user() is not None:  # type: ignore[attr-defined]
            LoginFailure.objects.filter(username=account_key(username)).delete()
        return cleaned


class LoginForm(LockoutMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages, "invalid_login": FAILED_LOGIN}


class AdminLoginForm(LockoutMixin, AdminAuthenticationForm):
    """The admin's login form (staff only, as Django's), with the same lockout."""


def with_refusal_status(response: HttpResponse) -> HttpResponse:
    """429 for a login page answering a refused login."""
    form = (getattr(response, "context_data", None) or {}).get("form")
    if getattr(form, "refused", None) is not None:
        response.status_code = TOO_MANY_REQUESTS
    return response


class FleetscopeLoginView(LoginView):
    form_class = LoginForm
    authentication_form = LoginForm

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        return with_refusal_status(super().form_invalid(form))


def protect_admin_login(site: AdminSite) -> None:
    """The admin's login refuses and files failures as the login page does."""
    site.login_form = AdminLoginForm
    plain = site.login

    def login(request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return with_refusal_status(plain(request, extra_context))

    site.login = login  # type: ignore[method-assign]


def docs_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """/api/docs and /api/openapi.json for a logged-in user or a read or admin token;
    without either, the docs page sends the browser to the login page and the schema is
    a 401 in JSON, as the rest of the API answers."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            try:
                user = BearerToken()(request)
            except ForbiddenError as exc:
                return JsonResponse({"detail": str(exc)}, status=403)
            if not user:
                if request.path.endswith(".json"):
                    return JsonResponse({"detail": "Unauthorized"}, status=401)
                return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return guarded
