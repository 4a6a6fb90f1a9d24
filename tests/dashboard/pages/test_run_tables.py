"""dashboard/pages/run_tables.py: each run table's CSV (`?format=csv&table=<name>`) holds
the rows the page shows, in its order, with the figures of links_data's run by hand."""

import csv
import html as html_lib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.dashboard.links_data import FORMULA_TOOL, load_links

CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
TAG = re.compile(r"<[^>]+>")


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any) -> Client:
    load_links()
    client.force_login(user)
    return client


def shown_first_cells(page: str, element_id: str) -> list[str]:
    """The first cell's text of each body row of the table under `element_id`."""
    start = page.index(f'id="{element_id}"')
    body = page[page.index("<tbody>", start) : page.index("</tbody>", start)]
    rows = body.split("<tr")[1:]
    return [html_lib.unescape(TAG.sub("", CELL.findall(r)[0])).strip() for r in rows]


def table_csv(client: Client, query: str) -> list[list[str]]:
    response = client.get(f"/runs/links/?{query}")
    assert response.status_code == 200, response.content[:300]
    body = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    return list(csv.reader(io.StringIO(body)))


def test_the_tools_csv_is_the_tools_table(signed_in: Client) -> None:
    page = signed_in.get("/runs/links/?last=all").content.decode()
    header, *rows = table_csv(signed_in, "last=all&format=csv&table=tools")
    assert header == ["tool", "calls", "answered", "errors", "error_rate", "mean_time_ms"]
    # A formula-looking name is escaped so a spreadsheet shows it as text.
    assert [r[0] for r in rows] == [
        name if name != FORMULA_TOOL else "'" + name
        for name in shown_first_cells(page, "run-tools")
    ]
    assert sorted((r[0], r[1], r[3]) for r in rows) == [
        ("'" + FORMULA_TOOL, "1", "0"),
        ("cargo build", "1", "1"),
    ]


def test_the_models_csv_is_the_models_table_with_its_usd(signed_in: Client) -> None:
    page = signed_in.get("/runs/links/?last=all").content.decode()
    header, *rows = table_csv(signed_in, "last=all&format=csv&table=models")
    assert [r[0] for r in rows] == shown_first_cells(page, "run-models")
    assert header[-2:] == ["cost_usd", "unpriced_calls"]
    by_model = {r[0]: (r[1], r[2], r[7], r[-1]) for r in rows}
    assert by_model == {
        "claude-haiku-4-5": ("1", "1000", "100", "0"),
        "claude-sonnet-4-5": ("1", "10", "0", "0"),
        "mystery-model": ("1", "10", "10", "1"),
    }
    assert {r[0]: r[-2] for r in rows}["mystery-model"] == ""  # no price: no USD, not 0


def test_the_commits_csv_holds_every_agent_past_the_page(signed_in: Client) -> None:
    response = signed_in.get("/runs/many/?last=all&format=csv&table=commits")
    body = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    header, *rows = list(csv.reader(io.StringIO(body)))
    assert header[:2] == ["agent", "commits"]
    # 51 agents with one commit each; the page shows 50, the CSV all, `@cmd` escaped.
    assert len(rows) == 51
    assert sorted(r[0] for r in rows) == sorted(["'@cmd"] + [f"a{i:02d}" for i in range(50)])
    assert {r[1] for r in rows} == {"1"}
    page = signed_in.get("/runs/many/?last=all").content.decode()
    shown = shown_first_cells(page, "run-commits-by-agent")
    assert len(shown) == 50
    assert [r[0].removeprefix("'") for r in rows[:50]] == shown


def test_the_stalls_and_quarantine_csv_are_their_tables(signed_in: Client) -> None:
    header, *stalls = table_csv(signed_in, "last=all&min_gap=30m&format=csv&table=stalls")
    assert header == ["from", "to", "minutes", "events_meanwhile"]
    # c2 10:01:45 to c3 10:40:00: 38.25 minutes, four events between.
    assert [(s[2], s[3]) for s in stalls] == [("38.25", "4")]
    assert stalls[0][0].startswith("2026-01-14") and "10:01:45" in stalls[0][0]
    header, *lines = table_csv(signed_in, "format=csv&table=quarantine")
    assert header[0] == "file" and len(lines) == 2
    formula, event = sorted(r[5] for r in lines)
    assert formula == "'=1+1"
    # The event as stored, with the line id the ingest gave it.
    assert event.startswith('{"id":"line:')
    assert event.endswith('"ts": "yesterday", "run": "links", "agent": "w1", "event": "commit"}')


def test_an_unknown_table_is_a_422(signed_in: Client) -> None:
    response = signed_in.get("/runs/links/?format=csv&table=colours")
    assert response.status_code == 422
    assert "table must be one of stalls, tools, models, commits" in response.content.decode()
