"""API authentication: a logged-in session or `Authorization: Bearer <token>`."""

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer, django_auth

from dashboard.models import ApiToken


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = ApiToken.authenticate(token)
        if api_token is None:
            return None
        request.user = api_token.user
        return api_token.user


API_AUTH = [BearerToken(), django_auth]
