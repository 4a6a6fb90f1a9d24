"""analytics/runs/listing.py (and list_request.py): the runs list's search, filters, sorts,
keyset pages and session labels, against the six runs of listing_world, listed by hand."""

from pathlib import Path
from typing import Any

import pytest

from analytics.access.visibility import seen_for_team
from analytics.costs.models import Team
from analytics.runs.list_request import read_request
from analytics.runs.listing import ListedRun, SessionName, list_runs_page
from lib.access import Seen
from lib.errors import ParameterError
from tests.analytics.runs.listing_world import (
    NOW,
    PROMPT_1,
    SESSION_1,
    SESSION_2,
    load_listing_world,
)

S1, S2 = SESSION_1, SESSION_2
# Every run, by each sort (ties by name, A to Z), written out from the world's table.
ORDERS = {
    "name": [S1, S2, "alpha", "beta", "delta", "gamma"],
    "-name": ["gamma", "delta", "beta", "alpha", S2, S1],
    "-last_seen": ["gamma", "beta", "alpha", "delta", S1, S2],
    "last_seen": [S2, S1, "delta", "alpha", "beta", "gamma"],
    "first_seen": [S2, S1, "delta", "alpha", "beta", "gamma"],
    "-events": ["alpha", "delta", S2, "beta", S1, "gamma"],
    "events": [S1, "gamma", S2, "beta", "alpha", "delta"],
    "-tokens": [S1, "alpha", S2, "delta", "beta", "gamma"],
    "tokens": ["beta", "gamma", "delta", S2, "alpha", S1],
    "-errors": [S2, "delta", S1, "alpha", "beta", "gamma"],
    "errors": [S1, "alpha", "beta", "gamma", "delta", S2],
    "-commits": ["alpha", "beta", "delta", "gamma", S1, S2],
    "commits": [S1, S2, "alpha", "beta", "delta", "gamma"],
    "agents": [S1, "gamma", S2, "alpha", "beta", "delta"],
    "-agents": [S2, "alpha", "beta", "delta", S1, "gamma"],
    "source": ["alpha", "beta", "delta", "gamma", S1, S2],
    "-source": [S2, S1, "alpha", "beta", "delta", "gamma"],
}


@pytest.fixture
def world(lake: Path) -> None:
    load_listing_world()


EVERYTHING = Seen.all()


def names(params: dict[str, Any], seen: Seen = EVERYTHING, team: Seen | None = None) -> list[str]:
    return [r.run for r in list_runs_page(read_request(params), seen, team=team, now=NOW).runs]


def every_page(params: dict[str, Any]) -> list[str]:
    """The runs of every page, following each page's cursor to the last."""
    listed: list[str] = []
    cursor = None
    for _ in range(10):
        page = list_runs_page(read_request({**params, "cursor": cursor}), now=NOW)
        listed += [r.run for r in page.runs]
        if page.next is None:
            return listed
        cursor = page.next
    raise AssertionError("the pages never ended")


def by_name(**params: Any) -> dict[str, ListedRun]:
    return {r.run: r for r in list_runs_page(read_request(params), now=NOW).runs}


def test_the_list_holds_each_runs_totals_latest_first(world: None) -> None:
    runs = by_name()
    assert list(runs) == ORDERS["-last_seen"]
    figures = {
        run: (r.agents, r.events, r.commits, r.errors, r.tokens, r.source_kind)
        for run, r in runs.items()
    }
    assert figures == {
        "alpha": (2, 5, 1, 0, 150, "agent-events"),
        "beta": (2, 4, 1, 0, 0, "agent-events"),
        "gamma": (1, 2, 1, 0, 0, "agent-events"),
        "delta": (2, 5, 1, 1, 15, "agent-events"),
        S1: (1, 2, 0, 0, 1200, "claude-code"),
        S2: (2, 4, 0, 2, 75, "codex"),
    }
    assert runs["beta"].first_ts.isoformat() == "2026-01-14T11:00:00+00:00"
    assert runs["beta"].last_ts.isoformat() == "2026-01-14T12:30:00+00:00"


def test_each_listed_run_carries_its_status(world: None) -> None:
    states = {run: r.status.state.value for run, r in by_name().items() if r.status}
    assert states == {
        "alpha": "finished",
        "beta": "stalled",
        "gamma": "active",
        "delta": "idle",
        S1: "idle",
        S2: "idle",
    }


@pytest.mark.parametrize("sort", sorted(ORDERS))
def test_every_sort_orders_both_ways_with_ties_by_name(world: None, sort: str) -> None:
    assert names({"sort": sort}) == ORDERS[sort]


@pytest.mark.parametrize("sort", sorted(ORDERS))
@pytest.mark.parametrize("limit", [1, 2, 4])
def test_keyset_pages_visit_every_run_exactly_once(world: None, sort: str, limit: int) -> None:
    assert every_page({"sort": sort, "limit": limit}) == ORDERS[sort]


