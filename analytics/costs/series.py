"""API spend per day over many days (the Costs page's charts and its days table): by
model, by run, in total, with each day's calls and tokens by kind. Priced as the daily
report prices (analytics.costs.report's rules, from the same usage rows of
analytics.costs.queries); renders nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta

from analytics.costs import queries
from analytics.costs.pricing import PriceBook
from analytics.costs.report import UNKNOWN_MODEL, money, price_rows, read_zone
from lib.access import Seen

# The token kinds a day's usage is shown by (the Costs page's tokens per day), each a
# field of queries.UsageRow; cache writes include the 1-hour ones.
DAILY_TOKEN_KINDS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")


@dataclass(frozen=True)
class SpendSeries:
    """API spend per day (one value per day of `days`), by model and by run, and the
    same days' calls and tokens by kind (DAILY_TOKEN_KINDS), from the same usage rows."""

    days: list[date]
    by_model: dict[str, list[float]]
    by_run: dict[str, list[float]]
    unpriced: list[str]
    usd: list[float]  # priced spend per day
    calls: list[int]  # every call, priced or not
    tokens: dict[str, list[int]]  # by DAILY_TOKEN_KINDS


def build_spend_series(
    last_day: date, days: int, tz: str | None = None, *, seen: Seen
) -> SpendSeries:
    """API spend per day of the runs `seen` covers for the `days` days ending on
    `last_day`, by model and by run (unpriced calls add nothing; their models are listed),
    with each day's calls and tokens by kind (every call, priced or not)."""
    zone = read_zone(tz)
    first_day = last_day - timedelta(days=days - 1)
    segments = queries.day_segments(first_day, last_day, zone)
    rows = queries.read_usage(segments, seen=seen, by_run=True)
    priced = price_rows(rows, PriceBook.load())
    day_list = [first_day + timedelta(days=n) for n in range(days)]
    index = {d: n for n, d in enumerate(day_list)}
    by_model: dict[str, list[float]] = defaultdict(lambda: [0.0] * days)
    by_run: dict[str, list[float]] = defaultdict(lambda: [0.0] * days)
    usd = [0.0] * days
    calls = [0] * days
    tokens = {kind: [0] * days for kind in DAILY_TOKEN_KINDS}
    unpriced: set[str] = set()
    for p in priced:
        model = p.row.model or UNKNOWN_MODEL
        n = index[p.row.day]
        if p.usd is None:
            unpriced.add(model)
        by_model[model][n] += p.usd or 0.0
        by_run[p.row.run or ""][n] += p.usd or 0.0
        usd[n] += p.usd or 0.0
        calls[n] += p.row.calls
        for kind in DAILY_TOKEN_KINDS:
            tokens[kind][n] += getattr(p.row, kind)
    return SpendSeries(
        days=day_list,
        by_model=dict(by_model),
        by_run=dict(by_run),
        unpriced=sorted(unpriced),
        usd=[money(v) for v in usd],
        calls=calls,
        tokens=tokens,
    )
