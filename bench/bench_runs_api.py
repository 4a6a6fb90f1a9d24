"""Runs API latency with 10 million events in the warehouse (median of 20 per endpoint).

Events are generated in bulk inside DuckDB (INSERT ... SELECT over range()), one
transaction per run as an ingest of that run's logs would write them, with the run totals
(ingest/pipelines/run_rollups.py): 20 runs of 500,000 events (FLEETSCOPE_BENCH_RUN_EVENTS
to change), with spawns, llm and tool calls, commits (some re-logged), pushes and errors. Requests go through Django and django-ninja with a
Bearer token, as a script's would.

Then the runs list at fleet size: FLEETSCOPE_BENCH_LIST_RUNS (100,000) more runs of four
events each, and GET /api/runs's first page, a filtered first page (a search and a
source) and that filter's next page through X-Next-Cursor. FLEETSCOPE_BENCH_RUNS=0 times
the list alone.
"""

from __future__ import annotations

import os
import statistics
import time

import duckdb
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

import warehouse
from dashboard.models import ApiToken
from ingest.pipelines import run_rollups

RUNS = int(os.environ.get("FLEETSCOPE_BENCH_RUNS", "20"))
EVENTS_PER_RUN = int(os.environ.get("FLEETSCOPE_BENCH_RUN_EVENTS", "500000"))
LIST_RUNS = int(os.environ.get("FLEETSCOPE_BENCH_LIST_RUNS", "100000"))

# One run's events: 400 workers under 20 planners under a root; one event every 0.2 s
# (about 28 hours per run); every 9th event a commit, every 97th commit logged twice.
INSERT_RUN_SQL = """
INSERT INTO events (run, agent, ts, event, id, parent, role, model, input_tokens,
                    cached_input_tokens, output_tokens, tool, ok, commit_sha,
                    source_kind, source, source_line, ingested_at)
SELECT $run,
       CASE WHEN i = 0 THEN 'root' WHEN i <= 20 THEN 'p-' || i ELSE 'w-' || (i % 400) END,
       to_timestamp(1768384800 + i * 0.2),
       CASE WHEN i <= 420 THEN 'spawn'
            WHEN i % 9 = 0 OR i % 873 = 1 THEN 'commit'
            WHEN i % 9 IN (1, 2, 3) THEN 'llm_call'
            WHEN i % 9 IN (4, 5, 6) THEN 'tool_call'
            WHEN i % 9 = 7 THEN 'push'
            ELSE 'error' END,
       $run || '-e' || i,
       CASE WHEN i = 0 THEN NULL WHEN i <= 20 THEN 'root'
            WHEN i <= 420 THEN 'p-' || (i % 20 + 1) END,
       CASE WHEN i = 0 THEN 'root_planner' WHEN i <= 20 THEN 'planner'
            WHEN i <= 420 THEN 'worker' END,
       CASE WHEN i % 9 IN (1, 2, 3) THEN 'gpt-5.2' END,
       CASE WHEN i % 9 IN (1, 2, 3) THEN 1800 + i % 500 END,
       CASE WHEN i % 9 IN (1, 2, 3) THEN 24000 END,
       CASE WHEN i % 9 IN (1, 2, 3) THEN 900 + i % 97 END,
       CASE WHEN i % 9 IN (4, 5, 6) THEN 'cargo build' END,
       CASE WHEN i % 9 IN (4, 5, 6) THEN i % 13 <> 0 END,
       CASE WHEN i % 9 = 0 THEN md5($run || i) WHEN i % 873 = 1 THEN md5($run || (i - 1)) END,
       'agent-events', 'bench/' || $run || '.jsonl', i + 1, $stamp
FROM range($n) AS t(i)
"""

