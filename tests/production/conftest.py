"""The production topology (tests/production/topology.py) for each test, with a folder
its workers tail, and this process reading the same lake to count what was stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import warehouse
from tests.production.topology import Topology, production


def _running(
    tmp_path: Path, settings: Any, env: dict[str, str] | None = None, **options: Any
) -> Iterator[Topology]:
    tail = tmp_path / "tail"
    tail.mkdir()
    extra = {"FLEETSCOPE_TAIL_AGENT_EVENTS": str(tail), "FLEETSCOPE_TAIL_SECONDS": "1"}
    extra |= env or {}
    with production(tmp_path / "topology", extra_env=extra, **options) as running:
        # This process reads the same lake, to count what the writers stored.
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE = running.env["FLEETSCOPE_WAREHOUSE"]
        settings.FLEETSCOPE_WAREHOUSE_DATA = running.env["FLEETSCOPE_WAREHOUSE_DATA"]
        settings.FLEETSCOPE_S3_ENDPOINT = running.env["FLEETSCOPE_S3_ENDPOINT"]
        settings.FLEETSCOPE_S3_KEY_ID = "testing"
        settings.FLEETSCOPE_S3_SECRET = "testing"
        settings.FLEETSCOPE_S3_USE_SSL = False
        try:
            yield running
        finally:
            warehouse.close()


@pytest.fixture
def topology(tmp_path: Path, settings: Any) -> Iterator[Topology]:
    yield from _running(tmp_path, settings)


@pytest.fixture
def topology_with_faulty_s3(tmp_path: Path, settings: Any) -> Iterator[Topology]:
    """The topology reaching S3 through a proxy that fails on demand (s3_faults.py), its
    scrape targets scraped every 2 s and the scrapes loaded every 4 s."""
    scrapes = {"FLEETSCOPE_SCRAPE_SECONDS": "2", "FLEETSCOPE_SERVING_FLUSH_SECONDS": "4"}
    yield from _running(tmp_path, settings, scrapes, s3_faults=True)
