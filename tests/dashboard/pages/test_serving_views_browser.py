"""The Serving views in Chromium: every view draws its charts (a heatmap, bars, rates) at
1440 px and fits a 375 px phone without sideways scrolling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.pages.test_serving_views import PASSWORD, WINDOW, served  # noqa: F401

VIEWS = {"fleet": 1, "kv-cache": 5, "spec-decode": 2, "lengths": 4, "slo": 1}


@pytest.mark.parametrize("width", [1440, 375])
def test_every_serving_view_draws_its_charts_and_fits_the_screen(
    page: Page,
    live_server: Any,
    served: None,  # noqa: F811 - the fixture, imported
    tmp_path: Path,
    width: int,
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ops")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    for view, count in VIEWS.items():
        page.goto(f"{live_server.url}/serving/{view}/?instance=gpu-a&{WINDOW}")
        expect(page.locator(".chart")).to_have_count(count)
        page.wait_for_function(
            "n => document.querySelectorAll('.chart .plot-container').length === n", arg=count
        )
        expect(page.locator(".chart .error")).to_have_count(0)
        expect(page.locator(".view-tabs a.active")).to_have_count(1)
        page.screenshot(path=str(tmp_path / f"{view}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, view
