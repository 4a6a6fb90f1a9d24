"""The fleet table per engine, for instances with several data-parallel engines, an
instance that never answered, and a V0 instance (hit rate from its gauge)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from analytics.serving.fleet import fleet_table
from analytics.serving.instances import list_instances
from analytics.serving.series import Window
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from tests.vllm_text import EngineState, v0_text, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(hours=1), 60)


def test_each_engine_has_its_row_and_a_down_instance_an_empty_one(lake: Path) -> None:
    e0 = [EngineState(0.2, running=2, preemptions=1), EngineState(0.4, running=4, preemptions=4)]
    e1 = [EngineState(0.6, running=1, preemptions=0), EngineState(0.8, running=3, preemptions=1)]
    load_scrapes(
        [
            PendingScrape(
                "gpu-a",
                T0 + timedelta(seconds=15 * i),
                scrape=parse_scrape(v1_text({"0": e0[i], "1": e1[i]})),
            )
            for i in range(2)
        ]
        + [PendingScrape("gpu-down", T0, error="connection refused")]
        + [
            PendingScrape(
                "gpu-v0",
                T0 + timedelta(seconds=15 * i),
                scrape=parse_scrape(v0_text(EngineState(0.5), hit_rate=rate)),
            )
            for i, rate in enumerate((0.2, 0.4))
        ]
    )
    rows = fleet_table(list_instances(seen=Seen.all()), WINDOW)
    assert [(r.instance, r.engine) for r in rows] == [
        ("gpu-a", "0"),
        ("gpu-a", "1"),
        ("gpu-down", None),
        ("gpu-v0", "0"),
    ]
    a0, a1, down, v0 = rows
    # engine 0: KV 0.2 and 0.4, running 2 and 4, preemptions 1 -> 4; engine 1: 0.6 0.8, 1 3, 0 -> 1
    assert (a0.kv_usage, a0.running, a0.preemptions) == ((0.2 + 0.4) / 2, 3.0, 3.0)
    assert (a1.kv_usage, a1.running, a1.preemptions) == ((0.6 + 0.8) / 2, 2.0, 1.0)
    assert (down.up, down.kv_usage, down.model) == (False, None, None)
    # V0 reports a hit-rate gauge: its mean (0.2 + 0.4) / 2
    assert v0.prefix_hit_rate == (0.2 + 0.4) / 2
    assert v0.spec_acceptance_rate is None and v0.sleep_state is None
