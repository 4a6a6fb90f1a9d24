"""Token usage of `llm_call` events, summed for pricing.

One question: how many tokens of each kind did each model use, per run and day, in a
time range, split by whether the call logged its own `cost_usd` (a logged cost wins over
the computed one, so only unlogged calls are priced from the table; both are kept).
Events are stored once per call: the adapters drop repeated lines (Claude Code's one line
per content block, keyed by message and request id) and agent events are unique by run
and id, so sums here count each call once. Never prices anything: analytics.costs does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from analytics import warehouse
from analytics.costs.pricing import LONG_CONTEXT_TOKENS

# `day` is the calendar day in the report's time zone; `utc_day` picks the price (prices
# are valid from a UTC day). `long_*` are the tokens of calls whose prompt is long-context.
USAGE_SQL = """
WITH calls AS (
    SELECT model, run, ts, cost_usd,
           coalesce(input_tokens, 0) AS input_tokens,
           coalesce(cached_input_tokens, 0) AS cached_input_tokens,
           coalesce(cache_write_tokens,
                    coalesce(cache_write_5m_tokens, 0) + coalesce(cache_write_1h_tokens, 0))
               AS cache_write_tokens,
           coalesce(cache_write_1h_tokens, 0) AS cache_write_1h_tokens,
           coalesce(output_tokens, 0) AS output_tokens
    FROM events
    WHERE event = 'llm_call' AND ts >= $start AND ts < $end
)
SELECT CAST(timezone($tz, ts) AS DATE) AS day,
       CAST(timezone('UTC', ts) AS DATE) AS utc_day,
       model, run,
       cost_usd IS NOT NULL AS logged,
       count(*) AS calls,
       sum(input_tokens) AS input_tokens,
       sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_tokens) AS cache_write_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens,
       sum(output_tokens) AS output_tokens,
       coalesce(sum(input_tokens) FILTER (WHERE long_context), 0) AS long_input_tokens,
       coalesce(sum(cached_input_tokens) FILTER (WHERE long_context), 0)
           AS long_cached_input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE long_context), 0) AS long_output_tokens,
       coalesce(sum(cost_usd), 0) AS logged_usd
FROM (
    SELECT *, input_tokens + cached_input_tokens + cache_write_tokens > $long AS long_context
    FROM calls
)
GROUP BY ALL
"""

TOKEN_FIELDS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "long_input_tokens",
    "long_cached_input_tokens",
    "long_output_tokens",
)


@dataclass(frozen=True)
class UsageRow:
    day: date
    utc_day: date
    model: str | None
    run: str
    logged: bool
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int
    output_tokens: int
    long_input_tokens: int
    long_cached_input_tokens: int
    long_output_tokens: int
    logged_usd: float


def read_usage(start: datetime, end: datetime, tz: str) -> list[UsageRow]:
    """Usage of llm_call events in [start, end), by day in `tz`, UTC day, model, run and
    whether the call logged its cost."""
    rows = warehouse.fetch_all(
        USAGE_SQL, {"start": start, "end": end, "tz": tz, "long": LONG_CONTEXT_TOKENS}
    )
    return [
        UsageRow(
            **{
                **row,
                **{name: int(row[name] or 0) for name in TOKEN_FIELDS},
                "calls": int(row["calls"]),
                "logged_usd": float(row["logged_usd"] or 0.0),
            }
        )
        for row in rows
    ]
