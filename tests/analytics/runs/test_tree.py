"""analytics/runs/tree.py: parent links become a tree with subtree totals."""

from analytics.runs.queries import AgentFigures
from analytics.runs.tree import build_agent_tree, open_depth, walk


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
