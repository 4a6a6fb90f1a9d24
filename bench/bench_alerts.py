"""Alert evaluation: one pass of 200 rules over 16 instances and 50 runs (issue 7: < 2 s).

`python -m bench alerts`. The warehouse gets 6 hours of history generated in bulk inside
DuckDB: 16 instances scraped every 15 s (KV usage and a preemption counter, with a
failing instance and a preempting one), and 50 runs of agent events (a commit every
20 s, a tool call every 5 s, an llm_call with usage every 30 s; some runs stall, some
decay). 200 rules cycle through the seven kinds with every scope (all, one run or
instance, a team). Figures: the first evaluation (which creates states, transitions and
notifications) and the median of 10 later ones, a minute apart each, as the beat task
runs them; each includes reading the facts, every rule and the Django writes.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime, timedelta

import duckdb

import warehouse
from analytics.alerts.engine import evaluate_rules
from analytics.alerts.models import AlertRule, Channel, ChannelKind, Notification
from analytics.costs.models import ModelPrice, Team
from analytics.serving.models import ScrapeTarget

INSTANCES = 16
RUNS = 50
RULES = 200
HOURS = 6
END = datetime(2026, 1, 14, 14, 0, tzinfo=UTC)
START = END - timedelta(hours=HOURS)

SAMPLES_SQL = """
INSERT INTO serving_samples
SELECT 'gpu-' || lpad(inst::VARCHAR, 2, '0'),
       to_timestamp($start + s * 15),
       CASE WHEN metric = 'kv_usage' THEN 'vllm:kv_cache_usage_perc' ELSE 'vllm:num_preemptions' END,
       '{"engine":"0"}',
       CASE WHEN metric = 'kv_usage' THEN 'gauge' ELSE 'counter' END,
       CASE WHEN metric = 'kv_usage' THEN 0.5 + 0.45 * sin(s / 40.0 + inst)
            ELSE s * (1 + inst % 3) END,
       NULL, metric, '0', NULL,
       CASE WHEN metric = 'kv_usage' THEN NULL
            WHEN inst = 3 AND s > $n - 20 THEN 60.0 ELSE 1 + inst % 3 END
FROM range($instances) AS i(inst), range($n) AS r(s),
     (VALUES ('kv_usage'), ('preemptions')) AS m(metric)
"""

SCRAPES_SQL = """
INSERT INTO serving_scrapes (instance, ts, up, error, source, duration_ms, samples,
                             engine_kind, model, engines, resets)
SELECT 'gpu-' || lpad(inst::VARCHAR, 2, '0'), to_timestamp($start + s * 15),
       NOT (inst = 7 AND s > $n - 30),
       CASE WHEN inst = 7 AND s > $n - 30 THEN 'connection refused' END,
       'scrape', 12.0, 289, 'v1', 'meta-llama/Llama-3.1-8B', 1, 0
FROM range($instances) AS i(inst), range($n) AS r(s)
"""

# Per run: a commit every 20 s (stalled runs stop committing for the last 40 minutes,
# decaying runs commit every 100 s in the last hour), a tool call every 5 s, an llm_call
# with usage every 30 s.
EVENTS_SQL = """
INSERT INTO events (run, agent, ts, event, id, model, input_tokens, cached_input_tokens,
                    output_tokens, tool, ok, commit_sha, source_kind, source, source_line,
                    ingested_at)
SELECT 'run-' || lpad(r::VARCHAR, 2, '0'), 'w-' || (s % 9), to_timestamp($start + s * 5),
       CASE WHEN s % 6 = 0 THEN 'llm_call' WHEN s % 4 = 0 THEN 'commit' ELSE 'tool_call' END,
       'run-' || r || '-' || s,
       CASE WHEN s % 6 = 0 THEN 'claude-sonnet-4-5' END,
       CASE WHEN s % 6 = 0 THEN 3000 END, CASE WHEN s % 6 = 0 THEN 20000 END,
       CASE WHEN s % 6 = 0 THEN 800 END,
       CASE WHEN s % 6 <> 0 AND s % 4 <> 0 THEN 'cargo test' END,
       CASE WHEN s % 6 <> 0 AND s % 4 <> 0 THEN (s * (r + 1)) % (50 - s / 200)::INT <> 0 END,
       CASE WHEN s % 4 = 0 THEN md5(r::VARCHAR || '-' || s) END,
       'agent-events', 'bench/run-' || r || '.jsonl', s + 1, now()
