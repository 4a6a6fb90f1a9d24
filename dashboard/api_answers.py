"""Every answer under /api/ is valid JSON, and every error a JSON `{"detail": ...}` of one
line with the right status (docs/api.md, "Errors").

Owns the API's renderer (a non-finite float, which json.dumps would write as a bare `NaN`,
becomes null), the one-line details of ninja's own errors (422 validation, 413 body too
large, 500 anything unexpected: logged here with its traceback, never shown), and the
middleware that turns Django's answers under /api/ that are not the API's own (404 for an
unknown path, 405, 400) into JSON. It must not know any endpoint: domain errors
(NotFoundError, ParameterError) are mapped in dashboard/api.py.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from ninja.errors import ValidationError
from ninja.renderers import JSONRenderer
from ninja.responses import NinjaJSONEncoder

from lib.errors import BodyTooLarge

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
DETAIL_LENGTH = 300  # a detail quoting user input stays one short line


class FiniteJSONRenderer(JSONRenderer):
    """JSON with null where a float is NaN or infinite: strict parsers refuse `NaN`."""

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> Any:
        try:
            return json.dumps(data, cls=NinjaJSONEncoder, allow_nan=False)
        except ValueError:
            # Rare (a figure from a bad scrape): encode once as Python would, then again
            # with the non-finite floats replaced.
            loose = json.loads(json.dumps(data, cls=NinjaJSONEncoder))
            return json.dumps(finite(loose), allow_nan=False)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite float (in lists and dicts too) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def one_line(text: str) -> str:
    """A detail on one line, cut to DETAIL_LENGTH characters."""
    line = " ".join(text.split())
    return line if len(line) <= DETAIL_LENGTH else line[: DETAIL_LENGTH - 3] + "..."


def too_large_detail() -> str:
    return str(BodyTooLarge())


def validation_detail(exc: ValidationError) -> str:
    """ninja's list of pydantic errors as one line naming each parameter:
    `limit: Input should be a valid integer`."""
    parts = []
    for error in exc.errors:
        location = [str(p) for p in error.get("loc", ()) if p not in ("query", "path", "body")]
        name = ".".join(location) or "body"
        parts.append(f"{name}: {error.get('msg', 'invalid')}")
    return one_line("; ".join(parts) or "invalid parameters")


def unexpected_detail(request: HttpRequest, exc: Exception) -> tuple[int, str]:
    """(status, detail) for an exception no handler claims: 413 for a body past Django's
    cap, else a 500 whose traceback goes to the log, not to the client."""
    if isinstance(exc, RequestDataTooBig):
        return 413, too_large_detail()
    logger.error("%s %s failed", request.method, request.path, exc_info=exc)
    return 500, "internal error; the server log has the details"


class ApiErrorMiddleware:
    """Under /api/: an answer that is an error but not JSON (Django's 404 page for an
    unknown path, ninja's text 405, a 400) becomes `{"detail": <its reason>}` with the same
    status and headers (Allow); an exception that escaped the API is logged and answered
    with a JSON 500. Listed first in MIDDLEWARE, so it sees every other answer."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        detail = (
            too_large_detail()
            if response.status_code == 413
            else response.reason_phrase or f"HTTP {response.status_code}"
        )
        if response.status_code == 404:
            detail = f"no such API path: {request.path}"
        answer = JsonResponse({"detail": one_line(detail)}, status=response.status_code)
        if response.has_header("Allow"):
            answer["Allow"] = response["Allow"]
        return answer

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        status, detail = unexpected_detail(request, exc)
        return JsonResponse({"detail": detail}, status=status)
