"""USD of a run's agents: every agent's calls priced in one grouped statement per run
(analytics.costs.calls: a logged `cost_usd` wins, else the price table on the call's UTC
day), for the agent tree's nodes and subtrees (analytics.runs.tree sums them).

Never prices call by call and never prices agent by agent: one statement answers a whole
run. A model without a price is counted in `unpriced_calls`, never a silent $0. Visibility
is the caller's (the tree is built after queries.agents' ensure_run).
"""

from __future__ import annotations

import warehouse
from analytics.costs.calls import Cost, grouped_usage_sql, priced_groups, usage_params
from analytics.costs.pricing import PriceBook
from lib.window import TimeRange

RUN_AGENTS_USAGE_SQL = grouped_usage_sql(
    "agent",
    "run = $run AND ($start::TIMESTAMPTZ IS NULL OR ts >= $start)"
    " AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)",
)


def agent_costs(
    run: str, window: TimeRange = TimeRange(), book: PriceBook | None = None
) -> dict[str, Cost]:
    """Each agent's Cost in [start, end); an agent without an llm_call has no entry."""
    rows = warehouse.fetch_all(
        RUN_AGENTS_USAGE_SQL, {"run": run, **window.params(), **usage_params()}
    )
    return {str(agent): cost for agent, cost in priced_groups(rows, book).items()}
