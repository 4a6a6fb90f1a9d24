"""analytics/access/visibility.py: what a user or a team sees, from the teams' run and
source patterns, the team names telemetry carries and scrape targets; admins and all-teams users see everything."""

from typing import Any

import orjson
import pytest

from analytics.access.visibility import seen_for_team, seen_for_user
from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget
from ingest.pipelines.agent_events import ingest_body as ingest_events
from ingest.pipelines.requests import ingest_body as ingest_requests
from tests.analytics.people.world import insert_events
from tests.people import grant


def _lines(*rows: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


@pytest.fixture
def fleet(lake: object, db: None) -> None:
    ev = {"ts": "2026-01-14T10:00:00Z", "agent": "w", "event": "tool_call"}
    ingest_events(_lines({**ev, "run": "a-1"}, {**ev, "run": "b-1"}), source="/logs/infra/x.jsonl")
    ingest_events(_lines({**ev, "run": "c-1"}), source="/logs/web/y.jsonl")
    ingest_requests(
        _lines({"ts": "2026-01-14T10:00:00Z", "request_id": "r1", "run": "a-9", "prompt": "hi"}),
        "test",
    )


def test_a_team_sees_the_runs_its_patterns_match_from_events_and_from_requests(
    fleet: None,
) -> None:
    team = Team.objects.create(name="a", run_patterns=["a-*"])
    ScrapeTarget.objects.create(name="gpu-a", url="http://gpu-a/metrics", team=team)
    seen = seen_for_team(team)
    assert seen.runs == {"a-1", "a-9"}  # a-9 only in a request record
    assert seen.sees_run("a-new") and not seen.sees_run("b-1")
    assert seen.instances == {"gpu-a"}
    assert seen.params() == {"seen_runs": ["a-1", "a-9"], "seen_instances": ["gpu-a"]}


def test_a_source_pattern_brings_in_every_run_logged_from_those_files(fleet: None) -> None:
    team = Team.objects.create(name="infra", source_patterns=["/logs/infra/*"])
    assert seen_for_team(team).runs == {"a-1", "b-1"}


def test_users_see_their_teams_admins_everything_and_a_user_in_no_team_nothing(
    fleet: None, django_user_model: Any
) -> None:
    a = Team.objects.create(name="a", run_patterns=["a-*"])
    c = Team.objects.create(name="c", run_patterns=["c-*"])
    both = grant(django_user_model.objects.create_user("both"), "viewer", teams=(a, c))
    nobody = grant(django_user_model.objects.create_user("nobody"), "editor")
    wide = grant(django_user_model.objects.create_user("wide"), "viewer", all_teams=True)
    boss = grant(django_user_model.objects.create_user("boss"), "admin")
    root = django_user_model.objects.create_superuser("root")
    plain = django_user_model.objects.create_user("plain")  # no Access row at all
    assert seen_for_user(both).runs == {"a-1", "a-9", "c-1"}
    assert seen_for_user(both).team_names == {"a", "c"}
    for user in (nobody, plain):
        seen = seen_for_user(user)
        assert not seen.everything and seen.runs == frozenset() and not seen.sees_run("a-1")
    for user in (wide, boss, root):
        assert seen_for_user(user).everything
    assert seen_for_team(None).everything  # a rule or report of no team: the whole fleet


def test_a_team_sees_the_runs_whose_events_carry_its_name(fleet: None) -> None:
    ev = {"ts": "2026-01-14T11:00:00Z", "event": "user_prompt"}
    insert_events({**ev, "run": "s-9", "team": "infra"}, {**ev, "run": "s-8", "team": "web"})
    infra = Team.objects.create(name="infra", run_patterns=["a-*"])
    assert seen_for_team(infra).runs == {"a-1", "a-9", "s-9"}
    assert seen_for_team(Team.objects.create(name="ops")).runs == set()
