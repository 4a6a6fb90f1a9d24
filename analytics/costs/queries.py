"""Token usage of `llm_call` events, summed for pricing.

One question: how many tokens of each kind did each model use, per day (and run), in a
time range, split by whether the call logged its own `cost_usd` (a logged cost wins over
the computed one, so only unlogged calls are priced from the table; both are kept) and by
whether it was served in fast mode (priced at other rates). Only the calls of the runs a
`Seen` (lib.access) covers are read: the filter is in the SQL, so every sum is over them.
Events are stored once per call: the adapters drop repeated lines (Claude Code's one line
per content block of a response, and a sidechain's replay of its parent's response) and
agent events are unique by run and id, so sums here count each call once; an advisor's
part of a Claude response is a call of its own. Never prices anything: analytics.costs
does.

Days are cut into segments that each lie in one local day and one UTC day (prices are
valid from a UTC day); rows are tagged with their segment by comparing `ts` with the
segment starts, which is much cheaper over millions of rows than converting each
timestamp to a time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import warehouse
from analytics.costs.pricing import LONG_CONTEXT_TOKENS
from lib.access import Seen, visible_run_sql

# Whether a call is long-context (its prompt past $long): analytics.costs.calls too.
LONG_SQL = (
    "coalesce(input_tokens, 0) + coalesce(cached_input_tokens, 0)"
    " + coalesce(cache_write_tokens, 0) > $long"
)
# Usage sums of a group of llm_call rows (which carry `long`, LONG_SQL's flag): the
# report's grouping below and analytics.costs.calls' grouped_usage_sql share them.
USAGE_SUMS_SQL = """
       count(*) AS calls,
       coalesce(sum(input_tokens), 0) AS input_tokens,
       coalesce(sum(cached_input_tokens), 0) AS cached_input_tokens,
       coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
       coalesce(sum(cache_write_1h_tokens), 0) AS cache_write_1h_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens,
       coalesce(sum(input_tokens) FILTER (WHERE long), 0) AS long_input_tokens,
       coalesce(sum(cached_input_tokens) FILTER (WHERE long), 0) AS long_cached_input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE long), 0) AS long_output_tokens,
       coalesce(sum(cache_write_tokens) FILTER (WHERE long), 0) AS long_cache_write_tokens,
       coalesce(sum(cache_write_1h_tokens) FILTER (WHERE long), 0)
           AS long_cache_write_1h_tokens,
       coalesce(sum(cost_usd), 0) AS logged_usd"""
# {segment} is built from fixed text with bound parameters ($b1, $b2, ...); {run},
# {source}, {person} and {team} are the column or `NULL`. Nothing from a request is ever formatted into this.
_USAGE_SQL = f"""
SELECT {{segment}} AS segment, model, {{run}} AS run, {{source}} AS source,
       {{person}} AS person, {{team}} AS team,
       cost_usd IS NOT NULL AS logged,
       speed IS NOT DISTINCT FROM 'fast' AS fast,{USAGE_SUMS_SQL}
FROM (
    -- whether a call is long-context, worked out once per row for its five sums
    SELECT *, {LONG_SQL} AS long
    FROM events
    WHERE event = 'llm_call' AND ts >= $start AND ts < $end AND {visible_run_sql("run")}
) AS calls
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
    "long_cache_write_tokens",
    "long_cache_write_1h_tokens",
)


@dataclass(frozen=True)
class Segment:
    """[start, end) inside one local day and one UTC day."""

    start: datetime
    end: datetime
    day: date
    utc_day: date


@dataclass(frozen=True)
class UsageRow:
    day: date
    utc_day: date
    model: str | None
    run: str | None
    source: str | None
    logged: bool
    fast: bool  # served in fast mode (usage.speed "fast"): priced at fast-mode rates
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int
    output_tokens: int
    long_input_tokens: int
    long_cached_input_tokens: int
    long_output_tokens: int
    long_cache_write_tokens: int
    long_cache_write_1h_tokens: int
    logged_usd: float
    start: datetime | None = None  # the segment's start
    person: str | None = None  # the telemetry's person and team (when `by_person`)
    team: str | None = None


def day_segments(first_day: date, last_day: date, zone: ZoneInfo) -> list[Segment]:
    """The local days first_day..last_day, each cut at the UTC midnight inside it."""
    segments = []
    day = first_day
    while day <= last_day:
        start = datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)
        end = datetime.combine(day + timedelta(days=1), time(), tzinfo=zone).astimezone(UTC)
        cut = datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=UTC)
        for lo, hi in ((start, min(cut, end)), (cut, end)):
            if lo < hi:
                segments.append(Segment(lo, hi, day, lo.date()))
        day += timedelta(days=1)
    return segments


def read_usage(
    segments: list[Segment],
    *,
    seen: Seen,
    by_run: bool,
    by_source: bool = False,
    by_person: bool = False,
) -> list[UsageRow]:
    """Usage of the llm_call events of the runs `seen` covers over contiguous segments, by
    segment, model, run (when `by_run`), source file (when `by_source`), the events'
    person and team (when `by_person`) and whether the call logged its cost."""
    if not segments:
        return []
    params: dict[str, object] = {
        "start": segments[0].start,
        "end": segments[-1].end,
        "long": LONG_CONTEXT_TOKENS,
        "seen_runs": seen.run_list(),
    }
    terms = []
    for n, segment in enumerate(segments[1:], start=1):
        params[f"b{n}"] = segment.start
        terms.append(f"(ts >= $b{n})::INTEGER")
    sql = _USAGE_SQL.format(
        segment=" + ".join(terms) if terms else "0",
        run="run" if by_run else "NULL",
        source="source" if by_source else "NULL",
        person="person" if by_person else "NULL",
        team="team" if by_person else "NULL",
    )
    answer = []
    for row in warehouse.fetch_all(sql, params):
        segment = segments[row.pop("segment")]
        answer.append(
            UsageRow(
                day=segment.day,
                utc_day=segment.utc_day,
                start=segment.start,
                model=row["model"],
                run=row["run"],
                source=row["source"],
                person=row["person"],
                team=row["team"],
                logged=bool(row["logged"]),
                fast=bool(row["fast"]),
                calls=int(row["calls"]),
                logged_usd=float(row["logged_usd"]),
                **{name: int(row[name]) for name in TOKEN_FIELDS},
            )
        )
    return answer


_LATEST_CALL_SQL = (
    f"SELECT max(ts) AS ts FROM events WHERE event = 'llm_call' AND {visible_run_sql('run')}"
)


def latest_call_time(seen: Seen) -> datetime | None:
    """When the most recent `llm_call` of a run `seen` covers was made (None before any):
    where the Costs page starts looking for the latest day with spend."""
    row = warehouse.fetch_one(_LATEST_CALL_SQL, {"seen_runs": seen.run_list()})
    ts = row["ts"] if row else None
    if ts is None:
        return None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
