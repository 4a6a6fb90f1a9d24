"""/api/docs in a real browser with the network limited to loopback: Swagger UI comes
from django-ninja's own static files, so an offline install draws its API docs (to a
logged-in user: the docs are behind the login)."""

from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect

pytestmark = pytest.mark.browser

LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


def test_the_api_docs_draw_every_operation_without_leaving_loopback(
    page: Page, live_server: Any, user: Any
) -> None:
    refused: list[str] = []

    def only_loopback(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in {"data", "blob"} or urlsplit(url).hostname in LOOPBACK:
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    page.route("**/*", only_loopback)
    page.goto(f"{live_server.url}/api/docs")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "correct-horse-battery")
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/api/docs")
    # Swagger UI's bundle is 1.5 MB of script: give a busy machine time to run it.
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        "Fleetscope API", timeout=30_000
    )
    health = page.locator(".opblock-summary-path", has_text="/api/health")
    expect(health).to_be_visible()
    assert page.locator(".opblock").count() > 20
    page.wait_for_load_state("networkidle")
    assert refused == []
