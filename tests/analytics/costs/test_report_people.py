"""The daily cost report by person and by team from telemetry (tests/analytics/people/
world.py): each person's calls of the day, and a team's spend including the calls whose
events carry its name."""

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from analytics.access.visibility import seen_for_team
from analytics.costs.models import Team
from analytics.costs.report import PersonCost, build_daily_report
from analytics.costs.report_formats import html_context, to_csv, to_html
from lib.access import Seen
from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB


@pytest.fixture
def telemetry(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    world.build()
    Team.objects.create(name="infra")
    Team.objects.create(name="web")


@pytest.mark.usefixtures("telemetry")
def test_the_report_has_a_row_per_person_most_expensive_first() -> None:
    report = build_daily_report(date(2026, 3, 10), seen=Seen.all())
    # ann: $0.05 logged + 2,000 x $3 + 100 x $15 per million = $0.0575; bob: $0.02 logged.
    assert report.by_person == [
        PersonCost(ANN, "infra", 0.0575, 2, 0),
        PersonCost(BOB, "web", 0.02, 1, 0),
    ]
    assert report.api_usd == 0.0775


@pytest.mark.usefixtures("telemetry")
def test_a_teams_spend_holds_the_calls_that_carry_its_name() -> None:
    report = build_daily_report(date(2026, 3, 10), seen=Seen.all())
    assert [(t.team, t.usd) for t in report.by_team] == [("infra", 0.0575), ("web", 0.02)]
    next_day = build_daily_report(date(2026, 3, 11), seen=Seen.all())
    assert [(t.team, t.usd) for t in next_day.by_team] == [("infra", 0.01), ("web", 0.0)]


@pytest.mark.usefixtures("telemetry")
def test_the_csv_has_a_person_row_each() -> None:
    lines = to_csv(build_daily_report(date(2026, 3, 10), seen=Seen.all())).splitlines()
    assert [line for line in lines if line.startswith("person,")] == [
        f"person,{ANN},2,,,,,0.057500,team infra",
        f"person,{BOB},1,,,,,0.020000,team web",
    ]


@pytest.mark.usefixtures("telemetry")
def test_a_team_member_sees_only_their_teams_people(db: None) -> None:
    infra = Team.objects.get(name="infra")
    report = build_daily_report(date(2026, 3, 10), seen=seen_for_team(infra))
    assert [p.person for p in report.by_person] == [ANN]


@pytest.mark.usefixtures("telemetry")
def test_the_html_shows_the_top_people() -> None:
    report = build_daily_report(date(2026, 3, 10), seen=Seen.all())
    # Bars in percent of the largest: $0.02 / $0.0575 = 34.8%.
    assert html_context(report)["person_bars"] == [
        {"label": ANN, "usd": 0.0575, "width": 100.0},
        {"label": BOB, "usd": 0.02, "width": 34.8},
    ]
    assert "<h3>Top people</h3>" in to_html(report)