def test_the_last_page_has_no_next_cursor(world: None) -> None:
    assert list_runs_page(read_request({"limit": 6}), now=NOW).next is None
    assert list_runs_page(read_request({"limit": 5}), now=NOW).next is not None


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("SESSION", [S1, S2]),  # the name, any case
        ("ph", ["alpha"]),
        ("login", [S1]),  # the first prompt
        ("fleetscope", [S1]),  # the project
        ("invoices", [S2]),  # the branch, any case
        ("/srv/", [S2]),  # the folder
        ("%", []),  # a LIKE wildcard is plain text
        ("a_", []),
        ("nothing-like-it", []),
    ],
)
def test_the_search_matches_names_and_labels(world: None, q: str, expected: list[str]) -> None:
    assert names({"q": q}) == expected


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status": "finished"}, ["alpha"]),
        ({"status": "stalled"}, ["beta"]),
        ({"status": "active"}, ["gamma"]),
        ({"status": "idle"}, ["delta", S1, S2]),
        ({"source": "codex"}, [S2]),
        ({"source": "claude-code"}, [S1]),
        ({"model": "claude-x"}, ["delta"]),
        ({"model": "gpt-5.2"}, ["alpha"]),
        ({"start": "2026-01-14T12:00:00Z"}, ["gamma", "beta"]),
        ({"end": "2026-01-14T08:00:00Z"}, [S2]),
        ({"start": "2026-01-14T08:15:00Z", "end": "2026-01-14T10:00:00Z"}, ["delta", S1]),
        ({"status": "idle", "source": "agent-events"}, ["delta"]),
        ({"status": "idle", "sort": "name", "limit": 1}, [S1]),
    ],
)
def test_each_filter_keeps_its_runs(
    world: None, params: dict[str, str], expected: list[str]
) -> None:
    assert names(params) == expected


def test_the_team_filter_takes_its_run_patterns_and_its_peoples_runs(world: None, db: None) -> None:
    core = Team.objects.create(name="core", run_patterns=["al*"])
    ops = Team.objects.create(name="ops", run_patterns=["delta", "gamma"])
    # alpha by the pattern; session 2 because an event of it names the team `core`.
    assert names({}, team=seen_for_team(core)) == ["alpha", S2]
    assert names({"sort": "name"}, team=seen_for_team(ops)) == ["delta", "gamma"]
    # A team filter narrows what the reader sees, never widens it.
    reader = Seen(everything=False, runs=frozenset({"gamma", "beta"}))
    assert names({}, seen=reader, team=seen_for_team(ops)) == ["gamma"]
    assert names({}, seen=reader) == ["gamma", "beta"]


def test_sessions_are_labelled_by_project_branch_and_first_words(world: None) -> None:
    runs = by_name()
    assert runs[S1].label == "fleetscope · main — Fix the flaky login test in the dashboard …"
    assert runs[S2].label == "billing · feat/Invoices — Add CSV export"
    assert runs[S1].name == SessionName("fleetscope", "/home/ana/fleetscope", "main", PROMPT_1)
    assert runs["alpha"].label is None and runs["alpha"].name is None


@pytest.mark.parametrize(
    ("name", "label"),
    [
        (SessionName(None, None, None, "Add CSV export"), "Add CSV export"),
        (SessionName("p", None, None, None), "p"),
        (SessionName(None, "/x", "dev", None), "dev"),
        (SessionName(None, "/x", None, "  "), None),
        (SessionName("p", None, "b", "one two three four five six seven eight"), "p · b — one two three four five six seven eight"),
    ],
)  # fmt: skip
def test_a_label_says_what_is_known(name: SessionName, label: str | None) -> None:
    assert name.text == label


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sort": "colour"}, "sort must be one of name, -name, source"),
        ({"status": "asleep"}, "status must be one of finished, stalled, active, idle"),
        ({"limit": "0"}, "limit must be between 1 and 1000"),
        ({"limit": "1001"}, "limit must be between 1 and 1000"),
        ({"limit": "ten"}, "limit 'ten' is not an integer"),
        ({"cursor": "not-a-cursor"}, "cursor is not one this list gave"),
        ({"q": "a\x00b"}, "q holds a control character"),
        ({"q": "x" * 201}, "q is longer than 200 characters"),
        ({"model": "m\n"}, "model holds a control character"),
        ({"start": "2026-01-15T00:00:00Z", "end": "2026-01-14T00:00:00Z"}, "start must be before end"),
        ({"start": "yesterday"}, "start must be an RFC 3339 time"),
    ],
)  # fmt: skip
def test_a_bad_parameter_is_a_one_line_reason(params: dict[str, str], message: str) -> None:
    with pytest.raises(ParameterError, match=message.replace("(", r"\(")):
        read_request(params)


def test_a_cursor_of_another_sort_is_refused(world: None) -> None:
    cursor = list_runs_page(read_request({"sort": "events", "limit": 2}), now=NOW).next
    assert cursor is not None
    assert names({"sort": "events", "cursor": cursor}) == ORDERS["events"][2:]
    with pytest.raises(ParameterError, match="cursor is not one this list gave"):
        read_request({"sort": "-events", "cursor": cursor})
