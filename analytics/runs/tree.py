"""The agent tree of a run (root planner -> planners/subplanners -> workers), built from
the per-agent rows of analytics.runs.queries.agents() by their parent links, with each
node's figures summed over its subtree (USD too, when the run's agent costs are given:
analytics.runs.agent_costs).

Pure: rows in, nodes out; never queries. A parent link that would close a cycle is
ignored (that agent becomes a root), so a bad log cannot hang a page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from analytics.costs.calls import Cost
from analytics.runs.paging import AgentSort, Paging
from analytics.runs.queries import AgentFigures
from lib.errors import ParameterError

ROLE_ORDER = {"root_planner": 0, "planner": 1, "judge": 2, "integrator": 3, "worker": 4}


@dataclass
class Totals:
    agents: int = 0
    events: int = 0
    commits: int = 0
    errors: int = 0
    attempts: int = 0
    tokens: int = 0  # input + output
    usd: float | None = None  # None: no call here could be priced (or none was made)
    unpriced_calls: int = 0  # llm_calls of a model without a price, left out of usd

    def add(self, other: Totals) -> None:
        self.agents += other.agents
        self.events += other.events
        self.commits += other.commits
        self.errors += other.errors
        self.attempts += other.attempts
        self.tokens += other.tokens
        if other.usd is not None:
            self.usd = (self.usd or 0.0) + other.usd
        self.unpriced_calls += other.unpriced_calls


@dataclass
class AgentNode:
    agent: str
    parent: str | None
    role: str | None
    own: Totals
    depth: int = 0
    children: list[AgentNode] = field(default_factory=list)
    subtree: Totals = field(default_factory=Totals)  # this agent and everyone below it
    hidden: int = 0  # agents right below it left off the page (page_tree)

    @property
    def descendants(self) -> int:
        return self.subtree.agents - 1


def _own(row: AgentFigures, cost: Cost | None) -> Totals:
    return Totals(
        agents=1,
        events=row.events,
        commits=row.commits,
        errors=row.errors,
        attempts=row.attempts,
        tokens=row.input_tokens + row.output_tokens,
        usd=cost.usd if cost else None,
        unpriced_calls=cost.unpriced_calls if cost else 0,
    )


def build_agent_tree(
    rows: Iterable[AgentFigures], costs: Mapping[str, Cost] | None = None
) -> list[AgentNode]:
    """Root nodes, each with its subtree; children sorted planners first, then by the
    commits their subtree landed, then by name. `costs` (agent -> Cost) gives each node
    its own USD, summed over subtrees like the other figures."""
    costs = costs or {}
    nodes = {
        row.agent: AgentNode(row.agent, row.parent, row.role, _own(row, costs.get(row.agent)))
        for row in rows
    }
    roots = []
    for node in nodes.values():
        parent = nodes.get(node.parent) if node.parent is not None else None
        if parent is None or _reaches(nodes, parent.agent, node.agent):
            roots.append(node)
        else:
            parent.children.append(node)
    # Post-order without recursion: a tree of thousands of agents can be deep.
    order: list[AgentNode] = []
    stack = [(root, 0) for root in roots]
    while stack:
        node, depth = stack.pop()
        node.depth = depth
        order.append(node)
        stack.extend((child, depth + 1) for child in node.children)
    for node in reversed(order):
        node.subtree = Totals()
        node.subtree.add(node.own)
        for child in node.children:
            node.subtree.add(child.subtree)
        node.children.sort(key=_sort_key)
    roots.sort(key=_sort_key)
    return roots


def _sort_key(node: AgentNode) -> tuple[int, int, int, str]:
    return (
        0 if node.children else 1,
        ROLE_ORDER.get(node.role or "", 5),
        -node.subtree.commits,
        node.agent,
    )


def _reaches(nodes: Mapping[str, AgentNode], start: str, target: str) -> bool:
    """Whether following parent links from `start` arrives at `target` (a cycle)."""
    seen = set()
    current: str | None = start
    while current is not None and current not in seen:
        if current == target:
            return True
        seen.add(current)
        node = nodes.get(current)
        current = node.parent if node else None
    return False


def walk(roots: Iterable[AgentNode]) -> Iterable[AgentNode]:
    """Every node, depth first, in display order."""
    stack = list(reversed(list(roots)))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def find_node(roots: Iterable[AgentNode], agent: str) -> tuple[AgentNode, AgentNode | None] | None:
    """The agent's node and the node it hangs under in the tree (None for a root: no
    parent, or a parent link that closed a cycle), or None when the tree lacks it."""
    stack: list[tuple[AgentNode, AgentNode | None]] = [(root, None) for root in roots]
    while stack:
        node, parent = stack.pop()
        if node.agent == agent:
            return node, parent
        stack.extend((child, node) for child in node.children)
    return None


def open_depth(roots: Iterable[AgentNode], max_rows: int) -> int:
    """How many levels to show expanded: the most that keep the visible rows (every node
    at depth <= the answer) within max_rows; at least 1, so the root always opens."""
    per_depth: dict[int, int] = {}
    for node in walk(roots):
        per_depth[node.depth] = per_depth.get(node.depth, 0) + 1
    visible, fits = 0, 0
    for depth in sorted(per_depth):
        visible += per_depth[depth]
        if visible > max_rows:
            break
        fits = depth
    return max(fits, 1)


@dataclass(frozen=True)
class TreePage:
    """The tree cut to a page: every agent with agents below it (planners), and one page
    of the others (the leaves: workers, mostly), sorted, placed under their parents.
    Subtree totals still count everyone below."""

    roots: list[AgentNode]
    leaves: int  # leaves that match, on every page
    shown: int  # leaves on this page
    agents: int  # every agent in the tree
    sort: AgentSort
    paging: Paging
    find: str


_LEAF_ORDER: dict[AgentSort, Callable[[AgentNode], tuple[int | str, ...]]] = {
    AgentSort.COMMITS: lambda n: (-n.own.commits, n.agent),
    AgentSort.EVENTS: lambda n: (-n.own.events, n.agent),
    AgentSort.ERRORS: lambda n: (-n.own.errors, n.agent),
    AgentSort.TOKENS: lambda n: (-n.own.tokens, n.agent),
    AgentSort.AGENT: lambda n: (n.agent,),
}


def page_tree(roots: list[AgentNode], sort: AgentSort, paging: Paging, find: str = "") -> TreePage:
    """Keep the planners and one page of the leaves (those whose name holds `find`, any
    case), sorted by `sort`; with `find`, only the planners that match or hold a kept
    leaf. Prunes the nodes in place and counts what each lost in `hidden`."""
    if sort not in _LEAF_ORDER:
        raise ParameterError(f"the agent tree cannot be sorted by {sort}")
    needle = find.casefold()
    nodes = list(walk(roots))
    leaves = [n for n in nodes if not n.children and needle in n.agent.casefold()]
    leaves.sort(key=_LEAF_ORDER[sort])
    page = leaves[paging.offset : paging.offset + paging.limit]
    rank = {id(n): i for i, n in enumerate(page)}
    kept = set(rank)
    # Post-order: a planner is kept when it matches or something under it is kept. Under
    # each, planners stay in the tree's order, then the page's leaves in the sort's.
    for node in reversed(nodes):
        if not node.children:
            continue
        before = len(node.children)
        planners = [c for c in node.children if c.children or c.hidden]
        node.children = [c for c in planners if id(c) in kept] + sorted(
            (c for c in node.children if id(c) in rank), key=lambda c: rank[id(c)]
        )
        node.hidden = before - len(node.children)
        if not needle or node.children or needle in node.agent.casefold():
            kept.add(id(node))
    shown = sum(1 for n in leaves if id(n) in kept)
    return TreePage(
        roots=[r for r in roots if id(r) in kept],
        leaves=len(leaves),
        shown=shown,
        agents=len(nodes),
        sort=sort,
        paging=paging,
        find=find,
    )
