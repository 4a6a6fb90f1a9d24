"""API authentication: a logged-in session or `Authorization: Bearer <token>`."""

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from dashboard.models import ApiToken


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = ApiToken.authenticate(token)
        if api_token is None:
            return None
        request.user = api_token.user
        return api_token.user


class Session(SessionAuth):
    """A logged-in session, its POSTs CSRF-checked (403 without the token). A request
    with no session is not checked: it has no credentials, so it is a 401, not a 403."""

    def _get_key(self, request: HttpRequest) -> str | None:
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)


API_AUTH = [BearerToken(), Session()]
