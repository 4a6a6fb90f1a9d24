"""The runs pages in a real browser: Debian's Chromium driven by Playwright against a live
server with a generated harness run loaded. One browser for the module; screenshots go
to the test's tmp dir (under /tmp), never into the repository."""

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from ingest.pipelines.agent_events import run_agent_events
from ingest.synthetic import RunSpec, generate_run
from tests.dashboard.runs_data import XSS, load_runs
from tests.people import grant

pytestmark = pytest.mark.browser

PASSWORD = "browser-test-password"
FLEET = RunSpec(
    run="fleet", seed=17, hours=4, workers=60, planners=4, peak_commits_per_hour=240,
    stall_at=2.5, stall_hours=0.75,
)  # fmt: skip


@pytest.fixture
def fleet(lake: Path, tmp_path: Path, transactional_db: None, django_user_model: Any) -> None:
    generate_run(FLEET, tmp_path / "logs" / "fleet.jsonl", epoch_fraction=0.3)
    run_agent_events([str(tmp_path / "logs")])
    load_runs()
    grant(django_user_model.objects.create_user("carol", password=PASSWORD))


def log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/")
    expect(page).to_have_url(f"{base}/accounts/login/?next=/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    # fleetscope.js writes the auto-refresh choice into the URL.
    expect(page).to_have_url(re.compile(re.escape(base) + r"/(\?refresh=0)?$"))


def charts_drawn(page: Page) -> None:
    for chart in page.locator(".chart[data-src]").all():
        expect(chart.locator(".main-svg").first).to_be_attached()


def test_a_user_logs_in_opens_a_run_reads_its_charts_and_tree_and_narrows_the_range(
    fleet: None, live_server: Any, page: Page, tmp_path: Path
) -> None:
    base = live_server.url
    log_in(page, base)
    rows = page.locator("table.runs tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("table.runs")).to_contain_text("fleet")
    page.screenshot(path=str(tmp_path / "runs.png"), full_page=True)

    page.get_by_role("link", name="fleet", exact=True).click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/fleet/(\?refresh=0)?$"))
    expect(page.locator(".chart[data-src]")).to_have_count(2)
    charts_drawn(page)
    expect(page.locator(".chart .shapelayer path")).not_to_have_count(0)  # the stall, shaded
    expect(page.locator("#stalls-table tbody tr")).to_have_count(1)
    expect(page.locator("#drift-badge")).to_contain_text("flat")

    # 73 agents: the root and planners open, subplanners closed with their workers hidden.
    expect(page.locator(".agent-tree li.open")).to_have_count(5)
    planner = page.locator('.agent-tree li[data-node="sp-css-1"]')
    worker_rows = page.locator('.agent-tree li[data-node^="w-"] > .node')
    expect(planner.locator("> .node")).to_be_visible()
    expect(planner.locator("> ul > li").first).to_be_hidden()
    planner.locator("> .node button[data-toggle]").click()
    expect(planner).to_have_class(re.compile(r"\bopen\b"))
    expect(planner.locator("> ul > li").first).to_be_visible()
    page.click("[data-expand-all=open]")
    expect(worker_rows.first).to_be_visible()
    visible_workers = page.locator('.agent-tree li[data-node^="w-"] > .node:visible')
    # 60 workers, a page of 50 (the busiest first); the other 10 are counted where they sit.
    expect(visible_workers).to_have_count(50)
    expect(page.locator("#tree-note")).to_contain_text("Showing 50 of 60 agents")
    expect(page.locator(".agent-tree li.more")).not_to_have_count(0)
    page.click("[data-expand-all=close]")
    expect(visible_workers).to_have_count(0)
    # Typing filters the page's rows; Enter asks the server for the whole run's.
    page.fill("[data-tree-filter]", "w-004")
    expect(page.locator("[data-tree-filter-count]")).not_to_have_text("")
    page.press("[data-tree-filter]", "Enter")
    expect(page).to_have_url(re.compile(r"find=w-004"))
    expect(page.locator("#tree-note")).to_contain_text("10 agents with none below them")
    expect(page.locator('.agent-tree li[data-node^="w-"]')).to_have_count(10)
    page.fill("[data-tree-filter]", "w-0042")
    expect(page.locator("[data-tree-filter-count]")).to_have_text("1 agent")
    expect(visible_workers).to_have_count(1)
    page.fill("[data-tree-filter]", "")
    page.press("[data-tree-filter]", "Enter")
    expect(page.locator("#tree-note")).to_contain_text("Showing 50 of 60 agents")
    page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

    # What auto-refresh does: reload the fragments; the tree stays as the user left it.
    planner.locator("> .node button[data-toggle]").click()
    open_nodes = "[...document.querySelectorAll('.agent-tree li.open')].map(li => li.dataset.node)"
    before = page.evaluate(open_nodes)
    assert "sp-css-1" in before
    with page.expect_response(re.compile(r"fragment=tree")):
        page.evaluate("window.Fleetscope.reloadFragments()")
    expect(page.locator('.agent-tree li[data-node="sp-css-1"]')).to_have_class(
        re.compile(r"\bopen\b")
    )
    assert page.evaluate(open_nodes) == before
    page.select_option("#run-controls select[data-refresh]", "30")
    expect(page).to_have_url(re.compile(r"refresh=30"))

    commits_all = page.locator("#stat-commits").inner_text()
    page.click("#run-controls button[name=last][value='1h']")
    expect(page).to_have_url(re.compile(r"last=1h"))
    expect(page.locator("#run-controls button[value='1h']")).to_have_class(re.compile("active"))
    charts_drawn(page)
    assert page.locator("#stat-commits").inner_text() != commits_all
    expect(page.locator("#run-controls .times")).to_have_text("the run's last 1h · UTC")

    page.fill("#run-controls input[name=from]", "2026-01-14T11:00")
    page.fill("#run-controls input[name=to]", "2026-01-14T12:00")
    page.select_option("#run-controls select[name=bucket]", "5m")
    page.click("#run-controls button.apply")
    expect(page).to_have_url(
        re.compile(r"from=2026-01-14T11%3A00.*bucket=5m|bucket=5m.*from=2026-01-14T11%3A00")
    )
    charts_drawn(page)
    bars = page.locator(".chart").first.locator(".bars .point")
    expect(bars).to_have_count(12)
    # The tree keeps its shape when the range starts after the spawns.
    root = page.locator('.agent-tree > li[data-node="root"]')
    expect(root.locator("> .node .badge")).to_have_text("root_planner")
    expect(page.locator(".agent-tree > li")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "run-range.png"), full_page=True)


def test_an_agent_named_like_html_is_shown_as_text_and_unknown_runs_are_404(
    fleet: None, live_server: Any, page: Page
) -> None:
    base = live_server.url
    log_in(page, base)
    page.goto(f"{base}/runs/tiny/")
    expect(page.locator(f'.agent-tree li[data-node="{XSS}"] .name')).to_have_text(XSS)
    assert page.evaluate("window.alerted === undefined")
    response = page.goto(f"{base}/runs/no-such-run/")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Nothing here")


BIG = RunSpec(run="big", seed=3, hours=2, workers=1000, planners=2, peak_commits_per_hour=600)
# How long a reload of this run's page may take on a busy machine (a wait, not a measure).
RELOAD_MS = 60_000


@pytest.fixture
def big(lake: Path, tmp_path: Path, transactional_db: None, django_user_model: Any) -> None:
    generate_run(BIG, tmp_path / "logs" / "big.jsonl", malformed=3)
    with (tmp_path / "logs" / "big.jsonl").open("ab") as log:
        log.write(b'<img src=x onerror="window.alerted=1">\n')
    run_agent_events([str(tmp_path / "logs")])
    grant(django_user_model.objects.create_user("carol", password=PASSWORD))


def test_a_run_of_a_thousand_agents_pages_its_lists_and_shows_its_quarantine(
    big: None, live_server: Any, page: Page, tmp_path: Path
) -> None:
    base = live_server.url
    log_in(page, base)
    page.goto(f"{base}/runs/big/", timeout=RELOAD_MS)
    note = page.locator("#tree-note")
    expect(note).to_contain_text("Showing 50 of 998 agents with none below them, by commits")
    page.click("[data-expand-all=open]")
    workers = page.locator('.agent-tree li[data-node^="w-"] > .node:visible')
    expect(workers).to_have_count(50)

    # The sort is the server's: choosing one reloads the tree sorted, the page kept short.
    page.select_option("#tree-controls select[name=tree_sort]", "events")
    expect(page).to_have_url(re.compile(r"tree_sort=events"), timeout=RELOAD_MS)
    expect(note).to_contain_text("by events (1 to 50)", timeout=RELOAD_MS)
    page.locator("#tree-note a[rel=next]").click()
    expect(page).to_have_url(re.compile(r"tree_offset=50"), timeout=RELOAD_MS)
    expect(note).to_contain_text("by events (51 to 100)", timeout=RELOAD_MS)
    expect(page.locator("#tree-controls select[name=tree_sort]")).to_have_value("events")

    commits = page.locator("#run-commits-by-agent")
    expect(commits.locator("tbody tr")).to_have_count(50)
    commits.get_by_role("link", name="Files").click()
    expect(page).to_have_url(re.compile(r"commits_sort=files"), timeout=RELOAD_MS)
    expect(page).to_have_url(re.compile(r"tree_offset=50"))  # the tree stays where it was
    expect(page.locator("#commits-note")).to_contain_text("by files.", timeout=RELOAD_MS)

    # Four lines set aside, newest first, the HTML one shown as text.
    lines = page.locator("#run-quarantine tbody tr")
    expect(lines).to_have_count(4)
    expect(lines.first.locator("code.raw")).to_have_text('<img src=x onerror="window.alerted=1">')
    assert page.evaluate("window.alerted === undefined")
    page.screenshot(path=str(tmp_path / "big.png"), full_page=True)
