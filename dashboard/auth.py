"""API authentication: a logged-in session or `Authorization: Bearer <token>`. Either way
dashboard.access.check_api_access then holds the request to the token's scope and the
user's role (403 in JSON when they do not allow it)."""

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from dashboard.access import check_api_access
from dashboard.models import ApiToken
from lib.access import Scope


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = ApiToken.authenticate(token)
        if api_token is None:
            return None
        request.user = api_token.user
        request.api_token = api_token  # type: ignore[attr-defined]
        check_api_access(request, Scope(api_token.scope))
        return api_token.user


class Session(SessionAuth):
    """A logged-in session, its POSTs CSRF-checked (403 without the token). A request
    with no session is not checked: it has no credentials, so it is a 401, not a 403."""

    def _get_key(self, request: HttpRequest) -> str | None:
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = super().authenticate(request, key)
        if user:
            check_api_access(request, Scope.ADMIN)
        return user


API_AUTH = [BearerToken(), Session()]
