"""The instance rules against values computed by hand: when a quiet target counts as
down, and which instances a scope picks."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analytics.serving.models import ScrapeTarget
from ingest.pipelines.vllm_scrape import load_scrapes
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.rules.findings import evaluate
from tests.analytics.alerts.scenarios import T0

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
    # Last scrape at 9:45; stale after 3 x 15 s, but at least a minute.
    assert not evaluate("target_down", None, 10.5)["gpu-quiet"].active
    late = evaluate("target_down", None, 12)["gpu-quiet"]
    assert late.active and late.since == T0 + timedelta(minutes=10, seconds=45)
    assert late.summary == "not scraped for 2 min"  # 135 s


def test_scopes_pick_runs_by_name_and_team_and_instances_by_label(lake: Path) -> None:
    scenarios.load_flapping_kv("gpu-a")
    scenarios.load_flapping_kv("gpu-b")
    ScrapeTarget.objects.create(
        name="gpu-a", url="http://10.0.0.1/metrics", labels={"team": "infra"}
    )
    assert set(evaluate("kv_usage", 0.95, 35)) == {"gpu-a", "gpu-b"}
    assert set(evaluate("kv_usage", 0.95, 35, scope={"team": "infra"})) == {"gpu-a"}
    assert set(evaluate("kv_usage", 0.95, 35, scope={"instance": "gpu-b"})) == {"gpu-b"}
