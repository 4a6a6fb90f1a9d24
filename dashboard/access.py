"""Attaches who-may-see-what to every request and enforces what the role and token allow.

AccessMiddleware sets `request.access` (its `seen`, a lib.access.Seen, and `role`, each
resolved on first use for the user then on the request, so after the API's token
authentication has set it) and the API's authentication sets `request.scope` (a session
may do all its role allows: Scope.ADMIN). Pages: a non-GET request needs the
editor role unless it only touches the user's own session or preferences (VIEWER_POSTS).
API: `check_api_access` (called by both authentication classes) holds a token to its
scope and a viewer to reading; admin-only endpoints also call lib.access.require_role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

from analytics.access.audit import acting_for
from analytics.access.visibility import role_for_user, seen_for_user, team_seen_for_user
from lib.access import Role, Scope, Seen
from lib.errors import ForbiddenError

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Where data comes in: what an ingest token may call (OTLP's standard paths included).
INGEST_PREFIXES = ("/api/ingest/", "/v1/")
# POSTs that compute an answer and change nothing: a read token and a viewer may call them.
READ_POSTS = frozenset({"/api/tokens/count"})
# Page POSTs a viewer may make: they change only the user's own session, preferences or
# API tokens (a viewer's tokens can only read: the Settings page offers them no other scope).
VIEWER_POSTS = frozenset(
    {"/accounts/login/", "/accounts/logout/", "/preferences/time-zone/", "/settings/tokens/"}
)


def scope_allows(scope: Scope, method: str, path: str) -> bool:
    ingest = path.startswith(INGEST_PREFIXES)
    if scope is Scope.ADMIN:
        return True
    if scope is Scope.INGEST:
        return ingest
    return not ingest and (method in SAFE_METHODS or path.rstrip("/") in READ_POSTS)


def role_allows(role: Role | None, method: str, path: str) -> bool:
    """Reading needs any role; ingesting and changing need editor (admin-only endpoints
    check for admin themselves)."""
    if role is None:
        return False
    if method in SAFE_METHODS or path.rstrip("/") in READ_POSTS:
        return True
    return role.allows(Role.EDITOR)


def check_api_access(request: HttpRequest, scope: Scope) -> None:
    """Raise ForbiddenError (403, JSON) when the token's scope or the user's role does not
    allow this request."""
    request.scope = scope  # type: ignore[attr-defined]
    method, path = request.method or "GET", request.path
    if not scope_allows(scope, method, path):
        what = "send data" if scope is Scope.INGEST else "read"
        article = "an" if scope is Scope.INGEST else "a"
        raise ForbiddenError(f"{article} {scope} token may only {what}; this needs another scope")
    if not role_allows(role_for_user(request.user), method, path):
        raise ForbiddenError("your role is viewer: it may read, not change or send data")


class RequestAccess:
    """The request user's Seen and Role, each worked out once per user on first use (a
    role check does not resolve what the user sees, which reads the warehouse)."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._known: dict[str, tuple[object, Any]] = {}

    def _once(self, name: str, work: Callable[[Any], Any]) -> Any:
        user = getattr(self._request, "user", None)
        key = (getattr(user, "pk", None), getattr(user, "is_authenticated", False))
        found = self._known.get(name)
        if found is None or found[0] != key:
            found = (key, work(user))
            self._known[name] = found
        return found[1]

    @property
    def seen(self) -> Seen:
        seen: Seen = self._once("seen", seen_for_user)
        return seen

    @property
    def role(self) -> Role | None:
        role: Role | None = self._once("role", role_for_user)
        return role

    def team(self, name: str) -> Seen | None:
        """The team `name` as a filter (analytics.access.visibility.team_seen_for_user)."""
        team: Seen | None = self._once(f"team:{name}", lambda user: team_seen_for_user(user, name))
        return team


class AccessMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.access = RequestAccess(request)  # type: ignore[attr-defined]
        path = request.path
        if (
            not path.startswith("/api/")
            and not path.startswith(INGEST_PREFIXES)
            and not path.startswith("/admin/")
            and request.method not in SAFE_METHODS
            and path not in VIEWER_POSTS
            and request.user.is_authenticated
            and not role_allows(role_for_user(request.user), request.method or "POST", path)
        ):
            return HttpResponseForbidden("Your role is viewer: it may read, not change.")
        # The audit log names this request's user for every change made while it runs.
        with acting_for(request):
            return self.get_response(request)