# Many small runs: a spawn, an llm call, a commit and a tool call each, a minute apart;
# every 10th from codex (the filtered pages' source), every 7th tool call failing.
INSERT_MANY_RUNS_SQL = """
INSERT INTO events (run, agent, ts, event, model, input_tokens, output_tokens, ok,
                    commit_sha, source_kind, source, source_line, ingested_at)
SELECT 'fleet-' || lpad(CAST(r AS VARCHAR), 6, '0'), 'root',
       to_timestamp(1768384800 + r * 60 + k),
       CASE k WHEN 0 THEN 'spawn' WHEN 1 THEN 'llm_call' WHEN 2 THEN 'commit'
              ELSE 'tool_call' END,
       CASE WHEN k = 1 THEN 'gpt-5.2' END,
       CASE WHEN k = 1 THEN 1000 + r % 777 END,
       CASE WHEN k = 1 THEN 100 + r % 91 END,
       CASE WHEN k = 3 THEN r % 7 <> 0 END,
       CASE WHEN k = 2 THEN md5(CAST(r AS VARCHAR)) END,
       CASE WHEN r % 10 = 0 THEN 'codex' ELSE 'agent-events' END,
       'bench/fleet.jsonl', r * 4 + k + 1, $stamp
FROM range($runs) AS a(r), range(4) AS b(k)
"""

# The first page, the same page filtered, then that filter's next page (its cursor is
# read from the filtered page's X-Next-Cursor).
LIST_PAGES = (
    "/api/runs?limit=50",
    "/api/runs?q=fleet-01&source=codex&sort=-tokens&limit=50",
)

ENDPOINTS = (
    "/api/runs",
    "/api/runs/{run}/commit-rate?bucket=1h",
    "/api/runs/{run}/stalls?min_gap=30m",
    "/api/runs/{run}/error-rate?bucket=1h",
    "/api/runs/{run}/agents",
)


def _load() -> None:
    warehouse.migrate()
    started = time.perf_counter()
    for index in range(RUNS):
        params = {"run": f"bench-run-{index:02d}", "n": EVENTS_PER_RUN}

        def insert(cur: duckdb.DuckDBPyConnection, params: dict[str, object] = params) -> None:
            run_rollups.insert_events(cur, INSERT_RUN_SQL, lambda stamp: {**params, "stamp": stamp})

        warehouse.write(insert)
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    total = row["n"] if row else 0
    print(f"   loaded {total:,} events in {time.perf_counter() - started:.1f} s", flush=True)


def _median_ms(client: Client, path: str) -> tuple[float, float]:
    """The median and p90 of 20 requests (after one that opens the lake)."""
    warm = client.get(path)
    assert warm.status_code == 200, warm.content[:300]
    timings = []
    for _ in range(20):
        started = time.perf_counter()
        response = client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:200]
    return statistics.median(timings), sorted(timings)[17]


def _run_list(client: Client) -> None:
    started = time.perf_counter()

    def insert(cur: duckdb.DuckDBPyConnection) -> None:
        run_rollups.insert_events(
            cur, INSERT_MANY_RUNS_SQL, lambda stamp: {"runs": LIST_RUNS, "stamp": stamp}
        )

    warehouse.write(insert)
    row = warehouse.fetch_one("SELECT count(DISTINCT run) AS n FROM run_rollups")
    runs = row["n"] if row else 0
    print(f"   {runs:,} runs listed, loaded in {time.perf_counter() - started:.1f} s", flush=True)
    filtered = client.get(LIST_PAGES[1])
    cursor = filtered.headers.get("X-Next-Cursor")
    assert filtered.status_code == 200 and len(filtered.json()) == 50 and cursor
    worst = 0.0
    for path in (*LIST_PAGES, f"{LIST_PAGES[1]}&cursor={cursor}"):
        median, p90 = _median_ms(client, path)
        worst = max(worst, median)
        shown = path if "cursor=" not in path else path.split("&cursor=")[0] + "&cursor=<next>"
        print(f"   {shown:<66} median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)
    print(f"   runs list slowest median: {worst:.1f} ms (target < 300 ms)", flush=True)


def run() -> None:
    user = User.objects.create_superuser("bench", password="bench-password-123")
    _, token = ApiToken.issue(user, "bench")
    # Django's test client calls itself "testserver"; the bench process may serve it.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client(headers={"Authorization": f"Bearer {token}"})
    warehouse.migrate()
    if RUNS:
        _run_endpoints(client)
    if LIST_RUNS:
        _run_list(client)


def _run_endpoints(client: Client) -> None:
    _load()
    run_name = f"bench-run-{RUNS // 2:02d}"
    worst = 0.0
    for template in ENDPOINTS:
        path = template.format(run=run_name)
        median, p90 = _median_ms(client, path)
        worst = max(worst, median)
        print(f"   {template:<42} median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)
    print(f"   slowest median: {worst:.1f} ms (target < 300 ms)", flush=True)
