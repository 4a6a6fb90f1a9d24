"""What a run's model calls cost, beside their tokens: USD per model (the rows of
details.models) and the run's total, in [start, end), priced as the daily report prices
(analytics.costs.calls: a logged cost_usd wins, else the price table's on the call's UTC
day), from one grouped query. A call no price covers adds nothing and is counted in
`unpriced_calls`, never a silent zero.

Must not price call by call, nor know what a page shows; the per-agent and subtree costs
of the tree are not here.
"""

from __future__ import annotations

from dataclasses import dataclass

import warehouse
from analytics.costs.calls import Cost, grouped_usage_sql, priced_groups, usage_params
from analytics.costs.pricing import PriceBook
from analytics.runs.details import ModelUse
from analytics.runs.queries import ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from lib.window import TimeRange

# One row per (model, UTC day, logged or not, speed): a few rows however many calls. The
# key is details.MODELS_SQL's model, so the two meet row for row.
RUN_USAGE_SQL = grouped_usage_sql(
    "coalesce(model, '(unknown)')",
    """run = $run
    AND ($start::TIMESTAMPTZ IS NULL OR ts >= $start)
    AND ($end::TIMESTAMPTZ IS NULL OR ts < $end)""",
)


@dataclass(frozen=True)
class RunCost:
    total: Cost  # every model call of the run in the range
    by_model: dict[str, Cost]  # by details.ModelUse.model

    def of(self, model: str) -> Cost:
        return self.by_model.get(model, Cost())


@dataclass(frozen=True)
class PricedModel:
    """A row of the models table: its calls and tokens, and their USD."""

    use: ModelUse
    cost: Cost


def run_cost(
    run: str,
    window: TimeRange | None = None,
    *,
    seen: Seen = SYSTEM_VIEW,
    book: PriceBook | None = None,
) -> RunCost:
    ensure_run(run, seen)
    rows = warehouse.fetch_all(
        RUN_USAGE_SQL, {"run": run, **(window or TimeRange()).params(), **usage_params()}
    )
    book = book or PriceBook.load()
    by_model = {str(key): cost for key, cost in priced_groups(rows, book).items()}
    total = priced_groups([{**row, "key": run} for row in rows], book).get(run, Cost())
    return RunCost(total, by_model)


def priced_models(models: list[ModelUse], cost: RunCost) -> list[PricedModel]:
    return [PricedModel(use, cost.of(use.model)) for use in models]
