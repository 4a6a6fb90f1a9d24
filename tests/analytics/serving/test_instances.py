"""What scraping found out about each instance, read back exactly as it was loaded."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.serving.instances import (
    GaugesNow,
    Instance,
    LatestGauges,
    data_range,
    latest_gauges,
    latest_gauges_all,
    list_instances,
    recent_scrapes,
    require_instance,
)
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from lib.errors import NotFoundError
from tests.vllm_text import EngineState, v0_text, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)

EVERYONE = Seen.all()  # an all-teams reader: these tests are about the figures


def _at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
def scraped(lake: Path) -> None:
    """gpu-a: two V1 engines scraped at 0 s and 15 s, then a failed scrape at 30 s;
    old: one V0 scrape at 5 s; down: only a failed scrape, at 10 s."""
    first = {"0": EngineState(0.2, running=1, waiting=0), "1": EngineState(0.4, running=2)}
    second = {
        "0": EngineState(0.5, running=3, waiting=1),
        "1": EngineState(0.7, running=4, waiting=2),
    }
    load_scrapes(
        [
            PendingScrape("gpu-a", _at(0), scrape=parse_scrape(v1_text(first))),
            PendingScrape("gpu-a", _at(15), scrape=parse_scrape(v1_text(second))),
            PendingScrape("gpu-a", _at(30), error="HTTP 503 Service Unavailable"),
            PendingScrape("old", _at(5), scrape=parse_scrape(v0_text(EngineState(0.25)))),
            PendingScrape("down", _at(10), error="connection refused"),
        ]
    )


def test_an_instance_is_its_latest_attempt_and_its_latest_successful_scrape(
    scraped: None,
) -> None:
    assert require_instance("gpu-a", EVERYONE) == Instance(
        instance="gpu-a",
        last_scrape=_at(30),
        last_up=_at(15),
        up=False,
        last_result_error="HTTP 503 Service Unavailable",
        last_error_at=_at(30),
        last_error="HTTP 503 Service Unavailable",
        model="meta-llama/Llama-3.1-8B",
        engine="v1",
        engines=2,
        block_size=16,
        num_gpu_blocks=1000,
        prefix_unit="tokens",
        first_scrape=_at(0),
        scrapes=3,
        failed_scrapes=1,
    )
    assert [r.instance for r in list_instances(seen=EVERYONE)] == ["down", "gpu-a", "old"]
    never_up = require_instance("down", EVERYONE)
    assert (never_up.up, never_up.last_up, never_up.model, never_up.engines) == (
        False,
        None,
        None,
        None,
    )
    assert require_instance("old", EVERYONE).engine == "v0"
    with pytest.raises(NotFoundError, match=r"^no instance named 'nope'$"):
        require_instance("nope", EVERYONE)


def test_the_data_range_is_the_first_and_last_scrape(scraped: None) -> None:
    assert data_range("gpu-a", EVERYONE) == (_at(0), _at(30))
    assert data_range(None, EVERYONE) == (_at(0), _at(30))
    assert data_range("nope", EVERYONE) is None


def test_recent_scrapes_are_newest_first(scraped: None) -> None:
    scrapes = recent_scrapes("gpu-a", limit=2)
    assert [(s.ts, s.up, s.error) for s in scrapes] == [
        (_at(30), False, "HTTP 503 Service Unavailable"),
        (_at(15), True, None),
    ]
    assert scrapes[1].samples > 0 and scrapes[0].samples == 0


def test_gauges_at_the_last_successful_scrape_average_kv_and_sum_requests(
    scraped: None,
) -> None:
    assert latest_gauges("gpu-a") == LatestGauges(
        kv_usage=0.6,
        running=7.0,
        waiting=3.0,
        kv_usage_by_engine={"0": 0.5, "1": 0.7},
    )
    assert latest_gauges("down") == LatestGauges(None, None, None, {})
    fleet = latest_gauges_all(list_instances(seen=EVERYONE))
    assert fleet == {
        "gpu-a": GaugesNow(kv_usage=0.6, running=7.0, waiting=3.0),
        "old": GaugesNow(kv_usage=0.25, running=0.0, waiting=0.0),
    }
