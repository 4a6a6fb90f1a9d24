"""Static files as `make run` serves them: collected under hashed names with gzip copies
(CompressedManifestStaticFilesStorage), served compressed and cached for a year by
whitenoise; plotly.js named only by pages that draw a chart; /favicon.ico answered."""

import gzip
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from dashboard import settings as product_settings
from dashboard.staticfiles import PLOTLY_BUNDLE

YEAR_S = 365 * 24 * 3600


@pytest.fixture
def collected(settings: Any, tmp_path: Path) -> Path:
    """The product's storage (the test settings keep the plain one) over a fresh
    STATIC_ROOT, collected for the test."""
    assert product_settings.STORAGES["staticfiles"]["BACKEND"] == (
        "whitenoise.storage.CompressedManifestStaticFilesStorage"
    )
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = product_settings.STORAGES
    call_command("collectstatic", interactive=False, verbosity=0)
    return settings.STATIC_ROOT


@pytest.fixture
def logged_in(user: Any) -> Client:
    client = Client()  # a new handler, so whitenoise indexes this test's STATIC_ROOT
    client.force_login(user)
    return client


def body(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def test_plotly_is_served_gzipped_under_a_hashed_name_cached_for_a_year(
    collected: Path, lake: Path, logged_in: Client
) -> None:
    page = logged_in.get("/overview/").content.decode()
    start = page.index('data-plotly="') + len('data-plotly="')
    url = page[start : page.index('"', start)]
    assert url.startswith("/static/vendor/plotly.min.") and url.endswith(".js")
    assert len(url.removeprefix("/static/vendor/plotly.min.").removesuffix(".js")) == 12

    served = logged_in.get(url, HTTP_ACCEPT_ENCODING="gzip, br")
    assert served.status_code == 200
    assert served["Content-Encoding"] == "gzip"
    assert f"max-age={10 * YEAR_S}" in served["Cache-Control"]
    assert "immutable" in served["Cache-Control"]
    compressed = body(served)
    original = PLOTLY_BUNDLE.read_bytes()
    assert gzip.decompress(compressed) == original
    assert len(compressed) < len(original) / 3


def test_only_pages_with_a_chart_name_plotly(lake: Path, logged_in: Client) -> None:
    runs = logged_in.get("/").content.decode()
    assert "plotly" not in runs
    overview = logged_in.get("/overview/").content.decode()
    assert overview.count('data-plotly="/static/vendor/plotly.min.js"') == 1
    assert '<script src="/static/vendor/plotly' not in overview + runs


def test_favicon_ico_leads_to_the_linked_svg_icon(logged_in: Client, db: None) -> None:
    page = logged_in.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/fleetscope/favicon.svg" type="image/svg+xml">' in page
    answer = logged_in.get("/favicon.ico")
    assert answer.status_code == 302
    assert answer["Location"] == "/static/fleetscope/favicon.svg"
    icon = logged_in.get(answer["Location"])
    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/svg+xml"
    assert body(icon).lstrip().startswith(b"<svg")
