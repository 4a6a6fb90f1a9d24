"""Agent-event ingest throughput against DuckDB's own read_json, side by side.

Writes a 1,000,000-event file (FLEETSCOPE_BENCH_EVENTS to change), then: (1) read_json into
a plain DuckDB table and into a DuckLake table of the same warehouse, each the median of 3
runs; (2) our pipeline in this process on an open warehouse, timed as read_json is (like for
like: the median of 3, each into a fresh warehouse); (3) `manage.py ingest agent-events` on
the same file in a child process, timed whole (Python, Django and the warehouse's opening
included), with its peak memory (ru_maxrss). Each figure has its CPU time beside it.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import orjson
from django.test import override_settings

import warehouse
from bench import measured
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.loading import IngestSummary

EVENTS = int(os.environ.get("FLEETSCOPE_BENCH_EVENTS", "1000000"))

# A realistic mix: llm calls with usage, tool calls (some failing), commits, pushes,
# errors, handoffs; three runs, 600 agents; half the timestamps as Unix seconds.
GENERATE_SQL = """
COPY (
    SELECT
        CASE WHEN i % 2 = 0 THEN to_json(1768384800 + i * 0.05)
             ELSE to_json(strftime(to_timestamp(1768384800 + i * 0.05), '%Y-%m-%dT%H:%M:%S.%gZ'))
        END AS ts,
        ? || (i % 3) AS run,
        'w-' || (i % 600) AS agent,
        kind AS event,
        'e' || i AS id,
        CASE WHEN kind = 'llm_call' THEN 'gpt-5.2' END AS model,
        CASE WHEN kind = 'llm_call' THEN {'input_tokens': 1800 + i % 500, 'cached_input_tokens': 24000,
            'cache_write_tokens': 0, 'output_tokens': 950 + i % 97} END AS usage,
        CASE WHEN kind = 'tool_call' THEN 'cargo build' END AS tool,
        CASE WHEN kind IN ('tool_call', 'push') THEN i % 11 <> 0 END AS ok,
        CASE WHEN kind IN ('llm_call', 'tool_call') THEN (i % 40000)::DOUBLE END AS duration_ms,
        CASE WHEN kind = 'commit' THEN {'sha': md5(i::VARCHAR)[:12], 'files': i % 7, 'insertions': i % 300,
            'deletions': i % 40, 'message': 'css: parse @layer rule ' || i} END AS "commit",
        CASE WHEN kind = 'error' THEN {'kind': 'build', 'message': 'E0308 mismatched types'} END AS error,
        CASE WHEN kind = 'handoff' THEN {'to': 'p-css', 'status': 'done', 'notes': 'parsed'} END AS handoff
    FROM (
        SELECT i, ['llm_call', 'tool_call', 'tool_call', 'commit', 'push', 'error', 'handoff', 'llm_call'][i % 8 + 1] AS kind
        FROM range(?) AS t(i)
    )
) TO '{path}' (FORMAT json)
"""


def write_file(path: Path, events: int = EVENTS, runs_named: str = "run-") -> None:
    """`events` events of three runs named `runs_named` 0, 1 and 2 (bench_scale writes one
    file per writer, each of its own runs)."""
    con = duckdb.connect()
    con.execute(GENERATE_SQL.replace("{path}", str(path)), [runs_named, events])
    con.close()


def _time(
    label: str,
    work: Callable[[], object],
    *,
    setup: Callable[[], object] | None = None,
    times: int = 1,
) -> float:
    """The median of `times` runs of `work`, each after `setup` (this machine's timings
    vary by +-20% from run to run), with the CPU time it used, this process's and its
    children's: on 2 cores, the wall time cannot fall below half of it."""
    runs, cpu = [], []
    for _ in range(times):
        if setup is not None:
            setup()
        cpu_before = _cpu_seconds()
        started = time.perf_counter()
        work()
        runs.append(time.perf_counter() - started)
        cpu.append(_cpu_seconds() - cpu_before)
    seconds = statistics.median(runs)
    each = f"runs {', '.join(f'{r:.2f}' for r in runs)}; " if times > 1 else ""
    _report(label, seconds, statistics.median(cpu), each)
    return seconds


