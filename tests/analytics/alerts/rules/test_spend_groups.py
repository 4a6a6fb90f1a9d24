"""The daily_spend rule by person and by team (params.group_by) over the telemetry of
tests/analytics/people/world.py: on 2026-03-10 ann (infra) spends $0.05 at 09:00 and
$0.0075 at 09:05, bob (web) $0.02 at 12:00; on 2026-03-11 ann spends $0.01 at 10:00."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from analytics.alerts.facts import Facts
from analytics.alerts.rules import Finding, RuleError, build_rule
from analytics.costs.models import Team
from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB


@pytest.fixture
def telemetry(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    world.build()
    Team.objects.create(name="web")


def _findings(
    at: str, threshold: float | None, **fields: Any
) -> dict[str, tuple[bool, float | None]]:
    rule = build_rule("daily_spend", threshold, fields.get("scope", {}), fields["params"], 0)
    moment = datetime.fromisoformat(at).replace(tzinfo=UTC)
    found: list[Finding] = rule.evaluate(Facts(moment, moment, rule.horizon()), moment)
    return {f.subject: (f.active, f.value) for f in found}


@pytest.mark.usefixtures("telemetry")
def test_a_person_over_the_threshold_fires_and_one_under_it_stays_quiet() -> None:
    by_person = {"group_by": "person"}
    assert _findings("2026-03-10T13:00:00", 0.03, params=by_person) == {
        ANN: (True, 0.0575),  # $0.05 + 2,000 x $3 + 100 x $15 per million
        BOB: (False, 0.02),
    }
    # At 09:02 only ann's first call was made; bob has not spent yet: no finding of his.
    assert _findings("2026-03-10T09:02:00", 0.03, params=by_person) == {ANN: (True, 0.05)}
    # The next day ann's $0.01 is under it: her finding resolves.
    assert _findings("2026-03-11T10:30:00", 0.03, params=by_person) == {ANN: (False, 0.01)}


@pytest.mark.usefixtures("telemetry")
def test_each_team_is_judged_on_its_own_spend() -> None:
    assert _findings("2026-03-10T13:00:00", 0.05, params={"group_by": "team"}) == {
        "infra": (True, 0.0575),
        "web": (False, 0.02),
    }
    scoped = _findings(
        "2026-03-10T13:00:00", 0.01, params={"group_by": "person"}, scope={"team": "web"}
    )
    assert scoped == {BOB: (True, 0.02)}  # web's calls: the events carrying its name


def test_group_by_takes_person_or_team_and_needs_a_threshold() -> None:
    with pytest.raises(RuleError, match="group_by must be person or team"):
        build_rule("daily_spend", 1.0, {}, {"group_by": "model"}, 0)
    with pytest.raises(RuleError, match="by person needs a threshold"):
        build_rule("daily_spend", None, {"team": "web"}, {"group_by": "person"}, 0)
