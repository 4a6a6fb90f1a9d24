"""The run page's tables as CSV (`?format=csv&table=<name>`, the convention of
dashboard.templatetags.fleetscope_export): every row of the table in the page's window
and sort, not only the page shown, streamed by dashboard.export.csv_response. The
columns are the table's, in its order, with units in their names.

Views' helpers only: the rows come from the same analytics functions the page calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.http import StreamingHttpResponse

from analytics.runs import details as run_details
from analytics.runs import model_costs, queries, serving_latency
from analytics.runs import quarantine as run_quarantine
from analytics.runs.paging import AgentSort
from dashboard.export import csv_response
from dashboard.pages.run_window import RunWindow
from lib.access import Seen
from lib.errors import ParameterError
from lib.window import TimeRange

Rows = tuple[Sequence[str], Iterable[Sequence[Any]]]


def _stalls(run: str, window: RunWindow, seen: Seen) -> Rows:
    found = queries.stalls(run, window.min_gap_delta, window.time_range, seen=seen)
    rows: list[Sequence[Any]] = [
        (s.start, s.end, round(s.minutes, 2), s.busy_events) for s in found.stalls
    ]
    if found.current is not None:
        rows.append((found.current.since, None, round(found.current.minutes, 2), None))
    return ("from", "to", "minutes", "events_meanwhile"), rows


def _tools(run: str, span: TimeRange, seen: Seen) -> Rows:
    found = run_details.tools(run, span, seen=seen)
    header = ("tool", "calls", "answered", "errors", "error_rate", "mean_time_ms")
    return header, (
        (t.tool, t.calls, t.answered, t.errors, t.error_rate, t.mean_duration_ms)
        for t in found.tools
    )


def _models(run: str, span: TimeRange, seen: Seen) -> Rows:
    uses = run_details.models(run, span, seen=seen)
    priced = model_costs.priced_models(uses, model_costs.run_cost(run, span, seen=seen))
    header = (
        "model",
        "calls",
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cache_write_5m_tokens",
        "cache_write_1h_tokens",
        "output_tokens",
        "reasoning_output_tokens",
        "cost_usd",
        "unpriced_calls",
    )
    return header, (
        (
            m.use.model,
            m.use.calls,
            m.use.input_tokens,
            m.use.cached_input_tokens,
            m.use.cache_write_tokens,
            m.use.cache_write_5m_tokens,
            m.use.cache_write_1h_tokens,
            m.use.output_tokens,
            m.use.reasoning_output_tokens,
            m.cost.usd,
            m.cost.unpriced_calls,
        )
        for m in priced
    )


def _commits(run: str, span: TimeRange, sort: AgentSort, seen: Seen) -> Rows:
    rows = run_details.commits_by_agent(run, span, sort, None, seen=seen)
    header = (
        "agent",
        "commits",
        "work",
        "claims",
        "files",
        "insertions",
        "deletions",
        "first_commit",
        "last_commit",
    )
    return header, (
        (
            c.agent,
            c.commits,
            c.work,
            c.claims,
            c.files,
            c.insertions,
            c.deletions,
            c.first_ts,
            c.last_ts,
        )
        for c in rows
    )


def _quarantine(run: str, seen: Seen) -> Rows:
    header = ("file", "source_kind", "line", "byte_offset", "reason", "raw_line", "set_aside")
    return header, (
        (q.source, q.source_kind, q.line_no, q.byte_offset, q.reason, q.raw, q.ingested_at)
        for q in run_quarantine.every_run_line(run, seen=seen)
    )


def _serving(run: str, span: TimeRange, seen: Seen) -> Rows:
    found = serving_latency.serving_latency(run, span, seen=seen)
    header = ("latency", "records", "mean_ms", "p50_ms", "p95_ms")
    return header, ((name, f.count, f.mean_ms, f.p50_ms, f.p95_ms) for name, f in found.figures)


def _tables(
    run: str, window: RunWindow, commits_sort: AgentSort, seen: Seen
) -> dict[str, Callable[[], Rows]]:
    span = window.time_range
    return {
        "stalls": lambda: _stalls(run, window, seen),
        "tools": lambda: _tools(run, span, seen),
        "models": lambda: _models(run, span, seen),
        "commits": lambda: _commits(run, span, commits_sort, seen),
        "quarantine": lambda: _quarantine(run, seen),
        "serving-latency": lambda: _serving(run, span, seen),
    }


TABLES = ("stalls", "tools", "models", "commits", "quarantine", "serving-latency")


def run_table_csv(
    run: str, table: str, window: RunWindow, commits_sort: AgentSort, seen: Seen
) -> StreamingHttpResponse:
    """One of the run page's tables (TABLES) as CSV, the commits per agent in the page's
    sort; a ParameterError for another name."""
    tables = _tables(run, window, commits_sort, seen)
    if table not in tables:
        raise ParameterError(f"table must be one of {', '.join(TABLES)}")
    header, rows = tables[table]()
    return csv_response(f"{run}-{table}.csv", header, rows)
