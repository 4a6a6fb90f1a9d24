"""The run page's sources, tools and tokens panel shows what the API answers."""

from pathlib import Path

import pytest
from django.test import Client

from analytics.costs.price_files import load_shipped_prices
from ingest.pipelines.claude_code import run_claude_code
from tests.conftest import FIXTURE_ROOT

SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


@pytest.fixture
def page(lake: Path, client: Client, user: object) -> str:
    # The shipped prices the migrations load: a live-server test before this one on the
    # same worker may have flushed them.
    load_shipped_prices()
    run_claude_code([str(FIXTURE_ROOT / "agent-logs")])
    client.force_login(user)  # type: ignore[arg-type]
    response = client.get(f"/runs/{SESSION}/")
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</table>", start)]


def test_the_panel_shows_source_tools_tokens_and_commits(page: str) -> None:
    assert '<span class="badge info">claude-code</span>' in page
    assert "3 files, 49 events" in page

    tools = section(page, "run-tools")
    assert "31 calls, tool error rate 3.4% of 29 answered" in tools
    assert '<td>Bash</td>\n            <td class="num">11</td>' in tools

    models = section(page, "run-models")
    row = models[models.index("<td>claude-haiku-4-5-20251001</td>") :].split("</tr>")[0]
    cells = [c.split(">", 1)[1] for c in row.split("</td>")[1:-1]]
    # input, cache reads, cache writes, 5-minute / 1-hour writes, output, no reasoning
    # figure, and USD at analytics/data/prices.json's haiku 4.5 rates (1, 0.1, 1.25, 5 per
    # MTok): 11 + 38,492.1 + 51,896.25 + 3,040 = 93,439.35 per million = $0.09
    assert cells == ["7", "11", "384,921", "41,517", "41,517 / 0", "608", "\u2013", "$0.09"]

    commits = section(page, "run-commits-by-agent")
    assert "<td>main</td>" in commits and '<td class="num">118</td>' in commits
    assert "1 work, 0 task claims" in commits
