"""The events explorer on one big run: a page's server time with each one filter, the next
page, an agent's page, and a CSV export of about a million events (MB/s and the memory it
took).

One run of 10,000,000 events (FLEETSCOPE_BENCH_EXPLORE_EVENTS=N for another size, as
bench_runs_api.py's FLEETSCOPE_BENCH_RUN_EVENTS) from 2,000 agents (a root, 40 planners,
1,959 workers), generated in bulk inside DuckDB (INSERT ... SELECT over range()) in
transactions of a million events, as an ingest of the run's logs would write them, with
the run totals (ingest/pipelines/run_rollups.py). Requests go through Django and
django-ninja with a Bearer token, as a script's would; each figure is the median of
REPEAT requests after one warm-up. The export's memory is the process's resident set,
sampled every 5 ms while the file streams, above what it was before the request.
Figures and the command: bench/explore.md.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from typing import Any

import duckdb
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

import warehouse
from bench import explore_replay
from dashboard.models import ApiToken
from ingest.pipelines import run_rollups

EVENTS = int(os.environ.get("FLEETSCOPE_BENCH_EXPLORE_EVENTS", "10000000"))
CHUNK = 1_000_000  # events per transaction while loading
AGENTS = 2000
PLANNERS = 40
REPEAT = int(os.environ.get("FLEETSCOPE_BENCH_EXPLORE_REPEAT", "15"))
RUN = "bench-explore"
START = 1768384800  # 2026-01-14T10:00:00Z; one event every 0.05 s
STEP = 0.05
EXPORT_EVENTS = 1_000_000

# Agent a = i % 2000 once the 2,000 spawns are logged; kinds by i % 10: four llm calls
# (gpt-5.2 / claude-sonnet-4-5), three tool calls (cargo build, rg, pytest; one in 17
# fails), a commit, a handoff, an error (every 50th event overall).
INSERT_SQL = """
INSERT INTO events (run, agent, ts, event, id, parent, role, model, input_tokens,
                    cached_input_tokens, output_tokens, tool, ok, commit_sha, commit_message,
                    error_kind, error_message, handoff_to, handoff_status, handoff_notes,
                    source_kind, source, source_line, ingested_at)
SELECT $run,
       'a-' || (i % 2000),
       to_timestamp(1768384800 + i * 0.05),
       CASE WHEN i < 2000 THEN 'spawn'
            WHEN i % 50 = 9 THEN 'error'
            WHEN i % 10 IN (0, 1, 2, 3) THEN 'llm_call'
            WHEN i % 10 IN (4, 5, 6) THEN 'tool_call'
            WHEN i % 10 = 7 THEN 'commit'
            WHEN i % 10 = 8 THEN 'handoff'
            ELSE 'push' END,
       $run || '-e' || i,
       CASE WHEN i = 0 OR i >= 2000 THEN NULL WHEN i <= 40 THEN 'a-0'
            ELSE 'a-' || (i % 40 + 1) END,
       CASE WHEN i >= 2000 THEN NULL WHEN i = 0 THEN 'root_planner' WHEN i <= 40 THEN 'planner'
            ELSE 'worker' END,
       CASE WHEN i >= 2000 AND i % 10 IN (0, 1) THEN 'gpt-5.2'
            WHEN i >= 2000 AND i % 10 IN (2, 3) THEN 'claude-sonnet-4-5' END,
       CASE WHEN i >= 2000 AND i % 10 IN (0, 1, 2, 3) THEN 1800 + i % 500 END,
       CASE WHEN i >= 2000 AND i % 10 IN (0, 1, 2, 3) THEN 24000 END,
       CASE WHEN i >= 2000 AND i % 10 IN (0, 1, 2, 3) THEN 900 + i % 97 END,
       CASE WHEN i >= 2000 AND i % 10 = 4 THEN 'cargo build'
            WHEN i >= 2000 AND i % 10 = 5 THEN 'rg'
            WHEN i >= 2000 AND i % 10 = 6 THEN 'pytest' END,
       CASE WHEN i >= 2000 AND i % 10 IN (4, 5, 6) THEN i % 17 <> 0 END,
       CASE WHEN i >= 2000 AND i % 10 = 7 THEN md5($run || i) END,
       CASE WHEN i >= 2000 AND i % 10 = 7 THEN 'Fix the parser for case ' || i % 1000 END,
       CASE WHEN i >= 2000 AND i % 50 = 9 THEN 'build' END,
       CASE WHEN i >= 2000 AND i % 50 = 9 THEN 'error[E0308]: mismatched types at ' || i END,
       CASE WHEN i >= 2000 AND i % 10 = 8 AND i % 50 <> 9 THEN 'a-' || (i % 40 + 1) END,
       CASE WHEN i >= 2000 AND i % 10 = 8 AND i % 50 <> 9 THEN 'done' END,
       CASE WHEN i >= 2000 AND i % 10 = 8 AND i % 50 <> 9 THEN 'task ' || i % 997 || ' done' END,
       'agent-events', 'bench/explore.jsonl', i + 1, $stamp
