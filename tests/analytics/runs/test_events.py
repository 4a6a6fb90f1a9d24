"""The events explorer's query against a hand-made run (tests/analytics/runs/events_world.py):
each filter's rows as listed by hand, an agent's subtree, keyset paging that covers every
event once in both orders across ties on ts, the text search's escaping, USD per call."""

from pathlib import Path

import pytest

from analytics.runs.events import events_page
from analytics.runs.events_filters import EventFilter, Order, read_filter
from lib.access import Seen
from lib.errors import NotFoundError, ParameterError
from tests.analytics.runs.events_world import E5_USD, EVENTS, RUN, load_world

OLDEST = list(EVENTS)  # E1..E15: ties on ts keep the order they were written in


@pytest.fixture
def world(lake: Path, db: None) -> None:
    load_world()


def _numbers(flt: EventFilter, limit: int = 1000) -> list[str]:
    """The events' numbers (E1..) in the page's order, matched on (ts, agent, event)."""
    page = events_page(RUN, flt, limit=limit)
    found = []
    for e in page.events:
        stamp = e.ts.strftime("%Y-%m-%dT%H:%M:%SZ")
        [number] = [
            n for n, w in EVENTS.items()
            if (w["ts"], w["agent"], w["event"]) == (stamp, e.agent, e.event)
            and (w.get("tool"), w.get("model")) == (e.fields["tool"], e.fields["model"])
        ]  # fmt: skip
        found.append(number)
    return found


def test_every_event_newest_first_by_default(world: None) -> None:
    assert _numbers(EventFilter()) == OLDEST[::-1]


def test_oldest_first(world: None) -> None:
    assert _numbers(EventFilter(order=Order.OLDEST)) == OLDEST


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kind": "llm_call"}, ["E5", "E10", "E14"]),
        ({"ok": "false"}, ["E6", "E7", "E15"]),
        ({"ok": "true"}, ["E5", "E8", "E9", "E10", "E12", "E14"]),
        ({"agent": "w1"}, ["E3", "E5", "E6", "E7", "E10"]),
        ({"agent": "w2", "subtree": "1"}, ["E4", "E8", "E9", "E12", "E13"]),
        ({"agent": "p1", "subtree": "true"}, ["E2", "E3", "E5", "E6", "E7", "E10", "E11"]),
        ({"agent": "w2"}, ["E4", "E8", "E9"]),
        ({"model": "acme-coder"}, ["E5", "E14"]),
        ({"tool": "rg"}, ["E8", "E12"]),
        (
            {"start": "2026-02-10T09:01:00Z", "end": "2026-02-10T09:04:00Z"},
            ["E5", "E6", "E7", "E8"],
        ),
        ({"q": "hyperlink"}, ["E9"]),
        ({"q": "SCRIPT"}, ["E15"]),
        ({"q": "%"}, ["E7"]),
        ({"q": "_"}, ["E11"]),
        ({"q": "\\"}, []),
        ({"kind": "tool_call", "ok": "false", "agent": "w1"}, ["E6"]),
    ],
)
def test_each_filter_finds_the_rows_listed_by_hand(
    world: None, params: dict[str, str], expected: list[str]
) -> None:
    assert _numbers(read_filter({**params, "order": "oldest"})) == expected


@pytest.mark.parametrize("order", [Order.NEWEST, Order.OLDEST])
@pytest.mark.parametrize("limit", [1, 2, 4])
def test_keyset_pages_cover_every_event_once(world: None, order: Order, limit: int) -> None:
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        page = events_page(RUN, EventFilter(order=order), limit=limit, cursor=cursor)
        seen += [e.row_id for e in page.events]
        pages += 1
        if page.next is None:
            break
        cursor = page.next
    whole = [e.row_id for e in events_page(RUN, EventFilter(order=order), limit=100).events]
    assert seen == whole
    assert len(set(seen)) == len(EVENTS) == 15
    assert pages == -(-15 // limit)


def test_a_call_carries_its_usd_and_an_unpriced_one_none(world: None) -> None:
    page = events_page(RUN, read_filter({"kind": "llm_call", "order": "oldest"}))
    e5, e10, e14 = (e.usd for e in page.events)
    assert e5 == pytest.approx(E5_USD) == pytest.approx(0.0111)
    assert (e10, e14) == (None, 0.5)  # no price: None, never 0; a logged cost wins
    assert [e.usd for e in events_page(RUN, read_filter({"kind": "tool_call"})).events] == [
        None, None, None
    ]  # fmt: skip


def test_a_whole_record(world: None) -> None:
    [commit] = events_page(RUN, read_filter({"kind": "commit"})).events
    assert commit.subject == '=HYPERLINK("http://evil")'
    assert (commit.fields["commit_sha"], commit.fields["commit_files"]) == ("abc123", 2)
    assert (commit.fields["source"], commit.fields["source_line"]) == ("explore.jsonl", 9)
    assert commit.message == commit.subject
    first = events_page(RUN, read_filter({"kind": "llm_call", "order": "oldest"}), limit=1)
    assert first.events[0].attrs == {"temperature": 0.2}
    assert (first.events[0].fields["input_tokens"], first.events[0].fields["output_tokens"]) == (
        1000, 500
    )  # fmt: skip
    [error] = events_page(RUN, read_filter({"agent": "w1", "kind": "error"})).events
    assert (error.failed, error.message, error.attrs) == (True, "E0308 100% off", None)
    [handoff] = events_page(RUN, read_filter({"kind": "handoff"})).events
    assert handoff.message == "parsed a_b fully"


def test_an_unseen_run_is_not_found(world: None) -> None:
    with pytest.raises(NotFoundError):
        events_page(RUN, EventFilter(), Seen(everything=False, runs=frozenset({"other"})))
    with pytest.raises(NotFoundError):
        events_page("nope", EventFilter())


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ok": "maybe"}, "ok must be true or false"),
        ({"order": "sideways"}, "order must be newest or oldest"),
        ({"subtree": "1"}, "subtree needs an agent"),
        ({"start": "yesterday"}, "start must be an RFC 3339 time, got 'yesterday'"),
        (
            {"start": "2026-02-10T10:00:00Z", "end": "2026-02-10T09:00:00Z"},
            "start must be before end",
        ),
    ],
)
def test_bad_filters_are_one_line(params: dict[str, str], message: str) -> None:
    with pytest.raises(ParameterError, match="^" + message.replace("(", r"\(") + "$"):
        read_filter(params)


def test_a_cursor_not_given_by_the_list_is_refused(world: None) -> None:
    with pytest.raises(ParameterError, match=r"^cursor is not one this list gave$"):
        events_page(RUN, EventFilter(), cursor="bm9wZQ")
