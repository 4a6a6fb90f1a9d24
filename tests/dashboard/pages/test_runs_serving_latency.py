"""The run page's serving-latency section: the API's figures of the run's own vLLM
requests, by hand, and a line saying how to get them when there are none."""

import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analytics.runs.serving_latency import serving_latency
from tests.analytics.runs import serving_world


@pytest.fixture
def signed_in(settings: Any, tmp_path: Path, lake: Path, client: Client, user: Any) -> Client:
    settings.DATA_DIR = tmp_path
    serving_world.build()
    client.force_login(user)
    return client


def _rows(html: str) -> list[list[str]]:
    section = html[html.index('id="run-serving-latency"') :]
    body = section[section.index("<tbody>") : section.index("</tbody>")]
    return [
        [
            re.sub(r"\s+", " ", cell).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_the_run_page_shows_the_latency_its_calls_saw(signed_in: Client) -> None:
    response = signed_in.get("/runs/agent-run/?last=all")
    assert response.status_code == 200
    assert response.context["serving_latency"] == serving_latency("agent-run")
    # TTFT 250, 500, 1000: mean 583.3, p50 500, p95 950; queue 125, 250, 500: mean
    # 291.7, p95 475; e2e 1500, 2500, 4000: mean 2666.7, p95 3850 (one decimal).
    assert _rows(response.content.decode()) == [
        ["Time to first token", "3", "583.3", "500.0", "950.0"],
        ["Queue", "3", "291.7", "250.0", "475.0"],
        ["End to end", "3", "2666.7", "2500.0", "3850.0"],
    ]
    assert "3 requests; percentiles interpolate between closest ranks." in response.content.decode()


def test_a_run_without_joined_requests_says_how_to_get_them(signed_in: Client) -> None:
    html = signed_in.get("/runs/quiet-run/?last=all").content.decode()
    assert "No serving records joined to this run's calls in this range" in html
    assert "<code>traceparent</code>" in html
