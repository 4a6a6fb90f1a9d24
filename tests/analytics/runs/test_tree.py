"""analytics/runs/tree.py: parent links become a tree with subtree totals."""

from analytics.runs.paging import AgentSort, Paging
from analytics.runs.queries import AgentFigures
from analytics.runs.tree import build_agent_tree, open_depth, page_tree, walk


def row(
    agent: str, parent: str | None, role: str | None, commits: int = 0, **kw: int
) -> AgentFigures:
    return AgentFigures(
        agent=agent,
        parent=parent,
        role=role,
        events=kw.get("events", 1),
        commits=commits,
        errors=kw.get("errors", 0),
        attempts=kw.get("attempts", 0),
        input_tokens=kw.get("input_tokens", 0),
        cached_input_tokens=0,
        cache_write_tokens=0,
        output_tokens=kw.get("output_tokens", 0),
        cost_usd=None,
        first_ts=None,
        last_ts=None,
    )


def test_children_hang_under_their_parents_planners_first_then_by_commits() -> None:
    [root] = build_agent_tree(
        [
            row("w-b", "sp", "worker", commits=1),
            row("w-a", "sp", "worker", commits=5, errors=2, input_tokens=10, output_tokens=3),
            row("w-direct", "p", "worker", commits=9),
            row("sp", "p", "planner"),
            row("p", "root", "planner"),
            row("root", None, "root_planner"),
        ]
    )
    [p] = root.children
    assert [c.agent for c in p.children] == ["sp", "w-direct"]
    assert [c.agent for c in p.children[0].children] == ["w-a", "w-b"]
    assert (
        root.subtree.agents,
        root.subtree.commits,
        root.subtree.errors,
        root.subtree.tokens,
    ) == (
        6,
        15,
        2,
        13,
    )
    assert (p.subtree.agents, p.descendants, p.depth) == (5, 4, 1)
    assert [n.agent for n in walk([root])] == ["root", "p", "sp", "w-a", "w-b", "w-direct"]


def test_an_agent_whose_parent_never_appears_is_a_root() -> None:
    roots = build_agent_tree([row("orphan", "gone", "worker"), row("root", None, "root_planner")])
    assert [r.agent for r in roots] == ["root", "orphan"]  # the root planner sorts first


def test_a_cycle_of_parent_links_cannot_hang_the_page() -> None:
    roots = build_agent_tree([row("a", "b", "planner"), row("b", "a", "planner")])
    assert sorted(r.agent for r in roots) == ["a", "b"]
    assert all(not r.children for r in roots)


def test_open_depth_opens_as_many_levels_as_fit() -> None:
    rows = [row("root", None, "root_planner")]
    rows += [row(f"p{i}", "root", "planner") for i in range(3)]
    rows += [row(f"w{i}", f"p{i % 3}", "worker") for i in range(30)]
    tree = build_agent_tree(rows)
    assert open_depth(tree, 40) == 2  # 34 rows: everything
    assert open_depth(tree, 10) == 1  # root open, planners closed
    assert open_depth(tree, 1) == 1  # the root always opens


def _fleet() -> list[AgentFigures]:
    return [
        row("root", None, "root_planner"),
        row("p", "root", "planner"),
        row("q", "root", "planner"),
        row("w-1", "p", "worker", commits=5, events=10),
        row("w-2", "p", "worker", commits=3, events=40),
        row("w-3", "p", "worker", commits=4, events=20, errors=3),
        row("w-4", "q", "worker", commits=0, events=30),
        row("w-5", "q", "worker", commits=1, events=5),
    ]


def test_a_page_of_the_tree_keeps_every_planner_and_the_busiest_leaves() -> None:
    tree = page_tree(build_agent_tree(_fleet()), AgentSort.COMMITS, Paging(limit=2))
    assert (tree.leaves, tree.shown, tree.agents) == (5, 2, 8)
    [root] = tree.roots
    p, q = root.children
    # w-1 (5 commits) and w-3 (4) are the page; w-2 under p and both of q's are not.
    assert ([c.agent for c in p.children], p.hidden) == (["w-1", "w-3"], 1)
    assert (q.agent, q.children, q.hidden) == ("q", [], 2)
    # Subtree totals still count every agent below.
    assert (p.subtree.commits, q.subtree.commits, root.subtree.commits) == (12, 1, 13)


def test_the_next_page_and_other_sorts() -> None:
    second = page_tree(build_agent_tree(_fleet()), AgentSort.COMMITS, Paging(2, 2))
    assert [n.agent for n in walk(second.roots) if not n.children and n.agent.startswith("w")] == [
        "w-2",
        "w-5",
    ]
    by_events = page_tree(build_agent_tree(_fleet()), AgentSort.EVENTS, Paging(limit=1))
    assert [n.agent for n in walk(by_events.roots) if n.agent.startswith("w")] == ["w-2"]
    by_errors = page_tree(build_agent_tree(_fleet()), AgentSort.ERRORS, Paging(limit=1))
    assert [n.agent for n in walk(by_errors.roots) if n.agent.startswith("w")] == ["w-3"]
    by_name = page_tree(build_agent_tree(_fleet()), AgentSort.AGENT, Paging(limit=3))
    assert [n.agent for n in walk(by_name.roots) if n.agent.startswith("w")] == [
        "w-1",
        "w-2",
        "w-3",
    ]


def test_find_keeps_the_matching_leaves_and_their_planners_only() -> None:
    tree = page_tree(build_agent_tree(_fleet()), AgentSort.COMMITS, Paging(), find="W-5")
    assert (tree.leaves, tree.shown) == (1, 1)
    assert [n.agent for n in walk(tree.roots)] == ["root", "q", "w-5"]
    none = page_tree(build_agent_tree(_fleet()), AgentSort.COMMITS, Paging(), find="zz")
    assert (none.roots, none.leaves) == ([], 0)
