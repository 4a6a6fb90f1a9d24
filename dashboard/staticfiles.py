"""Static files the pages need from elsewhere: plotly.js from the installed plotly package
(so pages never need a CDN) and /favicon.ico for the browsers that ask for it. Serving and
caching are whitenoise's (settings.STORAGES); nothing here reads a file per request."""

from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static

PLOTLY_BUNDLE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_STATIC_PATH = "vendor/plotly.min.js"


class PlotlyFinder(BaseFinder):
    """Finds `vendor/plotly.min.js` in plotly's own package_data."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(PLOTLY_BUNDLE.parent))

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    # django-stubs declares find() as two overloads; this one body serves both.
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        if path == PLOTLY_STATIC_PATH and PLOTLY_BUNDLE.exists():
            return [str(PLOTLY_BUNDLE)] if find_all else str(PLOTLY_BUNDLE)
        return [] if find_all else ""

    def list(self, ignore_patterns: Any) -> Any:
        yield "plotly.min.js", _PrefixedStorage(str(PLOTLY_BUNDLE.parent))


class _PrefixedStorage(FileSystemStorage):
    prefix = "vendor"


FAVICON = "fleetscope/favicon.svg"


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """/favicon.ico, which browsers and tools ask for whatever the page links: the SVG icon
    under its static (hashed, long-cached) name. Not permanent, since that name changes."""
    return HttpResponseRedirect(static(FAVICON))
