"""A page that finds the warehouse unmigrated answers 503 with a page saying so (the data
dir and the command to run, warehouse.NotMigrated's one line) instead of a server error.

The API answers the same line as JSON itself (dashboard/api.py maps every WarehouseError
to 503); this middleware must not handle anything else.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

import warehouse


class NotMigratedMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, warehouse.NotMigrated):
            return None
        return render(
            request, "warehouse_not_migrated.html", {"problem": str(exception)}, status=503
        )
