"""The endpoints of every vLLM signal through the test client: spec decode, SLO
attainment, the fleet table, latency by phase with means, and `model=` on each."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.analytics.serving.test_release_signals import FIXTURES, T0

WINDOW = "start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z"


@pytest.fixture
def scraped(lake: Path, db: None) -> None:
    load_scrapes(
        [
            PendingScrape(
                "gpu-a",
                T0 + timedelta(seconds=60 * i),
                scrape=parse_scrape((FIXTURES / name).read_text()),
            )
            for i, name in enumerate(("current-0.11-a.prom", "current-0.11-b.prom"))
        ]
    )


def _get(path: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = Client().get(f"/api/serving/{path}", headers=headers)
    return response.status_code, response.json()


def test_the_new_endpoints_need_authentication(scraped: None) -> None:
    for path in ("spec-decode", "slo?target_seconds=1", "fleet"):
        assert _get(path, {})[0] == 401, path


def test_spec_decode_answers_rates_and_positions(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(f"spec-decode?instance=gpu-a&bucket=1h&{WINDOW}", auth_headers)
    assert status == 200, body
    # 50 drafts, 150 draft tokens, 60 accepted: 60 / 150 and 1 + 60 / 50
    overall = {
        "drafts": 50.0,
        "draft_tokens": 150.0,
        "accepted_tokens": 60.0,
        "acceptance_rate": 0.4,
        "mean_acceptance_length": 2.2,
    }
    assert body["overall"] == overall
    assert body["points"] == [{**overall, "t": "2026-01-01T00:00:00Z"}]
    assert body["by_position"] == [
        {"position": 0, "accepted_tokens": 35.0, "acceptance_rate": 0.7},
        {"position": 1, "accepted_tokens": 20.0, "acceptance_rate": 0.4},
        {"position": 2, "accepted_tokens": 5.0, "acceptance_rate": 0.1},
    ]


def test_slo_answers_attainment_and_whether_the_target_is_a_bound(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    # TTFT 0.02 0.3 0.45 0.9 2.0 0.1 0.1: 5 of 7 at or under 0.5
    status, body = _get(
        f"slo?instance=gpu-a&metric=ttft&target_seconds=0.5&bucket=1h&{WINDOW}", auth_headers
    )
    assert status == 200, body
    assert body["overall"] == {"attained": 5.0, "total": 7.0, "ratio": 5 / 7}
    assert body["points"] == [
        {"t": "2026-01-01T00:00:00Z", "attained": 5.0, "total": 7.0, "ratio": 5 / 7}
    ]
    assert (body["target_is_bucket_bound"], body["note"]) == (True, None)
    # 0.6 is no TTFT bound: the 5 under 0.5 are counted, and the note says so
    status, body = _get(f"slo?instance=gpu-a&metric=ttft&target_seconds=0.6&{WINDOW}", auth_headers)
    assert (body["target_is_bucket_bound"], body["bound_seconds"]) == (False, 0.5)
    assert "0.6 s is not a bucket bound" in body["note"]


def test_bad_names_are_404_and_bad_parameters_422(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    assert _get("spec-decode?instance=nope", auth_headers) == (
        404,
        {"detail": "no instance named 'nope'"},
    )
    assert _get("slo?instance=nope&target_seconds=1", auth_headers)[0] == 404
    for path in (
        "slo?instance=gpu-a&target_seconds=0",
        "slo?instance=gpu-a&target_seconds=-1",
        "slo?instance=gpu-a",
        "slo?instance=gpu-a&target_seconds=1&metric=p99",
        "latency?instance=gpu-a&metric=speed",
        "fleet?start=soon",
    ):
        status, body = _get(path, auth_headers)
        assert status == 422 and "detail" in body, path


def test_fleet_answers_one_row_per_instance_and_engine(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(f"fleet?{WINDOW}", auth_headers)
    assert status == 200, body
    (row,) = body["rows"]
    assert row == {
        "instance": "gpu-a",
        "engine": "0",
        "model": "Qwen/Qwen3-8B",
        "up": True,
        "last_scrape": "2026-01-01T00:01:00Z",
        "kv_usage": 0.5,
        "running": 4.0,
        "waiting": 3.0,
        "waiting_by_reason": {"capacity": 2.5, "deferred": 0.5},
        "preemptions": 2.0,
        "prefix_hit_rate": 0.5,
        "ttft_p95_seconds": pytest.approx(1.975),
        "spec_acceptance_rate": 0.4,
        "sleep_state": "awake",
        "admission_rejections": None,  # a 0.11 body: no such counter
        "admission_rejections_by_reason": {},
    }
    # without a window: the hour up to the newest scrape
    status, body = _get("fleet", auth_headers)
    assert (status, [r["instance"] for r in body["rows"]]) == (200, ["gpu-a"])
    assert body["end"] == "2026-01-01T00:02:00Z"
    assert _get(f"fleet?model=other&{WINDOW}", auth_headers)[1]["rows"] == []


def test_latency_of_a_phase_with_its_mean_and_a_model_filter(
    scraped: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(f"latency?metric=e2e&bucket=1h&{WINDOW}", auth_headers)
    assert status == 200, body
    # e2e 0.5 1 3 8 16 31 70: mean 129.5 / 7
    assert body["overall_mean"] == pytest.approx(18.5)
    assert body["points"][0]["mean_seconds"] == pytest.approx(18.5)
    status, body = _get(f"latency?metric=e2e&model=other&{WINDOW}", auth_headers)
    assert (body["points"], body["overall"], body["overall_mean"]) == ([], None, None)