def _report(label: str, seconds: float, cpu: float, runs: str = "") -> None:
    print(
        f"   {label}: {seconds:.2f} s ({EVENTS / seconds:,.0f} events/s; {runs}CPU {cpu:.2f} s)",
        flush=True,
    )


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run() -> None:
    warehouse.migrate()
    folder = Path(tempfile.mkdtemp(prefix="fleetscope-bench-ingest-"))
    path = folder / "events.jsonl"
    write_file(path)
    print(f"   file: {EVENTS:,} events, {path.stat().st_size / 1e6:.0f} MB", flush=True)

    memory = duckdb.connect()
    plain = _time(
        "DuckDB read_json -> in-memory table",
        lambda: memory.execute(
            f"CREATE TABLE t AS SELECT * FROM read_json('{path}', format = 'newline_delimited')"
        ),
        setup=lambda: memory.execute("DROP TABLE IF EXISTS t"),
        times=3,
    )
    memory.close()
    cur = warehouse.cursor()  # opened before timing, as for our in-process run below
    lake = _time(
        "DuckDB read_json -> DuckLake table",
        lambda: cur.execute(
            f"CREATE TABLE bench_read_json AS SELECT * FROM read_json('{path}', format = 'newline_delimited')"
        ),
        setup=lambda: cur.execute("DROP TABLE IF EXISTS bench_read_json"),
        times=3,
    )
    cur.execute("DROP TABLE bench_read_json")

    # Like for like: our pipeline in this process on a warehouse already open, timed as
    # read_json is timed above (the median of 3), each run into a fresh warehouse.
    opened: list[override_settings] = []

    def fresh_warehouse() -> None:
        if opened:
            warehouse.close()
            opened.pop().disable()
        own = folder / f"in-process-{len(summaries)}"
        own.mkdir()
        overrides = override_settings(
            DATA_DIR=own,
            FLEETSCOPE_WAREHOUSE=f"ducklake:sqlite:{own / 'warehouse.sqlite'}",
            FLEETSCOPE_WAREHOUSE_DATA=f"{own / 'lake'}/",
        )
        overrides.enable()
        opened.append(overrides)
        warehouse.close()
        warehouse.migrate()

    summaries: list[IngestSummary] = []
    in_process = _time(
        "our pipeline in this process (run_agent_events, warehouse open)",
        lambda: summaries.append(run_agent_events([str(path)])),
        setup=fresh_warehouse,
        times=3,
    )
    stored = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    print(
        f"   stored {stored['n'] if stored else 0:,}, quarantined {summaries[-1].quarantined:,}",
        flush=True,
    )
    warehouse.close()  # the child process is the only writer from here
    opened.pop().disable()
    for own in folder.glob("in-process-*"):
        shutil.rmtree(own)

    # Launched through bench/measured.py, so that its peak memory is its own (a command
    # launched from here would report this process's peak of about 900 MiB as its own).
    command = measured.run(
        [sys.executable, "manage.py", "ingest", "agent-events", str(path)],
        env=os.environ.copy(),
    )
    ours = command.seconds
    _report(
        "manage.py ingest agent-events (validate, dedup, quarantine, positions)",
        ours,
        command.cpu_seconds,
    )
    # The command's own figure (its summary's `seconds`): from finding the files to the
    # summary, opening the warehouse included; the rest is Python and Django starting.
    inside = float(orjson.loads(command.stdout.splitlines()[-1])["seconds"])
    print(
        f"   of which start-up {ours - inside:.2f} s, ingest {inside:.2f} s "
        f"({EVENTS / inside:,.0f} events/s)",
        flush=True,
    )
    print(
        f"   ratio, like for like (both in process, warehouse open) vs read_json into a "
        f"DuckLake table: {lake / in_process:.2f}x",
        flush=True,
    )
    print(f"   ratio, the command vs read_json into a DuckLake table: {lake / ours:.2f}x")
    print(f"   ratio, the command vs read_json into an in-memory table: {plain / ours:.2f}x")
    print(
        f"   ratio, the command without start-up vs read_json into a DuckLake table: "
        f"{lake / inside:.2f}x",
        flush=True,
    )
    print(
        f"   ingest peak memory (the command's ru_maxrss): {command.peak_mib:.0f} MiB", flush=True
    )
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    print(f"   events stored: {row['n'] if row else 0:,}", flush=True)
    path.unlink()
