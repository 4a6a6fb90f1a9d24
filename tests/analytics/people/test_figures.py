"""People and teams from telemetry: per person, team and UTC day, figures worked out by
hand from tests/analytics/people/world.py (its docstring has the numbers)."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from analytics.people.figures import read_people, read_person
from lib.access import Seen
from lib.errors import NotFoundError
from lib.window import TimeRange
from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB

WINDOW = TimeRange(datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 12, tzinfo=UTC))


@pytest.fixture
def telemetry(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    world.build()


def _figures(f: Any) -> tuple[Any, ...]:
    return (
        f.sessions,
        f.active_seconds,
        f.cost_usd,
        f.input_tokens,
        f.output_tokens,
        f.commits,
        f.lines_added,
        f.lines_removed,
        f.edit_acceptance,
    )


@pytest.mark.usefixtures("telemetry")
def test_each_person_has_their_sessions_time_cost_tokens_commits_lines_and_acceptance() -> None:
    people = read_people(WINDOW, Seen.all())
    assert [(p.person, p.team) for p in people.people] == [(ANN, "infra"), (BOB, "web")]
    ann, bob = people.people
    # ann: 3 sessions (s-ann-3 from metrics only); active 30 + 60 + 20 (restart) + 30 + 10;
    # $0.05 + $0.0075 (priced) + $0.01; commit.count ignored (s-ann-1 logged its commit).
    assert _figures(ann) == (3, 150.0, pytest.approx(0.0675), 4000, 300, 1, 15, 3, 0.75)
    # bob: his commit comes from the metric (no commit event in s-bob-1).
    assert _figures(bob) == (1, 45.0, pytest.approx(0.02), 500, 50, 1, 0, 0, None)


@pytest.mark.usefixtures("telemetry")
def test_a_person_has_one_row_per_utc_day_with_figures() -> None:
    ann = read_people(WINDOW, Seen.all()).people[0]
    assert [d.date for d in ann.days] == ["2026-03-10", "2026-03-11"]
    assert _figures(ann.days[0]) == (1, 140.0, pytest.approx(0.0575), 3000, 300, 1, 15, 3, 0.75)
    assert _figures(ann.days[1]) == (2, 10.0, pytest.approx(0.01), 1000, 0, 0, 0, 0, None)


@pytest.mark.usefixtures("telemetry")
def test_teams_add_up_their_people() -> None:
    teams = read_people(WINDOW, Seen.all()).teams
    assert [(t.team, t.people, t.sessions, t.input_tokens) for t in teams] == [
        ("infra", 1, 3, 4000),
        ("web", 1, 1, 500),
    ]
    assert [d.date for d in teams[1].days] == ["2026-03-10"]


@pytest.mark.usefixtures("telemetry")
def test_a_cumulative_series_is_differenced_against_its_point_before_the_window() -> None:
    # From 09:15: 20 at 09:20 (a restart counts from 0) and 50 - 20 at 09:30.
    late = TimeRange(
        datetime(2026, 3, 10, 9, 15, tzinfo=UTC), datetime(2026, 3, 10, 10, tzinfo=UTC)
    )
    (ann,) = read_people(late, Seen.all()).people
    assert (ann.active_seconds, ann.lines_added, ann.sessions, ann.cost_usd) == (50.0, 5, 1, 0.0)


@pytest.mark.usefixtures("telemetry")
def test_the_team_filter_keeps_one_teams_people() -> None:
    assert [p.person for p in read_people(WINDOW, Seen.all(), team="web").people] == [BOB]


@pytest.mark.usefixtures("telemetry")
def test_an_open_window_reads_from_the_first_to_the_last_telemetry() -> None:
    people = read_people(TimeRange(), Seen.all())
    assert people.start == datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    assert people.end == datetime(2026, 3, 11, 11, 0, 0, 1, tzinfo=UTC)
    assert [p.sessions for p in people.people] == [3, 1]


@pytest.mark.usefixtures("telemetry")
def test_a_seen_of_one_team_sees_its_people_only() -> None:
    infra = Seen(everything=False, team_names=frozenset({"infra"}), runs=frozenset({"s-ann-1"}))
    (ann,) = read_people(WINDOW, infra).people
    # s-ann-2's events are not seen; s-ann-3 is seen through its team's metrics.
    assert (ann.person, ann.sessions, ann.input_tokens, ann.active_seconds) == (ANN, 2, 3000, 150.0)
    assert read_people(WINDOW, Seen.nothing()).people == []


@pytest.mark.usefixtures("telemetry")
def test_a_persons_sessions_are_listed_latest_first_with_their_cost() -> None:
    detail = read_person(ANN, WINDOW, Seen.all())
    assert [(s.session, s.events, s.input_tokens, s.commits) for s in detail.sessions] == [
        ("s-ann-3", 0, 0, 0),
        ("s-ann-2", 1, 1000, 0),
        ("s-ann-1", 3, 3000, 1),
    ]
    assert [s.cost_usd for s in detail.sessions] == [0.0, 0.01, pytest.approx(0.0575)]
    assert (detail.person.team, detail.person.sessions, detail.person.commits) == ("infra", 3, 1)


@pytest.mark.usefixtures("telemetry")
def test_a_person_without_seen_telemetry_is_not_found() -> None:
    with pytest.raises(NotFoundError):
        read_person("eve@example.com", WINDOW, Seen.all())
    with pytest.raises(NotFoundError):
        read_person(BOB, WINDOW, Seen(everything=False, team_names=frozenset({"infra"})))


def test_a_commit_counts_once_per_sha_and_a_failed_one_not_at_all(
    settings: Any, tmp_path: Path, lake: Path, db: None
) -> None:
    settings.DATA_DIR = tmp_path
    commit = {"run": "s-cy-1", "event": "commit", "person": "cy@example.com", "team": "infra"}
    world.insert_events(
        {**commit, "ts": "2026-03-10T09:00:00Z", "commit_sha": "aaa"},
        {**commit, "ts": "2026-03-10T09:01:00Z", "commit_sha": "aaa"},  # logged twice
        {**commit, "ts": "2026-03-10T09:02:00Z", "commit_sha": "bbb", "ok": False},  # failed
        {**commit, "ts": "2026-03-10T09:03:00Z"},  # no sha: counted as logged
        {**commit, "run": "s-cy-2", "ts": "2026-03-10T09:04:00Z", "commit_sha": "aaa"},
    )
    [cy] = read_people(WINDOW, Seen.all()).people
    assert cy.commits == 3  # aaa in s-cy-1, the one without a sha, aaa in s-cy-2
    assert sorted(
        (s.session, s.commits) for s in read_person("cy@example.com", WINDOW, Seen.all()).sessions
    ) == [
        ("s-cy-1", 2),
        ("s-cy-2", 1),
    ]