FROM range($runs) AS rr(r), range($n) AS t(s)
WHERE NOT (s % 6 <> 0 AND s % 4 = 0 AND r % 10 = 1 AND s > $n - 480)
  AND NOT (s % 6 <> 0 AND s % 4 = 0 AND r % 10 = 2 AND s > $n - 720 AND s % 20 <> 0)
"""


def _generate() -> None:
    params = {"start": START.timestamp(), "instances": INSTANCES, "n": HOURS * 240}

    def work(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(SAMPLES_SQL, params)
        cur.execute(SCRAPES_SQL, params)
        cur.execute(EVENTS_SQL, {"start": START.timestamp(), "runs": RUNS, "n": HOURS * 720})

    warehouse.write(work)
    for i in range(INSTANCES):
        ScrapeTarget.objects.get_or_create(
            name=f"gpu-{i:02d}",
            defaults={"url": f"http://10.0.0.{i}:8000/metrics", "labels": {"team": f"t{i % 4}"}},
        )
    for t in range(4):
        Team.objects.get_or_create(
            name=f"t{t}", defaults={"run_patterns": [f"run-{t}*"], "daily_budget_usd": 50}
        )
    ModelPrice.objects.get_or_create(
        model="claude-sonnet-4-5",
        valid_from=START.date(),
        defaults={"input_per_mtok": 3, "cached_input_per_mtok": 0.3, "output_per_mtok": 15},
    )


# (kind, threshold, params, what a one-subject scope names)
KINDS: tuple[tuple[str, float | None, dict[str, object], str], ...] = (
    ("preemption_rate", 2.0, {"window": "5m"}, "instance"),
    ("kv_usage", 0.9, {}, "instance"),
    ("target_down", None, {}, "instance"),
    ("commit_stall", None, {"factor": 5, "floor": "5m"}, "run"),
    ("commit_decay", 0.5, {}, "run"),
    ("error_drift", 0.0, {}, "run"),
    ("daily_spend", 20.0, {}, "run"),
)


def _rules() -> None:
    channel, _ = Channel.objects.get_or_create(
        name="bench", defaults={"kind": ChannelKind.WEBHOOK, "target": "http://127.0.0.1:9/"}
    )
    for i in range(RULES):
        kind, threshold, params, noun = KINDS[i % len(KINDS)]
        variant = i // len(KINDS) % 3
        if variant == 0:
            scope: dict[str, str] = {}
        elif variant == 1:
            scope = {"team": f"t{i % 4}"}
        else:
            scope = {
                noun: f"gpu-{i % INSTANCES:02d}" if noun == "instance" else f"run-{i % RUNS:02d}"
            }
        rule = AlertRule.objects.create(
            name=f"rule-{i:03d}",
            kind=kind,
            threshold=threshold,
            params=params,
            scope=scope,
            for_seconds=60 * (i % 3),
        )
        rule.channels.add(channel)


def run() -> None:
    from bench.bench_serving import _fresh_lake

    _fresh_lake("alerts")
    started = time.perf_counter()
    _generate()
    rows = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    print(
        f"   history: {rows['n'] if rows else 0:,} events, {INSTANCES} instances x {HOURS} h"
        f" of 15 s scrapes ({time.perf_counter() - started:.1f} s to generate)"
    )
    _rules()
    first = evaluate_rules(END)
    print(
        f"   first evaluation: {first.duration_ms:,.0f} ms ({first.rules} rules,"
        f" {first.subjects} subjects, {first.transitions} transitions,"
        f" {Notification.objects.count()} notifications queued)"
    )
    if first.errors:
        print(f"   errors: {first.errors}")
    later = [evaluate_rules(END + timedelta(minutes=m)).duration_ms for m in range(1, 11)]
    print(
        f"   later evaluations (10, a minute apart): median {statistics.median(later):,.0f} ms,"
        f" max {max(later):,.0f} ms (target < 2,000 ms)"
    )
