"""Daily cost report build time with 10 million events on the day.

Events are generated in bulk inside DuckDB (INSERT ... SELECT over range()): the day
(FLEETSCOPE_BENCH_COST_EVENTS, default 10,000,000) across 200 runs, half of them
llm_calls over six models (one with no price, one with logged costs, cache reads and
writes, some long-context prompts), plus 200,000 events on each of the 7 days before it
for the trend. Figures: the report build (median of 3), the API answer and the renders.
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import date

import duckdb
from django.contrib.auth.models import User
from django.test import Client

import warehouse
from analytics.costs import report_formats as formats
from analytics.costs.report import build_daily_report
from dashboard.models import ApiToken
from lib.access import Seen

DAY_EVENTS = int(os.environ.get("FLEETSCOPE_BENCH_COST_EVENTS", "10000000"))
EARLIER_EVENTS = 200_000
CHUNK = 2_000_000  # events per transaction
DAY = date(2026, 1, 14)
DAY_EPOCH = 1768348800  # 2026-01-14T00:00:00Z

INSERT_SQL = """
INSERT INTO events (run, agent, ts, event, id, model, input_tokens, cached_input_tokens,
                    cache_write_tokens, cache_write_1h_tokens, output_tokens, cost_usd,
                    source_kind, source, source_line, ingested_at)
SELECT 'bench-run-' || (i % 200),
       'w-' || (i % 400),
       to_timestamp($day_epoch + i * (86399.0 / $n)),
       CASE WHEN i % 2 = 0 THEN 'llm_call' ELSE 'tool_call' END,
       'e' || i,
       CASE WHEN i % 2 = 0 THEN
           ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', 'gpt-5.2',
            'gpt-5-mini', 'acme-unpriced', 'claude-opus-4-5'][1 + (i // 2) % 6] END,
       CASE WHEN i % 2 = 0 THEN 1800 + i % 500 END,
       CASE WHEN i % 2 = 0 THEN 24000 + (i % 7) * 30000 END,
       CASE WHEN i % 2 = 0 THEN 900 + i % 300 END,
       CASE WHEN i % 2 = 0 AND i % 5 = 0 THEN 400 END,
       CASE WHEN i % 2 = 0 THEN 700 + i % 97 END,
       CASE WHEN i % 2 = 0 AND (i // 2) % 6 = 5 THEN 0.0123 END,
       'agent-events', 'bench/costs.jsonl', i, now()
FROM range($first, $last) AS t(i)
"""


def _insert(day_epoch: int, total: int) -> None:
    for first in range(0, total, CHUNK):
        params = {
            "day_epoch": day_epoch,
            "first": first,
            "last": min(first + CHUNK, total),
            "n": total,
        }

        def insert(cur: duckdb.DuckDBPyConnection, p: dict[str, int] = params) -> None:
            cur.execute(INSERT_SQL, p)

        warehouse.write(insert)


def _load() -> None:
    warehouse.migrate()
    started = time.perf_counter()
    _insert(DAY_EPOCH, DAY_EVENTS)
    for back in range(1, 8):
        _insert(DAY_EPOCH - back * 86400, EARLIER_EVENTS)
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    total = row["n"] if row else 0
    print(f"   loaded {total:,} events in {time.perf_counter() - started:.1f} s", flush=True)


def run() -> None:
    _load()
    report = build_daily_report(DAY, seen=Seen.all())  # warm: opens the lake
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        report = build_daily_report(DAY, seen=Seen.all())
        timings.append(time.perf_counter() - started)
    print(f"   (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)", flush=True)
    print(
        f"   report over {report.calls:,} llm_calls of {DAY_EVENTS:,} events on the day:"
        f" median {statistics.median(timings):.2f} s, worst {max(timings):.2f} s (target < 5 s)",
        flush=True,
    )
    print(
        f"   total ${report.total_usd:,.2f}, {len(report.by_run)} runs, unpriced {report.unpriced}",
        flush=True,
    )
    started = time.perf_counter()
    formats.to_html(report)
    formats.to_csv(report)
    print(f"   html + csv render: {(time.perf_counter() - started) * 1000:.0f} ms", flush=True)
    user = User.objects.create_superuser("bench-costs", password="bench-password-123")
    _, token = ApiToken.issue(user, "bench")
    client = Client(HTTP_HOST="127.0.0.1", headers={"Authorization": f"Bearer {token}"})
    api_timings = []
    for _ in range(3):
        started = time.perf_counter()
        answer = client.get(f"/api/costs/daily?date={DAY.isoformat()}")
        api_timings.append(time.perf_counter() - started)
        assert answer.status_code == 200, answer.content[:200]
    print(
        f"   GET /api/costs/daily: median {statistics.median(api_timings):.2f} s"
        f" (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)",
        flush=True,
    )
