"""Every page under the Content-Security-Policy in a real browser (Debian's Chromium via
Playwright): nothing is refused (no inline script, no style the policy does not allow),
no script error, and every Plotly chart is drawn. Screenshots go to the test's tmp dir."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from analytics.alerts.models import AlertRule
from ingest.pipelines.agent_events import ingest_body
from tests.analytics.alerts import scenarios
from tests.dashboard.runs_data import load_runs
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "security-browser-password"
SCENARIO_END = "2026-01-14T09:20:00Z"  # where the flapping-KV scenario ends
# Each page, and whether it has charts (partials/chart.html's .chart elements).
PAGES = {
    "/": False,
    "/runs/tiny/": True,
    "/overview/": True,
    "/serving/": True,
    "/serving/instance/gpu-flap/": True,
    "/tokens/": True,
    "/costs/": True,
    "/alerts/": False,
    "/alerts/rules/new/": False,
}
EVERY_CHART_DRAWN = """() => [...document.querySelectorAll('.chart[data-src]')]
  .every(c => c.classList.contains('js-plotly-plot') && c.querySelector('.main-svg'))"""
# Violations as the page sees them, whatever the console says about them.
WATCH_VIOLATIONS = """window.__violations = [];
document.addEventListener('securitypolicyviolation', e =>
  window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' '
    + (e.sourceFile || '') + ':' + e.lineNumber));"""


@pytest.fixture
def fleet(lake: Path, transactional_db: None, django_user_model: Any) -> Any:
    """Runs tiny and done, an LLM call (so costs and tokens have a day), the flapping-KV
    serving scenario and one alert rule; an admin who sees every team."""
    load_runs()
    call = {"ts": "2026-01-14T10:00:00Z", "run": "tiny", "agent": "w", "event": "llm_call",
            "model": "gpt-5", "usage": {"input_tokens": 1000, "output_tokens": 10}}  # fmt: skip
    ingest_body(orjson.dumps(call) + b"\n")
    scenarios.load_flapping_kv()
    rule = AlertRule.objects.create(
        name="kv high", kind="kv_usage", threshold=0.95, for_seconds=300
    )
    grant(django_user_model.objects.create_user("mallory", password=PASSWORD))
    return rule


class Watch:
    """What the browser said: console lines and uncaught errors, kept per page."""

    def __init__(self, page: Page) -> None:
        self.lines: list[str] = []
        page.on("console", self.console)
        page.on("pageerror", lambda exc: self.lines.append(f"pageerror: {exc}"))
        page.add_init_script(WATCH_VIOLATIONS)

    def console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.lines.append(f"{message.type}: {message.text}")

    def take(self) -> list[str]:
        taken, self.lines = self.lines, []
        return taken


@pytest.fixture
def watched(browser: Browser) -> Iterator[tuple[Page, Watch]]:
    """A page at 1440 px, with what it says watched; closed before the server stops."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page, Watch(page)
    context.close()


def assert_clean(page: Page, watch: Watch, path: str) -> None:
    assert page.evaluate("window.__violations") == [], path
    said = watch.take()
    assert [line for line in said if "Refused" in line or "Content Security" in line] == [], path
    assert [line for line in said if line.startswith("pageerror")] == [], path


def test_every_page_works_under_the_policy(
    watched: tuple[Page, Watch], live_server: Any, fleet: AlertRule, tmp_path: Path
) -> None:
    page, watch = watched
    page.goto(f"{live_server.url}/accounts/login/")
    assert_clean(page, watch, "/accounts/login/")
    page.fill("#id_username", "mallory")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("header .user")).to_contain_text("mallory")
    pages = {**PAGES, f"/alerts/rules/{fleet.pk}/": False}
    for path, has_charts in pages.items():
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        assert (page.locator(".chart[data-src]").count() > 0) == has_charts, path
        if has_charts:
            page.wait_for_function(EVERY_CHART_DRAWN)
            expect(page.locator(".chart .error")).to_have_count(0)
            # Plotly's own rules went in through the one <style> element the policy allows.
            assert page.evaluate(
                "() => [...document.styleSheets].some(s => s.ownerNode?.id"
                " === 'plotly.js-style-global' && s.cssRules.length > 0)"
            ), path
        page.wait_for_load_state("networkidle")
        name = path.strip("/").replace("/", "_") or "runs"
        page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
        assert_clean(page, watch, path)
    # The rule editor's preview draws its timeline (a chart the POST's answer names).
    page.evaluate(f"document.querySelector('#id_end').value = '{SCENARIO_END}'")
    page.click("button[value=preview]")
    expect(page.locator("#preview .chart .main-svg").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(tmp_path / "rule-preview.png"), full_page=True)
    assert_clean(page, watch, "the rule preview")


def test_the_api_docs_draw_under_the_policy(
    watched: tuple[Page, Watch], live_server: Any, fleet: AlertRule
) -> None:
    page, watch = watched
    page.goto(f"{live_server.url}/api/docs")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/api/docs")
    page.fill("#id_username", "mallory")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/api/docs")
    # Swagger UI's bundle is 1.5 MB of script: give a busy machine time to run it.
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        "Fleetscope API", timeout=30_000
    )
    assert page.locator(".opblock").count() > 20
    page.wait_for_load_state("networkidle")
    assert_clean(page, watch, "/api/docs")


def test_the_run_picker_sends_its_form_without_an_inline_handler(
    watched: tuple[Page, Watch], live_server: Any, fleet: AlertRule
) -> None:
    page, watch = watched
    page.goto(f"{live_server.url}/accounts/login/?next=/overview/")
    page.fill("#id_username", "mallory")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    picker = page.locator("select[name=run][data-autosubmit]")
    assert picker.get_attribute("onchange") is None
    picker.select_option("done")
    page.wait_for_url(lambda url: "run=done" in url)
    expect(page.locator("select[name=run]")).to_have_value("done")
    page.wait_for_load_state("networkidle")
    assert_clean(page, watch, "/overview/?run=done")


def test_a_locked_login_says_when_to_retry_on_one_line_at_phone_width(
    watched: tuple[Page, Watch], live_server: Any, fleet: AlertRule, tmp_path: Path
) -> None:
    page, watch = watched
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/accounts/login/")
    for n in range(5):
        page.fill("#id_username", "mallory")
        page.fill("#id_password", f"guess-{n}")
        page.click("button[type=submit]")
        expect(page.locator(".login .error")).to_contain_text("didn't match")
    page.fill("#id_password", PASSWORD)
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.click("button[type=submit]")
    assert answer.value.status == 429
    error = page.locator(".login .error")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("Too many failed logins: try again after ")
    expect(error).to_contain_text("UTC (in 15 minutes).")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.screenshot(path=str(tmp_path / "login-locked-375.png"), full_page=True)
    assert_clean(page, watch, "/accounts/login/")
