"""GET /api/runs/{run}/serving-latency: 401 without credentials, 404 for an unknown run,
422 for a bad window, and the figures of the run's own vLLM requests, by hand."""

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.analytics.runs import serving_world

PATH = "/api/runs/agent-run/serving-latency"


@pytest.fixture
def world(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    serving_world.build()


def test_it_needs_credentials(client: Client, world: None) -> None:
    assert client.get(PATH).status_code == 401


def test_unknown_runs_and_bad_windows(client: Client, auth_headers: dict, world: None) -> None:
    missing = client.get("/api/runs/no-such-run/serving-latency", headers=auth_headers)
    assert missing.status_code == 404
    backwards = client.get(
        f"{PATH}?start=2026-03-02T10:00:00Z&end=2026-03-02T09:00:00Z", headers=auth_headers
    )
    assert backwards.status_code == 422


def test_the_runs_own_requests_in_the_window(
    client: Client, auth_headers: dict, world: None
) -> None:
    # Before 09:00:10: a1 (09:00:00) and b2 (09:00:05), not e5 (09:00:30).
    # TTFT 250, 500: mean 375, p50 250 + 0.5 * 250 = 375, p95 250 + 0.95 * 250 = 487.5;
    # queue 125, 250: p95 125 + 0.95 * 125 = 243.75; e2e 1500, 2500: p95 1500 + 950 = 2450.
    answer = client.get(f"{PATH}?end=2026-03-02T09:00:10Z", headers=auth_headers).json()
    assert answer == {
        "run": "agent-run",
        "requests": 2,
        "ttft": {"count": 2, "mean_ms": 375.0, "p50_ms": 375.0, "p95_ms": 487.5},
        "queue": {"count": 2, "mean_ms": 187.5, "p50_ms": 187.5, "p95_ms": 243.75},
        "e2e": {"count": 2, "mean_ms": 2000.0, "p50_ms": 2000.0, "p95_ms": 2450.0},
    }
    quiet = client.get("/api/runs/quiet-run/serving-latency", headers=auth_headers).json()
    none = {"count": 0, "mean_ms": None, "p50_ms": None, "p95_ms": None}
    assert quiet == {"run": "quiet-run", "requests": 0, "ttft": none, "queue": none, "e2e": none}
