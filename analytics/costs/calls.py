"""What calls cost where their tokens are shown: one call (a row of `events`), or calls
grouped by any key (a run's models, its agents, an agent's subtree, a day), priced as
the daily report prices them (analytics.costs.report): a logged `cost_usd` wins, else
the price table's price on the call's UTC day, at fast-mode rates when served fast and
at the long-context tier past LONG_CONTEXT_TOKENS. A model without a price adds nothing
and is counted in `unpriced_calls`: never a silent zero.

The grouped form sums tokens in SQL (one row per key, model, UTC day, logged or not and
speed) and prices those few rows here, so a run of ten million calls is priced from a
few thousand rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from analytics.costs.pricing import LONG_CONTEXT_TOKENS, PriceBook, Usage, cost_usd
from analytics.costs.queries import LONG_SQL, USAGE_SUMS_SQL

_USAGE_FIELDS = tuple(Usage.__dataclass_fields__)


def grouped_usage_sql(key_sql: str, where_sql: str, relation: str = "events") -> str:
    """SQL answering, for the llm_call rows of `events` matching `where_sql`, one row per
    (`key`, model, UTC day, logged, fast) with its sums; bind `$long` to
    LONG_CONTEXT_TOKENS (usage_params) and the where clause's own parameters. Both
    fragments are fixed text from the caller, never from a request. `relation` names
    another relation with events' columns (a CTE of rows already read) to group instead."""
    return f"""
SELECT {key_sql} AS key, model,
       (ts AT TIME ZONE 'UTC')::DATE AS utc_day,
       cost_usd IS NOT NULL AS logged,
       speed IS NOT DISTINCT FROM 'fast' AS fast,{USAGE_SUMS_SQL}
FROM (
    SELECT *, {LONG_SQL} AS long FROM {relation}
    WHERE event = 'llm_call' AND ({where_sql})
) AS calls
GROUP BY ALL
"""


def usage_params() -> dict[str, int]:
    return {"long": LONG_CONTEXT_TOKENS}


@dataclass
class Cost:
    """USD of a group of calls: `usd` is None when none of them could be priced."""

    calls: int = 0
    usd: float | None = None
    unpriced_calls: int = 0

    def add(self, usd: float | None, calls: int) -> None:
        self.calls += calls
        if usd is None:
            self.unpriced_calls += calls
        else:
            self.usd = (self.usd or 0.0) + usd


def _group_usd(row: Mapping[str, Any], book: PriceBook) -> float | None:
    if row["logged"]:
        return float(row["logged_usd"])
    price = book.price(row["model"], row["utc_day"])
    if price is None:
        return None
    usage = Usage(**{name: int(row[name]) for name in _USAGE_FIELDS})
    return cost_usd(price, usage, fast=bool(row["fast"]))


def priced_groups(
    rows: Iterable[Mapping[str, Any]], book: PriceBook | None = None
) -> dict[Hashable, Cost]:
    """Each key's cost from grouped_usage_sql's rows."""
    book = book or PriceBook.load()
    answer: dict[Hashable, Cost] = defaultdict(Cost)
    for row in rows:
        answer[row["key"]].add(_group_usd(row, book), int(row["calls"]))
    return dict(answer)


def _utc_day(ts: datetime | date) -> date:
    if isinstance(ts, datetime):
        return (ts.astimezone(UTC) if ts.tzinfo else ts).date()
    return ts


def call_usd(row: Mapping[str, Any], book: PriceBook) -> float | None:
    """One llm_call's USD from its row of `events` (model, ts, speed, cost_usd and its
    token columns); None for another kind of event or an unpriced model."""
    if row.get("event") != "llm_call":
        return None
    if row.get("cost_usd") is not None:
        return float(row["cost_usd"])
    tokens = {
        name: int(row.get(name) or 0) for name in _USAGE_FIELDS if not name.startswith("long_")
    }
    prompt = tokens["input_tokens"] + tokens["cached_input_tokens"] + tokens["cache_write_tokens"]
    long = prompt > LONG_CONTEXT_TOKENS
    usage = Usage(**tokens, **{f"long_{k}": (v if long else 0) for k, v in tokens.items()})
    price = book.price(row.get("model"), _utc_day(row["ts"]))
    if price is None:
        return None
    return cost_usd(price, usage, fast=row.get("speed") == "fast")