FROM range($first, $last) AS t(i)
"""


def _at(index: int) -> str:
    """The RFC 3339 time of the index-th event."""
    seconds = START + index * STEP
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(seconds))) + "Z"


def _filters() -> list[tuple[str, str]]:
    middle = EVENTS // 2
    hour = int(3600 / STEP)  # events in an hour
    return [
        ("no filter", ""),
        ("kind=error", "kind=error"),
        ("ok=false", "ok=false"),
        ("agent", "agent=a-1234"),
        ("agent + subtree", "agent=a-7&subtree=1"),
        ("model", "model=claude-sonnet-4-5"),
        ("tool", "tool=pytest"),
        ("q (text)", "q=case%20417"),
        ("1 h window", f"start={_at(middle)}&end={_at(middle + hour)}"),
        ("oldest first", "order=oldest"),
    ]


def _load() -> None:
    warehouse.migrate()
    started = time.perf_counter()
    for first in range(0, EVENTS, CHUNK):
        params = {"run": RUN, "first": first, "last": min(first + CHUNK, EVENTS)}

        def insert(cur: duckdb.DuckDBPyConnection, params: dict[str, object] = params) -> None:
            run_rollups.insert_events(cur, INSERT_SQL, lambda stamp: {**params, "stamp": stamp})

        warehouse.write(insert)
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    total = row["n"] if row else 0
    print(f"   loaded {total:,} events in {time.perf_counter() - started:.1f} s", flush=True)


def _median_ms(client: Client, path: str) -> tuple[float, float, Any]:
    warm = client.get(path)
    assert warm.status_code == 200, warm.content[:300]
    timings = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        response = client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:200]
    ordered = sorted(timings)
    return statistics.median(timings), ordered[int(len(ordered) * 0.9)], warm.json()


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _export(client: Client, path: str) -> None:
    before = _rss_mib()
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    response = client.get(path)
    assert response.status_code == 200, response.content[:300]
    size = lines = 0
    for chunk in response.streaming_content:  # type: ignore[attr-defined]
        size += len(chunk)
        lines += chunk.count(b"\n")
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    print(
        f"   CSV export: {lines - 1:,} events, {size / 1e6:.1f} MB in {seconds:.2f} s"
        f" = {size / 1e6 / seconds:.0f} MB/s; resident set {before:.0f} MiB before,"
        f" peak {peak[0]:.0f} MiB (+{peak[0] - before:.0f} MiB)",
        flush=True,
    )


def run() -> None:
    _load()
    user = User.objects.create_superuser("bench", password="bench-password-123")
    _, token = ApiToken.issue(user, "bench")
    # Django's test client calls itself "testserver"; the bench process may serve it.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client(headers={"Authorization": f"Bearer {token}"})
    base = f"/api/runs/{RUN}/events?limit=50"
    worst = 0.0
    following = None
    for name, query in _filters():
        median, p90, body = _median_ms(client, f"{base}&{query}" if query else base)
        assert body["events"], f"{name} found nothing"
        if following is None:
            following = body["next"]
        worst = max(worst, median)
        print(f"   first page, {name:<16} median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)
    median, p90, _ = _median_ms(client, f"{base}&cursor={following}")
    worst = max(worst, median)
    print(f"   next page, no filter       median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)
    print(f"   slowest median: {worst:.1f} ms (target < 300 ms)", flush=True)
    # An agent's page asks for all of one agent's events (5,000 of the 10M), whatever the
    # window: figures, USD, timeline and gaps.
    median, p90, body = _median_ms(client, f"/api/runs/{RUN}/agents/a-1234")
    assert body["events"] == len(range(1234, EVENTS, AGENTS)), body["events"]
    print(f"   agent page, a-1234         median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)
    middle = EVENTS // 2
    window = f"start={_at(middle)}&end={_at(middle + min(EXPORT_EVENTS, EVENTS - middle))}"
    _export(client, f"/api/runs/{RUN}/events?format=csv&order=oldest&{window}")
    explore_replay.bench_replay(client, user, REPEAT)
