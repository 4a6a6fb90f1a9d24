"""The runs list in a real browser (Debian's Chromium via Playwright), at 1440 px and at
375 px: a search typed in the filter bar, a status chosen, a heading clicked to sort and
the next page followed, each kept in the URL; listing_world's six runs. Screenshots go to
the test's tmp dir (under /tmp)."""

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.analytics.runs.listing_world import SESSION_1, SESSION_2, load_listing_world
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "runs-list-browser-password"
WIDE = {"width": 1440, "height": 1000}
PHONE = {"width": 375, "height": 800}


@pytest.fixture
def world(lake: Path, transactional_db: None, django_user_model: Any) -> None:
    load_listing_world()
    grant(django_user_model.objects.create_user("dana", password=PASSWORD))


def signed_in(browser: Browser, base: str, viewport: dict[str, int]) -> Page:
    page = browser.new_context(viewport=viewport).new_page()  # type: ignore[arg-type]
    page.set_default_timeout(20_000)
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("header .user")).to_contain_text("dana")
    return page


def listed(page: Page) -> list[str]:
    return [
        t.strip().split("\n")[-1].strip()
        for t in page.locator("table.runs tbody td.run-name").all_inner_texts()
    ]


def test_at_1440_px_a_user_searches_filters_sorts_and_pages(
    browser: Browser, live_server: Any, world: None, tmp_path: Path
) -> None:
    base = live_server.url
    page = signed_in(browser, base, WIDE)
    page.goto(f"{base}/")
    expect(page.locator("table.runs tbody tr")).to_have_count(6)
    page.screenshot(path=str(tmp_path / "1440-runs-list.png"), full_page=True)

    page.fill(".run-filters input[name=q]", "session")
    page.click(".run-filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"[?&]q=session(&|$)"))
    expect(page.locator("table.runs tbody tr")).to_have_count(2)
    assert listed(page) == [SESSION_1, SESSION_2]
    expect(page.locator(".run-filters input[name=q]")).to_have_value("session")

    page.click("text=Clear filters")
    page.select_option(".run-filters select[name=status]", "idle")
    page.click(".run-filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"[?&]status=idle(&|$)"))
    # The live server judges at the wall clock, long after the world's day: every run but
    # alpha (its root planner stopped) is idle.
    expect(page.locator("table.runs tbody tr")).to_have_count(5)
    assert listed(page) == ["gamma", "beta", "delta", SESSION_1, SESSION_2]

    page.get_by_role("link", name="Tokens").click()
    expect(page).to_have_url(re.compile(r"[?&]sort=-tokens(&|$)"))
    expect(page.locator("th[aria-sort=descending]")).to_have_text(re.compile("Tokens"))
    assert listed(page) == [SESSION_1, SESSION_2, "delta", "beta", "gamma"]  # 0 = 0: by name
    page.screenshot(path=str(tmp_path / "1440-runs-list-sorted.png"), full_page=True)

    page.goto(f"{base}/?sort=name&limit=4")
    assert listed(page) == [SESSION_1, SESSION_2, "alpha", "beta"]
    page.click("a[rel=next]")
    expect(page).to_have_url(re.compile(r"[?&]cursor=[\w-]+"))
    expect(page.locator("table.runs tbody tr")).to_have_count(2)
    assert listed(page) == ["delta", "gamma"]
    page.click("text=« First page")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    page.context.close()


def test_at_375_px_the_filter_bar_and_the_list_fit(
    browser: Browser, live_server: Any, world: None, tmp_path: Path
) -> None:
    base = live_server.url
    page = signed_in(browser, base, PHONE)
    page.goto(f"{base}/?sort=name&limit=4")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(tmp_path / "375-runs-list.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the list is {width} px wide"
    for name in ("q", "status", "source", "model", "start", "end"):
        box = page.locator(f".run-filters [name={name}]").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    page.click("a[rel=next]")
    expect(page.locator("table.runs tbody tr")).to_have_count(2)
    page.context.close()
