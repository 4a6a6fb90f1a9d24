"""Times every request for `GET /metrics`: one observe of
`fleetscope_http_request_duration_seconds{route, method, status}` per answer.

Owns the labels: `route` is the URL pattern Django resolved (`runs/<path:run>/`, never
the path itself, whose values are unbounded and carry run names), or `unmatched`;
`method` one of the HTTP methods, others `other`; `status` the class (`2xx`...). Must not
do anything else per request: no query, no lookup, no log.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from lib.process_metrics import HTTP_REQUEST_DURATION

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # a path no pattern matched (a 404 before any view)


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        method = request.method if request.method in METHODS else "other"
        HTTP_REQUEST_DURATION.labels(
            match.route if match is not None else UNMATCHED,
            method,
            f"{response.status_code // 100}xx",
        ).observe(time.perf_counter() - started)
        return response
