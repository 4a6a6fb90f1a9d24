"""The daily_spend rule against the cost report's own spend, and a team's budget."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from analytics.costs.models import ModelPrice, Team
from analytics.costs.report import build_daily_report
from lib.access import Seen
from tests.analytics.alerts.rules.findings import evaluate, ingest_events
from tests.analytics.alerts.scenarios import T0

pytestmark = pytest.mark.django_db


def test_daily_spend_matches_the_cost_report_and_uses_a_teams_budget(lake: Path) -> None:
    ModelPrice.objects.create(
        model="acme-coder",
        input_per_mtok=Decimal(2),
        output_per_mtok=Decimal(8),
        valid_from=date(2026, 1, 1),
    )
    Team.objects.create(name="search", run_patterns=["search-*"], daily_budget_usd=5)
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}  # $2.80 a call
    ingest_events(
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
    assert evaluate("daily_spend", 12.0, 90)["all"].value == pytest.approx(11.2)
    total = evaluate("daily_spend", 12.0, 150)["all"]
    report = build_daily_report(T0.date(), seen=Seen.all())
    assert total.active and total.value == pytest.approx(report.total_usd) == pytest.approx(16.8)
    team = evaluate("daily_spend", None, 150, scope={"team": "search"})["search"]
    assert team.active and team.value == pytest.approx(8.4)
    assert "$5.00 budget" in team.summary
