"""A run of a thousand agents stays a page long: the agent tree and the commits per agent
show 50 at a time, sorted on the server, with the page and sort in the query string and
a note saying how many there are; the quarantined lines are listed, escaped and paged."""

import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from ingest.pipelines.agent_events import run_agent_events
from ingest.synthetic import RunSpec, generate_run

BIG = RunSpec(run="big", seed=3, hours=2, workers=1000, planners=2, peak_commits_per_hour=600)
PAYLOAD = '<img src=x onerror="alert(1)">'


@pytest.fixture
def big(lake: Path, tmp_path: Path, client: Client, user: Any) -> dict[str, int]:
    """The run loaded; returns each committing agent's files, read from the log itself
    (and, under "", how many workers logged anything: a worker whose spawn was not
    logged and who did nothing is in no line)."""
    logs = tmp_path / "logs"
    generate_run(BIG, logs / "big.jsonl", malformed=3)
    with (logs / "big.jsonl").open("ab") as log:
        log.write(PAYLOAD.encode() + b"\n")
    run_agent_events([str(logs)])
    client.force_login(user)
    files: Counter[str] = Counter()
    seen = set()
    workers = set()
    for line in (logs / "big.jsonl").read_bytes().splitlines():
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        # (The malformed lines' `w-1` is not one of the run's workers.)
        if isinstance(doc, dict) and re.fullmatch(r"w-\d{4}", str(doc.get("agent"))):
            workers.add(doc["agent"])
        if not isinstance(doc, dict) or doc.get("event") != "commit" or doc.get("ok") is False:
            continue
        if doc.get("run") != "big" or doc["commit"]["sha"] in seen:
            continue
        seen.add(doc["commit"]["sha"])
        files[doc["agent"]] += doc["commit"]["files"]
    return {**files, "": len(workers)}


def page(client: Client, query: str = "") -> str:
    response = client.get(f"/runs/big/{query}")
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def workers_in(html: str) -> list[str]:
    return re.findall(r'data-node="(w-\d+)"', html)


def test_the_tree_shows_50_of_the_thousand_workers_and_every_planner(
    big: dict[str, int], client: Client
) -> None:
    html = page(client)
    assert big[""] == 998
    assert "Showing 50 of 998 agents with none below them" in html
    assert len(workers_in(html)) == 50
    # The root, 2 planners and their 2 subplanners each: all there.
    assert all(f'data-node="{p}"' in html for p in ("root", "p-css", "sp-css-1", "sp-layout-2"))
    assert 'rel="next"' in html and "tree_offset=50#agents" in html


def test_the_last_page_of_the_tree_and_a_sort_by_name(big: dict[str, int], client: Client) -> None:
    html = page(client, "?tree_sort=agent&tree_offset=950")
    shown = workers_in(html)
    # The last 48 names of 998 (two of w-0001..w-1000 logged nothing), under their parents.
    assert len(shown) == 48 and max(shown) == "w-1000" and min(shown) >= "w-0951"
    assert "(951 to 998)" in html
    assert "tree_offset=900" in html  # previous
    assert 'rel="next"' not in html.split('id="tree-note"')[1].split("</p>")[0]


def test_find_reaches_a_worker_on_any_page(big: dict[str, int], client: Client) -> None:
    html = page(client, "?find=w-0777")
    assert workers_in(html) == ["w-0777"]
    assert "1 agent with none below them whose name holds “w-0777”" in html


def test_commits_per_agent_50_at_a_time_sorted_by_any_column(
    big: dict[str, int], client: Client
) -> None:
    committers = len(big) - 1
    assert committers > 50
    html = page(client)
    assert f"Showing 50 of {committers:,} agents (1 to 50) with commits, by commits." in html
    by_files = page(client, "?commits_sort=files")
    table = by_files.split('id="run-commits-by-agent"')[1].split("</table>")[0]
    agents = re.findall(r"<tr>\s*<td>(w-\d+)</td>", table)
    assert len(agents) == 50
    busiest = sorted(big.items(), key=lambda item: (-item[1], item[0]))[1:51]
    assert agents == [agent for agent, _ in busiest]
    # Sorting keeps the tree where it was.
    assert (
        "tree_offset=50"
        in page(client, "?tree_offset=50&commits_sort=files").split('id="run-commits-by-agent"')[1]
    )


def test_quarantined_lines_are_listed_escaped(big: dict[str, int], client: Client) -> None:
    html = page(client)
    panel = html.split('id="run-quarantine"')[1]
    assert "4 lines." in panel
    assert PAYLOAD not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in panel
    assert "line is not valid JSON" in panel


def test_bad_list_parameters_answer_422(big: dict[str, int], client: Client) -> None:
    for query, reason in (
        ("?tree_sort=height", "sort must be one of commits, events, errors, tokens, agent"),
        ("?commits_offset=-5", "offset is negative"),
        ("?quarantine_offset=x", "offset &#x27;x&#x27; is not an integer"),
        ("?find=" + "w" * 201, "find is longer than 200 characters"),
    ):
        response = client.get(f"/runs/big/{query}")
        assert response.status_code == 422
        assert reason in response.content.decode()
