"""The instance rules against values computed by hand: when a quiet target counts as
down, and which instances a scope picks."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analytics.serving.models import ScrapeTarget
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.rules.findings import evaluate
from tests.analytics.alerts.scenarios import T0
from tests.vllm_text import EngineState, v1_text

pytestmark = pytest.mark.django_db


def test_a_target_not_scraped_for_three_intervals_is_down_from_then(lake: Path) -> None:
    target = ScrapeTarget.objects.create(name="gpu-quiet", url="http://10.0.0.1/metrics")
    ScrapeTarget.objects.filter(pk=target.pk).update(created_at=T0)
    load_scrapes(
        [
            scenarios._scrape(
                "gpu-quiet", T0 + timedelta(seconds=15 * i), scenarios.EngineState(0.3)
            )
            for i in range(40)
        ]
    )
    # Last scrape at 9:45; stale after 3 x 15 s, but at least a minute, on top of the
    # commit lag (60 s flush + 15 s tick): 9:45 + 60 s + 75 s = 12:00.
    assert not evaluate("target_down", None, 12)["gpu-quiet"].active
    late = evaluate("target_down", None, 13)["gpu-quiet"]
    assert late.active and late.since == T0 + timedelta(minutes=12)
    assert late.summary == "not scraped for 3 min"  # 195 s


def test_scopes_pick_runs_by_name_and_team_and_instances_by_label(lake: Path) -> None:
    scenarios.load_flapping_kv("gpu-a")
    scenarios.load_flapping_kv("gpu-b")
    ScrapeTarget.objects.create(
        name="gpu-a", url="http://10.0.0.1/metrics", labels={"team": "infra"}
    )
    assert set(evaluate("kv_usage", 0.95, 35)) == {"gpu-a", "gpu-b"}
    assert set(evaluate("kv_usage", 0.95, 35, scope={"team": "infra"})) == {"gpu-a"}
    assert set(evaluate("kv_usage", 0.95, 35, scope={"instance": "gpu-b"})) == {"gpu-b"}


def _kv_minute(instance: str, usages: list[list[float]]) -> None:
    """One scrape every 15 s from T0, each scrape's engines at the given usages."""
    load_scrapes(
        [
            PendingScrape(
                instance,
                T0 + timedelta(seconds=15 * i),
                scrape=parse_scrape(v1_text({str(n): EngineState(u) for n, u in enumerate(us)})),
            )
            for i, us in enumerate(usages)
        ]
    )


def test_kv_usage_judges_the_minutes_mean_not_each_scrape(lake: Path) -> None:
    # Mean over, one scrape under: (0.96 + 0.96 + 0.96 + 0.88) / 4 = 0.94 >= 0.9.
    _kv_minute("gpu-over", [[0.96], [0.96], [0.96], [0.88]])
    # Mean under, one scrape over: (0.95 + 0.85 + 0.85 + 0.85) / 4 = 0.875 < 0.9.
    _kv_minute("gpu-under", [[0.95], [0.85], [0.85], [0.85]])
    # Two engines: each scrape's usage is their mean, (0.99 + 0.79) / 2 = 0.89 < 0.9.
    _kv_minute("gpu-engines", [[0.99, 0.79]] * 4)
    found = evaluate("kv_usage", 0.9, 0.99)
    over, under, engines = found["gpu-over"], found["gpu-under"], found["gpu-engines"]
    assert over.active and over.value == pytest.approx(0.94) and over.since == T0
    assert over.summary == "KV-cache usage 94.0%, the minute's mean (threshold 90%)"
    assert not under.active and under.value == pytest.approx(0.875)
    assert not engines.active and engines.value == pytest.approx(0.89)
