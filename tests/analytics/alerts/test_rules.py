"""Each rule kind against values computed by hand or by an independent path (the
error-rate API's own drift test, the cost report's own spend)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import orjson
import pytest

from analytics.alerts.facts import Facts
from analytics.alerts.rules import Finding, build_rule
from analytics.costs.models import ModelPrice, Team
from analytics.costs.report import build_daily_report
from analytics.runs import queries as run_queries
from analytics.serving.models import ScrapeTarget
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.vllm_scrape import load_scrapes
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.scenarios import T0

pytestmark = pytest.mark.django_db


def _evaluate(
    kind: str, threshold: float | None, at_minutes: float, **fields: object
) -> dict[str, Finding]:
    rule = build_rule(
        kind,
        threshold,
        fields.get("scope", {}),  # type: ignore[arg-type]
        fields.get("params", {}),  # type: ignore[arg-type]
        int(fields.get("for_seconds", 0)),  # type: ignore[call-overload]
    )
    at = T0 + timedelta(minutes=at_minutes)
    return {f.subject: f for f in rule.evaluate(Facts(at, at, rule.horizon()), at)}


def _ingest(events: list[dict[str, object]]) -> None:
    summary = ingest_body(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    assert summary.quarantined == 0


def _errors_run(run: str, fractions: list[float]) -> None:
    """One hour per fraction: 100 tool calls, the first fraction x 100 of them failing."""
    events: list[dict[str, object]] = []
    for hour, fraction in enumerate(fractions):
        for n in range(100):
            ts = T0 + timedelta(hours=hour, seconds=30 * n + 5)
            events.append(
                {
                    "ts": ts.isoformat(),
                    "run": run,
                    "agent": "w",
                    "event": "tool_call",
                    "id": f"{hour}-{n}",
                    "ok": n >= round(fraction * 100),
                }
            )
    _ingest(events)


def test_error_drift_fires_on_a_rising_rate_with_the_apis_own_slope(lake: Path) -> None:
    _errors_run("rising", [0.05 + 0.03 * h + (0.02 if h % 2 else 0) for h in range(12)])
    _errors_run("flat", [0.10 + (0.02 if h % 2 else 0) for h in range(12)])
    found = _evaluate("error_drift", None, 12 * 60 + 10, params={"window": "12h"})

    assert found["rising"].active and not found["flat"].active
    api = run_queries.error_rate(
        "rising", 3600, run_queries.TimeRange(T0, T0 + timedelta(hours=12))
    )["drift"]
    assert api["trend"] == "rising"
    assert found["rising"].value == pytest.approx(api["slope_per_hour"])
    # A minimum slope above the measured one keeps it quiet.
    steep = _evaluate("error_drift", 0.05, 12 * 60 + 10, params={"window": "12h"})
    assert not steep["rising"].active


def test_commit_decay_fires_when_the_last_hour_falls_below_a_fraction_of_before(
    lake: Path,
) -> None:
    # 4 h at a commit every 20 s (180/h), then an hour at one every 200 s (18/h).
    events: list[dict[str, object]] = []
    for n in range(4 * 180 + 18):
        seconds = 20 * n if n < 720 else 4 * 3600 + 200 * (n - 719)
        ts = (T0 + timedelta(seconds=seconds)).isoformat()
        events.append({"ts": ts, "run": "decaying", "agent": "w", "event": "commit", "id": f"c{n}"})
    for n in range(5 * 60):
        ts = (T0 + timedelta(minutes=n, seconds=7)).isoformat()
        events.append(
            {"ts": ts, "run": "decaying", "agent": "w", "event": "tool_call", "id": f"t{n}"}
        )
    _ingest(events)
    scenarios.load_fleet(
        "steady", commit_every_s=20, hours=5, gap_at=timedelta(hours=9), gap=timedelta(0)
    )
    found = _evaluate("commit_decay", 0.3, 5 * 60 - 1)
    assert found["decaying"].active and not found["steady"].active
    # In (3:59, 4:59]: two commits at the old pace (3:59:20, 3:59:40) and 17 at the new
    # (4:03:20 ... 4:56:40), against 180/h over the 3 hours before: 19/180.
    assert found["decaying"].value == pytest.approx(19 / 180)


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
    assert not _evaluate("target_down", None, 10.5)["gpu-quiet"].active
    late = _evaluate("target_down", None, 12)["gpu-quiet"]
    assert late.active and late.since == T0 + timedelta(minutes=10, seconds=45)
    assert late.summary == "not scraped for 2 min"  # 135 s


def test_daily_spend_matches_the_cost_report_and_uses_a_teams_budget(lake: Path) -> None:
    ModelPrice.objects.create(
        model="acme-coder",
        input_per_mtok=Decimal(2),
        output_per_mtok=Decimal(8),
        valid_from=date(2026, 1, 1),
    )
    Team.objects.create(name="search", run_patterns=["search-*"], daily_budget_usd=5)
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}  # $2.80 a call
    _ingest(
        [
            {
                "ts": (T0 + timedelta(hours=h)).isoformat(),
                "run": run,
                "agent": "a",
                "event": "llm_call",
                "model": "acme-coder",
                "usage": usage,
                "id": f"{run}-{h}",
            }
            for h in range(3)
            for run in ("search-1", "other")
        ]
    )
    # By 09:30 four calls ($11.20); by 10:30 all six.
    assert _evaluate("daily_spend", 12.0, 90)["all"].value == pytest.approx(11.2)
    total = _evaluate("daily_spend", 12.0, 150)["all"]
    report = build_daily_report(T0.date())
    assert total.active and total.value == pytest.approx(report["total_usd"]) == pytest.approx(16.8)
    team = _evaluate("daily_spend", None, 150, scope={"team": "search"})["search"]
    assert team.active and team.value == pytest.approx(8.4)
    assert "$5.00 budget" in team.summary


def test_scopes_pick_runs_by_name_and_team_and_instances_by_label(lake: Path) -> None:
    scenarios.load_flapping_kv("gpu-a")
    scenarios.load_flapping_kv("gpu-b")
    ScrapeTarget.objects.create(
        name="gpu-a", url="http://10.0.0.1/metrics", labels={"team": "infra"}
    )
    assert set(_evaluate("kv_usage", 0.95, 35)) == {"gpu-a", "gpu-b"}
    assert set(_evaluate("kv_usage", 0.95, 35, scope={"team": "infra"})) == {"gpu-a"}
    assert set(_evaluate("kv_usage", 0.95, 35, scope={"instance": "gpu-b"})) == {"gpu-b"}
