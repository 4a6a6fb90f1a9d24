"""vLLM 0.32's admission rejections, from the held-out bodies
tests/fixtures/vllm-metrics/current-0.32-admission-{a,b}.prom (render_admission.py lists
the observations): stored by reason under engine "0" (the family has no `engine` label),
their increase in the fleet table, on the instance page's chart, and in the fleet API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.serving.fleet import fleet_table
from analytics.serving.instances import list_instances
from analytics.serving.series import Window
from ingest.parsers.vllm import EngineKind, parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from tests.people import grant
from tests.vllm_text import EngineState, v1_text

FIXTURES = Path(__file__).parents[2] / "fixtures" / "vllm-metrics"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(hours=1), 60)
QUERY = "start=2026-01-01T00:00:00Z&end=2026-01-01T00:05:00Z&bucket=1m"
PASSWORD = "admission-rejections-password"


def _body(which: str) -> str:
    return (FIXTURES / f"current-0.32-admission-{which}.prom").read_text()


@pytest.fixture
def served(lake: Path) -> None:
    """gpu-q: the two bodies 60 s apart; gpu-old: a release without the counter."""
    load_scrapes(
        [
            PendingScrape("gpu-q", T0 + timedelta(seconds=1 + 60 * i), scrape=parse_scrape(_body(w)))
            for i, w in enumerate("ab")
        ]
        + [PendingScrape("gpu-old", T0 + timedelta(seconds=1), scrape=parse_scrape(v1_text({"0": EngineState(0.5)})))]
    )  # fmt: skip


def test_the_counter_is_stored_by_reason_under_engine_0() -> None:
    scrape = parse_scrape(_body("a"))
    stored = {
        (metric, engine, value)
        for metric, engine, value in zip(scrape.metrics, scrape.engines, scrape.values, strict=True)
        if metric and metric.startswith("admission_rejections")
    }
    assert stored == {
        ("admission_rejections:max_num_queued_reqs", "0", 3.0),
        ("admission_rejections:max_num_queued_tokens", "0", 1.0),
    }
    assert scrape.engine_kind is EngineKind.V1


def test_the_fleet_row_has_the_increase_by_reason(served: None) -> None:
    rows = {r.instance: r for r in fleet_table(list_instances(seen=Seen.all()), WINDOW)}
    # The first scrape adds nothing; the second 10 - 3 at the request cap, 4 - 1 at tokens.
    assert rows["gpu-q"].admission_rejections == 10.0
    assert rows["gpu-q"].admission_rejections_by_reason == {
        "max_num_queued_reqs": 7.0,
        "max_num_queued_tokens": 3.0,
    }
    assert rows["gpu-old"].admission_rejections is None
    assert rows["gpu-old"].admission_rejections_by_reason == {}


@pytest.fixture
def admin(served: None, db: None, django_user_model: Any) -> Client:
    grant(django_user_model.objects.create_user("ops", password=PASSWORD), "admin")
    client = Client()
    assert client.login(username="ops", password=PASSWORD)
    return client


def test_the_fleet_view_and_api_show_them(admin: Client) -> None:
    page = admin.get(f"/serving/fleet/?{QUERY}").content.decode()
    assert "10 (max_num_queued_reqs 7, max_num_queued_tokens 3)" in page
    api = orjson.loads(admin.get(f"/api/serving/fleet?{QUERY}").content)
    rows = {r["instance"]: r for r in api["rows"]}
    assert rows["gpu-q"]["admission_rejections"] == 10.0
    assert rows["gpu-q"]["admission_rejections_by_reason"] == {
        "max_num_queued_reqs": 7.0,
        "max_num_queued_tokens": 3.0,
    }
    assert rows["gpu-old"]["admission_rejections"] is None


def test_the_instance_chart_stacks_them_by_reason(admin: Client) -> None:
    answer = admin.get(f"/serving/instance/charts/rejections.json?instance=gpu-q&{QUERY}")
    assert answer.status_code == 200, answer.content
    bars = {t["name"]: t for t in orjson.loads(answer.content)["data"]}
    assert sorted(bars) == ["max_num_queued_reqs", "max_num_queued_tokens"]
    # one bar each, in the minute of the second scrape (00:01)
    assert [y for y in bars["max_num_queued_reqs"]["y"] if y] == [7.0]
    assert [y for y in bars["max_num_queued_tokens"]["y"] if y] == [3.0]
