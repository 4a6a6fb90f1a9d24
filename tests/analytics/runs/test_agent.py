"""One agent's page (analytics.runs.agent) and the tree's USD per node and subtree
(analytics.runs.agent_costs + tree), against the hand-made run of agent_world.py: every
figure below is worked out by hand there."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from analytics.runs import queries
from analytics.runs.agent import AgentLink, Gap, TimelinePoint, agent_page
from analytics.runs.agent_costs import agent_costs
from analytics.runs.tree import build_agent_tree, find_node
from lib.access import Seen
from lib.errors import NotFoundError
from tests.analytics.runs.agent_world import BOOK, RUN, XSS, load_crew


def _t(clock: str) -> datetime:
    hours, minutes, seconds = (int(part) for part in clock.split(":"))
    return datetime(2026, 1, 14, hours, minutes, seconds, tzinfo=UTC)


@pytest.fixture
def crew(lake: Path) -> str:
    load_crew()
    return RUN


def test_a_workers_place_figures_and_cost(crew: str) -> None:
    page = agent_page(crew, "w1", book=BOOK)
    assert (page.role, page.parent, page.children) == ("worker", AgentLink("p1", "planner"), [])
    # b2 was first logged by w2: w1's later logging is not its commit, nor one of its events.
    assert (page.events, page.commits, page.attempts, page.errors) == (10, 1, 7, 2)
    assert page.error_rate == pytest.approx(2 / 7)
    assert (page.input_tokens, page.output_tokens, page.tokens) == (1510, 160, 1670)
    assert (page.llm_calls, page.unpriced_calls) == (3, 1)
    assert page.usd == pytest.approx(0.00225 + 0.5)
    assert (page.first_ts, page.last_ts) == (_t("10:01:00"), _t("11:00:00"))


def test_a_planners_children_follow_the_trees_order(crew: str) -> None:
    page = agent_page(crew, "p1", book=BOOK)
    assert page.parent == AgentLink("root", "root_planner")
    assert page.children == [
        AgentLink(XSS, "worker"),
        AgentLink("w1", "worker"),
        AgentLink("w2", "worker"),
    ]
    assert (page.events, page.attempts, page.errors, page.error_rate) == (2, 1, 0, 0.0)
    assert page.usd == pytest.approx(0.01)  # 1,000 out x $10 per MTok


def test_a_parent_that_never_logged_has_a_page_with_its_children(crew: str) -> None:
    page = agent_page(crew, "lead", book=BOOK)
    assert (page.role, page.parent, page.children) == (None, None, [AgentLink("w3", "worker")])
    assert (page.events, page.error_rate, page.usd, page.unpriced_calls) == (0, None, None, 0)
    assert (page.first_ts, page.timeline, page.gaps) == (None, [], [])


def test_a_cycle_of_parent_links_leaves_both_agents_roots_as_the_tree_does(crew: str) -> None:
    for agent in ("c1", "c2"):
        page = agent_page(crew, agent, book=BOOK)
        assert (page.parent, page.children) == (None, [])
    roots = build_agent_tree(queries.agents(crew))
    assert {r.agent for r in roots} >= {"c1", "c2"}


def test_every_event_is_one_point_in_its_lane(crew: str) -> None:
    page = agent_page(crew, "w1", book=BOOK)
    assert page.bucket_seconds is None
    assert page.timeline == [
        TimelinePoint(_t("10:01:00"), "spawn", 1, None),
        TimelinePoint(_t("10:05:00"), "llm_call", 1, "gpt-5"),
        TimelinePoint(_t("10:06:00"), "tool_call", 1, "rg"),
        TimelinePoint(_t("10:07:00"), "error", 1, "cargo build"),  # a failed tool call
        TimelinePoint(_t("10:07:01"), "error", 1, None),
        TimelinePoint(_t("10:10:00"), "commit", 1, "a1"),
        TimelinePoint(_t("10:10:30"), "push", 1, None),
        TimelinePoint(_t("10:40:00"), "llm_call", 1, "mystery-1"),
        TimelinePoint(_t("10:41:00"), "llm_call", 1, "gpt-5"),
        TimelinePoint(_t("11:00:00"), "handoff", 1, None),
    ]


def test_too_many_events_are_counted_per_round_bucket(crew: str) -> None:
    # 10 events over 10:01-11:00 (3,540 s) into 4 buckets: the smallest round width with
    # 4 x width >= 3,540 s is 15 minutes; buckets start at 10:00, 10:30 and 11:00.
    page = agent_page(crew, "w1", book=BOOK, max_points=5, buckets=4)
    assert page.bucket_seconds == 900
    counts = {(p.t, p.lane): p.events for p in page.timeline}
    assert counts == {
        (_t("10:00:00"), "spawn"): 1,
        (_t("10:00:00"), "llm_call"): 1,
        (_t("10:00:00"), "tool_call"): 1,
        (_t("10:00:00"), "error"): 2,
        (_t("10:00:00"), "commit"): 1,
        (_t("10:00:00"), "push"): 1,
        (_t("10:30:00"), "llm_call"): 2,
        (_t("11:00:00"), "handoff"): 1,
    }
    assert sum(counts.values()) == page.events


def test_the_longest_gaps_come_first(crew: str) -> None:
    gaps = agent_page(crew, "w1", book=BOOK).gaps
    assert gaps[:4] == [
        Gap(_t("10:10:30"), _t("10:40:00"), 1770.0),
        Gap(_t("10:41:00"), _t("11:00:00"), 1140.0),
        Gap(_t("10:01:00"), _t("10:05:00"), 240.0),
        Gap(_t("10:07:01"), _t("10:10:00"), 179.0),
    ]
    # Ten events, nine intervals, none of them empty: 60, 60, 60, 30 and 1 s follow.
    assert [g.seconds for g in gaps[4:]] == [60.0, 60.0, 60.0, 30.0, 1.0]


def test_an_unknown_agent_and_an_unseen_run_are_not_found(crew: str) -> None:
    with pytest.raises(NotFoundError, match="has no agent 'nobody'"):
        agent_page(crew, "nobody", book=BOOK)
    with pytest.raises(NotFoundError, match="unknown run"):
        agent_page("no-such-run", "w1", book=BOOK)
    with pytest.raises(NotFoundError, match="unknown run"):
        agent_page(crew, "w1", Seen.nothing(), book=BOOK)


def test_the_tree_carries_each_nodes_usd_and_its_subtrees(crew: str) -> None:
    costs = agent_costs(crew, book=BOOK)
    assert set(costs) == {"w1", "w2", "p1"}  # the agents with llm_calls
    roots = build_agent_tree(queries.agents(crew), costs)
    own = {}
    for agent in ("root", "p1", "w1", "w2", XSS):
        found = find_node(roots, agent)
        assert found is not None
        own[agent] = found[0]
    assert own["w1"].own.usd == pytest.approx(0.50225)
    assert own["w1"].own.unpriced_calls == 1
    assert own["w2"].own.usd == pytest.approx(0.0025)  # 2,000 in x $1.25 per MTok
    assert (own[XSS].own.usd, own["root"].own.usd) == (None, None)
    # p1: its own $0.01 + w1's $0.50225 + w2's $0.0025; the root adds nothing of its own.
    assert own["p1"].subtree.usd == pytest.approx(0.51475)
    assert own["root"].subtree.usd == pytest.approx(0.51475)
    assert (own["p1"].subtree.unpriced_calls, own["root"].subtree.unpriced_calls) == (1, 1)
    assert own[XSS].subtree.usd is None
