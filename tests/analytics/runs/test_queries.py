"""Runs analytics against a small run whose every figure was worked out by hand.

The run r1 (all times 2026-01-14, UTC):
  10:00 root spawns (root_planner); 10:00:10 p1 spawns (planner, parent root);
  10:01 w1 spawns (worker, parent p1); w2 never spawns: its first event names p1/worker.
  commits: a@10:05 (w1), a again@10:06 (a re-logged duplicate), b@10:20 (w2),
           no-sha@11:10 (w2), c@11:15 ok=false (w1), d@12:30 (w1)
  tool calls: 10:02 ok, 10:03 failed (w1); 11:30, 11:40 ok, 12:10 failed (w2)
  llm calls: 10:04 (w1, in 100, cached 1000, write 10, out 50); 11:00 (w2, in 200, out 70)
  error event 10:03:30 (w1); push 10:05:30 (w1); stop 12:40 (w1)
"""

import random
from datetime import UTC, datetime, timedelta

import orjson
import pytest

import warehouse
from analytics.runs import queries as runs
from ingest.pipelines.agent_events import ingest_body
from lib.errors import NotFoundError, ParameterError


def at(hhmmss: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-14T{hhmmss}+00:00").astimezone(UTC)


def line(ts: str, agent: str, event: str, **extra: object) -> dict:
    doc: dict = {"ts": f"2026-01-14T{ts}Z", "run": "r1", "agent": agent, "event": event}
    doc.update(extra)
    return doc


RUN = [
    line("10:00:00", "root", "spawn", role="root_planner"),
    line("10:00:10", "p1", "spawn", role="planner", parent="root"),
    line("10:01:00", "w1", "spawn", role="worker", parent="p1"),
    line("10:02:00", "w1", "tool_call", tool="cargo build", ok=True),
    line("10:03:00", "w1", "tool_call", tool="cargo test", ok=False),
    line("10:03:30", "w1", "error", error={"kind": "build", "message": "E0308"}),
    line(
        "10:04:00",
        "w1",
        "llm_call",
        model="m",
        usage={
            "input_tokens": 100,
            "cached_input_tokens": 1000,
            "cache_write_tokens": 10,
            "output_tokens": 50,
        },
    ),
    line("10:05:00", "w1", "commit", commit={"sha": "a"}),
    line("10:05:30", "w1", "push", push={"conflict": False}),
    line("10:06:00", "w1", "commit", commit={"sha": "a"}),
    line("10:20:00", "w2", "commit", commit={"sha": "b"}, parent="p1", role="worker"),
    line("11:00:00", "w2", "llm_call", model="m", usage={"input_tokens": 200, "output_tokens": 70}),
    line("11:10:00", "w2", "commit", commit={"files": 1}),
    line("11:15:00", "w1", "commit", commit={"sha": "c"}, ok=False),
    line("11:30:00", "w2", "tool_call", ok=True),
    line("11:40:00", "w2", "tool_call", ok=True),
    line("12:10:00", "w2", "tool_call", ok=False),
    line("12:30:00", "w1", "commit", commit={"sha": "d"}),
    line("12:40:00", "w1", "stop"),
]


@pytest.fixture(autouse=True)
def run_r1(lake: object) -> None:
    summary = ingest_body(b"".join(orjson.dumps(d) + b"\n" for d in RUN))
    assert summary.accepted == len(RUN)


def test_runs_list_counts_a_relogged_sha_once() -> None:
    (row,) = runs.list_runs()
    assert row.run == "r1"
    assert (row.first_ts, row.last_ts) == (at("10:00:00"), at("12:40:00"))
    assert row.agents == 4
    assert row.events == 18  # 19 lines, the second `a` dropped
    assert row.commits == 4  # a, b, no-sha, d (c failed)
    assert row.errors == 4  # failed tool calls at 10:03 and 12:10, the error event, commit c
    assert (row.input_tokens, row.output_tokens) == (300, 120)


def test_commit_rate_per_hour_with_its_peak() -> None:
    result = runs.commit_rate("r1", 3600)
    assert [(p.t, p.commits) for p in result.points] == [
        (at("10:00:00"), 2),
        (at("11:00:00"), 1),
        (at("12:00:00"), 1),
    ]
    assert result.total == 4
    assert result.peak == runs.CommitPoint(at("10:00:00"), 2)


def test_commit_rate_fills_empty_buckets_with_zero() -> None:
    result = runs.commit_rate("r1", 1800)
    assert [p.commits for p in result.points] == [2, 0, 1, 0, 0, 1]  # 10:00 .. 12:30
    assert result.points[0].t == at("10:00:00")


def test_commit_rate_in_a_window_is_aligned_to_the_epoch() -> None:
    window = runs.TimeRange(at("10:10:00"), at("11:20:00"))
    result = runs.commit_rate("r1", 3600, window)
    assert [(p.t, p.commits) for p in result.points] == [
        (at("10:00:00"), 1),
        (at("11:00:00"), 1),
    ]


def test_stalls_are_gaps_with_activity_inside() -> None:
    result = runs.stalls("r1", timedelta(minutes=30), now=at("12:45:00"))
    assert [(s.start, s.end, s.minutes) for s in result.stalls] == [
        (at("10:20:00"), at("11:10:00"), 50.0),
        (at("11:10:00"), at("12:30:00"), 80.0),
    ]
    assert result.current is None  # 15 minutes since d, under min_gap


def test_the_current_stall_counts_to_now_while_the_run_is_still_logging() -> None:
    # The last commit at 12:30, the last event at 12:40.
    gap = timedelta(minutes=5)
    result = runs.stalls("r1", gap, now=at("12:45:00"))
    assert [s.minutes for s in result.stalls] == [15.0, 50.0, 80.0]
    assert result.current == runs.CurrentStall(at("12:30:00"), 15.0)
    assert runs.stalls("r1", gap, now=at("12:55:00")).current == runs.CurrentStall(
        at("12:30:00"), 25.0
    )
    # Quiet for more than 15 minutes: no longer logging, so no current stall.
    assert runs.stalls("r1", gap, now=at("12:55:01")).current is None
    # A window that ends before the last event has no "now" in it.
    early = runs.TimeRange(end=at("12:35:00"))
    assert runs.stalls("r1", gap, early, now=at("12:45:00")).current is None


def test_a_quiet_gap_is_not_a_stall() -> None:
    ingest_body(
        orjson.dumps(
            {
                "ts": "2026-01-14T15:00:00Z",
                "run": "r1",
                "agent": "w1",
                "event": "commit",
                "commit": {"sha": "e"},
            }
        )
        + b"\n"
    )
    # 12:30 -> 15:00 is 150 minutes without a commit, but the run was busy only until the
    # stop at 12:40: it is still a stall (activity inside the gap). A gap with nothing
    # logged inside is not: 15:00 -> 17:00 below.
    ingest_body(
        orjson.dumps(
            {
                "ts": "2026-01-14T17:00:00Z",
                "run": "r1",
                "agent": "w1",
                "event": "commit",
                "commit": {"sha": "f"},
            }
        )
        + b"\n"
    )
    gaps = runs.stalls("r1", timedelta(minutes=30)).stalls
    assert [(s.start, s.end, s.busy_events) for s in gaps] == [
        (at("10:20:00"), at("11:10:00"), 1),
        (at("11:10:00"), at("12:30:00"), 4),
        (at("12:30:00"), at("15:00:00"), 1),
    ]


# How stalls were counted before the window query: a correlated count per gap, and the
# run's ends in a second pass (the independent method the query is checked against).
CORRELATED_STALLS_SQL = (
    runs._RUN_EVENTS
    + """,
commits AS (
    SELECT ts, lag(ts) OVER (ORDER BY ts) AS previous
    FROM run_events WHERE is_commit
),
gaps AS (
    SELECT previous AS gap_start, ts AS gap_end FROM commits
    WHERE previous IS NOT NULL AND ts - previous >= to_seconds($min_gap)
)
SELECT g.gap_start, g.gap_end,
       (SELECT count(*) FROM run_events AS e
        WHERE NOT e.is_commit AND e.ts > g.gap_start AND e.ts < g.gap_end) AS busy_events
FROM gaps AS g
ORDER BY g.gap_start
"""
)
RUN_ENDS_SQL = (
    runs._RUN_EVENTS
    + """
SELECT max(ts) FILTER (WHERE is_commit) AS last_commit,
       min(ts) AS first_event,
       max(ts) AS last_event
FROM run_events
"""
)


def random_run(seed: int, events: int) -> bytes:
    """Bursts of work and quiet spells on a minute grid (so events share instants with
    commits), shas re-logged and failed, commits without a sha."""
    rng = random.Random(seed)
    lines, minute = [], 0
    for i in range(events):
        minute += rng.choice([0, 0, 1, 1, 2, 3, 5, 8, 13, 40, 90])
        kind = rng.choice(["commit", "commit", "tool_call", "llm_call", "error", "push"])
        doc: dict = {"ts": 1768384800 + minute * 60, "run": "random", "agent": f"w{i % 7}"}
        doc["event"] = kind
        if kind == "commit" and rng.random() < 0.9:
            doc["commit"] = {"sha": f"s{rng.randrange(events // 3)}"}
        if kind in ("commit", "tool_call", "push") and rng.random() < 0.3:
            doc["ok"] = False
        lines.append(orjson.dumps(doc) + b"\n")
    return b"".join(lines)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stalls_match_a_correlated_count_on_a_random_run(seed: int) -> None:
    ingest_body(random_run(seed, 1500))
    window = runs.TimeRange(at("14:00:00"), at("23:00:00") + timedelta(days=3))
    for span in (runs.TimeRange(), window):
        ends = warehouse.fetch_one(RUN_ENDS_SQL, {"run": "random", **span.params()})
        for minutes in (1, 4, 30, 45, 120):
            params = {"run": "random", "min_gap": minutes * 60.0, **span.params()}
            expected = warehouse.fetch_all(CORRELATED_STALLS_SQL, params)
            rows = warehouse.fetch_all(runs.STALLS_SQL, params)
            gaps = [r for r in rows if r["gap_start"] is not None]
            assert [(g["gap_start"], g["gap_end"], g["busy_events"]) for g in gaps] == [
                (e["gap_start"], e["gap_end"], e["busy_events"]) for e in expected
            ]
            assert {k: rows[0][k] for k in ("last_commit", "first_event", "last_event")} == ends
        assert len(expected) > 5  # the last min_gap (2 h) still finds gaps to compare


def test_error_rate_per_hour() -> None:
    result = runs.error_rate("r1", 3600)
    assert [(p.attempts, p.errors) for p in result.points] == [(6, 2), (5, 1), (2, 1)]
    assert [p.rate for p in result.points] == [2 / 6, 1 / 5, 1 / 2]
    assert result.drift.trend == "flat"  # three buckets are too few to claim a trend
    assert result.drift.buckets == 3


def test_the_agent_tree() -> None:
    by_agent = {a.agent: a for a in runs.agents("r1")}
    assert {k: (v.parent, v.role) for k, v in by_agent.items()} == {
        "root": (None, "root_planner"),
        "p1": ("root", "planner"),
        "w1": ("p1", "worker"),
        "w2": ("p1", "worker"),
    }
    w1, w2 = by_agent["w1"], by_agent["w2"]
    assert (w1.events, w1.commits, w1.errors) == (10, 2, 3)
    assert (
        w1.input_tokens,
        w1.cached_input_tokens,
        w1.cache_write_tokens,
        w1.output_tokens,
    ) == (100, 1000, 10, 50)
    assert (w2.events, w2.commits, w2.errors, w2.input_tokens, w2.output_tokens) == (
        6,
        2,
        1,
        200,
        70,
    )


def test_a_spawn_event_is_authoritative_for_the_tree() -> None:
    ingest_body(
        orjson.dumps(
            {
                "ts": "2026-01-14T09:59:00Z",
                "run": "r1",
                "agent": "w1",
                "event": "tool_call",
                "parent": "root",
                "role": "judge",
            }
        )
        + b"\n"
    )
    w1 = next(a for a in runs.agents("r1") if a.agent == "w1")
    assert (w1.parent, w1.role) == ("p1", "worker")


def test_unknown_runs_and_inverted_ranges_are_errors() -> None:
    with pytest.raises(NotFoundError):
        runs.commit_rate("nope", 3600)
    with pytest.raises(ParameterError):
        runs.TimeRange(at("11:00:00"), at("10:00:00"))
    with pytest.raises(ParameterError, match="buckets"):
        runs.commit_rate("r1", 1, runs.TimeRange(at("00:00:00"), at("23:00:00")))


def test_event_kinds_fold_unknown_kinds_into_other() -> None:
    ingest_body(
        orjson.dumps({"ts": "2026-01-14T12:50:00Z", "run": "r1", "agent": "w1", "event": "thought"})
        + b"\n"
    )
    kinds = {k.kind: k.events for k in runs.event_kinds("r1")}
    assert kinds == {
        "spawn": 3,
        "tool_call": 5,
        "error": 1,
        "llm_call": 2,
        "commit": 5,
        "push": 1,
        "stop": 1,
        "other": 1,
    }
