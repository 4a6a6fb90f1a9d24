"""The run totals kept at ingest against the same figures aggregated from every stored
event (EVERY_EVENT_SQL, the query GET /api/runs ran before the totals existed): after
batches that re-log shas, replace a sha's first logging, fail commits and repeat ids,
after the Claude Code updates of stored events, and after migrating an older lake. After
every test the agents' copies (agent_rows, agent_links, the agent of run_commits) are
checked against the same projection of every stored event."""

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

import warehouse
from analytics.runs import queries as runs
from ingest.pipelines import run_rollups
from ingest.pipelines.agent_events import ingest_body, run_agent_events
from ingest.pipelines.claude_code import run_claude_code
from tests.conftest import FIXTURE_ROOT
from warehouse.schema.agents import AGENT_LINK_COLUMNS, AGENT_ROW_COLUMNS

pytestmark = pytest.mark.usefixtures("lake")

REPO = Path(__file__).resolve().parents[3]
CLAUDE_CODE = FIXTURE_ROOT / "agent-logs"

EVERY_EVENT_SQL = """
WITH commit_rows AS (
    SELECT run, ok FROM events
    WHERE event = 'commit' AND commit_sha IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
    UNION ALL
    SELECT run, ok FROM events WHERE event = 'commit' AND commit_sha IS NULL
),
commit_stats AS (
    SELECT run,
           count(*) AS logged,
           count(*) FILTER (WHERE ok IS DISTINCT FROM false) AS commits,
           count(*) FILTER (WHERE ok = false) AS failed
    FROM commit_rows
    GROUP BY run
),
totals AS (
    SELECT run,
           min(ts) AS first_ts,
           max(ts) AS last_ts,
           count(DISTINCT agent) AS agents,
           count(*) FILTER (WHERE event <> 'commit') AS other_events,
           count(*) FILTER (
               WHERE event = 'error'
                  OR (event IN ('tool_call', 'llm_call', 'push') AND ok = false)
           ) AS other_errors,
           coalesce(sum(input_tokens), 0) AS input_tokens,
           coalesce(sum(output_tokens), 0) AS output_tokens,
           min(source_kind) AS source_kind
    FROM events
    GROUP BY run
)
SELECT t.run, t.first_ts, t.last_ts, t.agents,
       t.other_events + coalesce(c.logged, 0) AS events,
       coalesce(c.commits, 0) AS commits,
       t.other_errors + coalesce(c.failed, 0) AS errors,
       t.input_tokens, t.output_tokens, t.source_kind
FROM totals AS t LEFT JOIN commit_stats AS c USING (run)
ORDER BY t.last_ts DESC, t.run
"""


# Each copy as a projection of every stored event: the copy, and the rows it must hold.
COPIES_OF_EVERY_EVENT = {
    "agent_rows": f"SELECT {', '.join(AGENT_ROW_COLUMNS)} FROM events",
    "agent_links": f"SELECT {', '.join(AGENT_LINK_COLUMNS)} FROM events"
    " WHERE parent IS NOT NULL OR role IS NOT NULL",
    "run_commits": """
        SELECT run, commit_sha, agent, ts, source, source_line, ok FROM events
        WHERE event = 'commit' AND commit_sha IS NOT NULL
        QUALIFY row_number() OVER (
            PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
    """,
}
COPY_COLUMNS = {
    "agent_rows": ", ".join(AGENT_ROW_COLUMNS),
    "agent_links": ", ".join(AGENT_LINK_COLUMNS),
    "run_commits": "run, commit_sha, agent, ts, source, source_line, ok",
}


def copies_differ() -> dict[str, dict[str, Any]]:
    """Per copy, the rows it holds that every event does not give, and the reverse."""
    differ = {}
    for table, truth in COPIES_OF_EVERY_EVENT.items():
        stored = f"SELECT {COPY_COLUMNS[table]} FROM {table}"
        row = warehouse.fetch_one(
            f"SELECT (SELECT count(*) FROM ({stored} EXCEPT ALL {truth})) AS extra,"
            f" (SELECT count(*) FROM ({truth} EXCEPT ALL {stored})) AS missing"
        )
        assert row is not None
        if row["extra"] or row["missing"]:
            differ[table] = row
    return differ


@pytest.fixture(autouse=True)
def copies_match_every_event(lake: Any) -> Any:
    yield
    assert copies_differ() == {}
    # The check sees rows: the tests store events, links and first loggings.
    counts = warehouse.fetch_one(
        "SELECT (SELECT count(*) FROM agent_rows) AS r, (SELECT count(*) FROM events) AS e"
    )
    assert counts is not None and counts["r"] == counts["e"]


def every_event() -> list[runs.RunTotals]:
    rows = warehouse.fetch_all(EVERY_EVENT_SQL)
    for row in rows:
        row["first_ts"] = row["first_ts"].astimezone(UTC)
        row["last_ts"] = row["last_ts"].astimezone(UTC)
    return [runs.RunTotals(**row) for row in rows]


def body(*events: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def event(minute: int, agent: str, kind: str, run: str = "r1", **extra: Any) -> dict[str, Any]:
    return {"ts": 1768384800 + minute * 60, "run": run, "agent": agent, "event": kind, **extra}


BATCHES = [
    body(
        event(0, "root", "spawn", role="root_planner", id="e1"),
        event(1, "w1", "llm_call", usage={"input_tokens": 100, "output_tokens": 40}),
        event(2, "w1", "commit", commit={"sha": "a"}),
        event(3, "w1", "commit", commit={"sha": "b"}, ok=False),  # a failed commit
        event(4, "w1", "tool_call", ok=False),
        event(5, "w1", "commit", commit={"files": 1}),  # no sha: counts every time
        event(9, "x1", "commit", run="r2", commit={"sha": "a"}),  # the same sha, another run
    ),
    body(
        event(0, "root", "spawn", role="root_planner", id="e1"),  # run + id stored: dropped
        event(6, "w2", "commit", commit={"sha": "a"}, ok=False),  # re-logged later: no effect
        event(7, "w2", "commit", commit={"sha": "c"}),
        event(8, "w2", "error", error={"kind": "build"}),
        event(8, "w2", "push", ok=False, id="p1"),
        event(9, "w2", "push", ok=True, id="p1"),  # the same run + id in one batch: dropped
        event(10, "w2", "commit", commit={"files": 2}, ok=False),
    ),
    body(
        # c logged earlier than its stored first logging, failed: c now failed.
        event(6, "w3", "commit", commit={"sha": "c"}, ok=False),
        # b logged earlier again and landed: b now landed.
        event(1, "w3", "commit", commit={"sha": "b"}),
        event(11, "w1", "llm_call", usage={"input_tokens": 5, "output_tokens": 7}),
        event(0, "x2", "spawn", run="r2"),  # an earlier first event for r2
    ),
]


def test_batches_keep_the_totals_of_every_event() -> None:
    summaries = [ingest_body(batch) for batch in BATCHES]
    assert [s.duplicates for s in summaries] == [0, 2, 0]
    listed = runs.list_runs()
    assert listed == every_event()
    r1 = next(r for r in listed if r.run == "r1")
    assert (r1.agents, r1.events, r1.commits, r1.errors) == (4, 11, 3, 5)
    assert (r1.input_tokens, r1.output_tokens) == (105, 47)


def test_each_batch_alone_is_already_exact() -> None:
    for batch in BATCHES:
        ingest_body(batch)
        assert runs.list_runs() == every_event()


@pytest.mark.parametrize("inlined_up_to", [100, 0])
@pytest.mark.parametrize("commit_bytes", [1 << 20, 1])
def test_chunks_of_a_file_keep_the_totals_in_one_transaction_or_many(
    tmp_path: Path, commit_bytes: int, inlined_up_to: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # About 10 chunks: all of them in one transaction, whose totals are added at its end
    # (shas re-logged and first loggings replaced within it), or each in its own. Their
    # rows are inserted (kept in memory: counted by the loading thread), or staged and
    # added as files (counted where they were parsed, the counts merged at the end).
    monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", inlined_up_to)
    new_runs: list[bool] = []
    add_to_totals = run_rollups._add_to_totals

    def recording(cur: duckdb.DuckDBPyConnection, batches: list, **kwargs: bool) -> None:
        new_runs.append(kwargs.get("new_runs", False))
        add_to_totals(cur, batches, **kwargs)

    monkeypatch.setattr(run_rollups, "_add_to_totals", recording)
    log = tmp_path / "run.jsonl"
    log.write_bytes(b"".join(BATCHES))
    summary = run_agent_events([str(log)], chunk_bytes=256, commit_bytes=commit_bytes)
    assert (summary.accepted, summary.duplicates) == (16, 2)
    listed = runs.list_runs()
    assert listed == every_event()
    r1 = next(r for r in listed if r.run == "r1")
    assert (r1.agents, r1.events, r1.commits, r1.errors) == (4, 11, 3, 5)
    # Only the load's first transaction adds to runs with nothing stored: it skips the
    # lookups in run_commits and run_agents.
    assert new_runs[0] and not any(new_runs[1:]) and len(new_runs) > (commit_bytes == 1)
    # Another file adding to the same runs looks them up.
    other = tmp_path / "more.jsonl"
    other.write_bytes(BATCHES[2].replace(b'"w3"', b'"w4"') + BATCHES[0].replace(b'"e1"', b'"e9"'))
    new_runs.clear()
    run_agent_events([str(other)], chunk_bytes=256, commit_bytes=commit_bytes)
    assert new_runs and not any(new_runs)
    assert runs.list_runs() == every_event()


def test_rows_folded_into_one_per_run_keep_the_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_rollups, "COMPACT_ROWS", 2)
    counts = []
    for batch in BATCHES:
        ingest_body(batch)
        assert runs.list_runs() == every_event()
        counts.append(warehouse.fetch_one("SELECT count(*) AS n FROM run_rollups"))
    # The second batch adds a row for r1 (one row could go); the third adds one per run,
    # three rows could go, and they are folded into one per run.
    assert counts == [{"n": 2}, {"n": 3}, {"n": 2}]


def test_many_runs_are_not_folded_again_at_every_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folding waits until COMPACT_ROWS rows could go, however many runs there are: with
    more runs than COMPACT_ROWS, folding at a fixed row count refolded every batch."""
    monkeypatch.setattr(run_rollups, "COMPACT_ROWS", 3)
    folds: list[bool] = []
    many = body(*(event(i, f"a{i}", "stop", run=f"r{i}") for i in range(6)))
    original = run_rollups._compact_if_long

    def counting(cur: duckdb.DuckDBPyConnection) -> None:
        before = cur.execute("SELECT count(*) FROM run_rollups").fetchone()
        original(cur)
        after = cur.execute("SELECT count(*) FROM run_rollups").fetchone()
        folds.append(before != after)

    monkeypatch.setattr(run_rollups, "_compact_if_long", counting)
    ingest_body(many)  # six runs, six rows: nothing to fold
    ingest_body(body(event(10, "a0", "stop", run="r0")))  # one row could go
    ingest_body(body(event(11, "a1", "stop", run="r1"), event(12, "a2", "stop", run="r2")))
    assert folds == [False, False, True]
    assert warehouse.fetch_one("SELECT count(*) AS n FROM run_rollups") == {"n": 6}
    assert runs.list_runs() == every_event()


# A writer's INSERT that stamps its rows with the given ingested_at (insert_events' part).
STAMPED_INSERT = """
INSERT INTO events (run, agent, ts, event, ok, source_kind, source, source_line, ingested_at)
SELECT 'r', 'a' || i, TIMESTAMPTZ '2026-01-14 10:00:00+00' + i * INTERVAL 1 MINUTE,
       'tool_call', i % 2 = 0, 'test', 'stamped', i, ?
FROM range(?, ? + 3) AS t(i)
"""


def test_a_batch_stamped_like_a_stored_one_moves_its_stamp_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stamp = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(run_rollups, "now_utc", lambda: stamp)

    def insert_from(start: int) -> Callable[[duckdb.DuckDBPyConnection], int]:
        def insert(cur: duckdb.DuckDBPyConnection) -> int:
            return run_rollups.insert_events(
                cur, STAMPED_INSERT, lambda moved: [moved, start, start]
            )

        return insert

    for start in (0, 3, 6):
        warehouse.write(insert_from(start))
    assert runs.list_runs() == every_event()
    assert runs.list_runs()[0].events == 9
    stamps = warehouse.fetch_all("SELECT DISTINCT ingested_at FROM events ORDER BY 1")
    assert [s["ingested_at"] for s in stamps] == [
        stamp + timedelta(microseconds=n) for n in range(3)
    ]


def test_claude_code_results_and_outputs_settled_in_later_transactions() -> None:
    start = CLAUDE_CODE / "claude-code-session-start-and-subagent-call.jsonl"
    commit = CLAUDE_CODE / "claude-code-commit-and-tool-error.jsonl"
    subagent = CLAUDE_CODE / "claude-code-subagent-agent-aac57f5.jsonl"
    run_claude_code([str(subagent)], batch_bytes=20_000)
    run_claude_code([str(commit), str(start)], batch_bytes=20_000)
    (row,) = runs.list_runs()
    assert [row] == every_event()
    assert (row.errors, row.output_tokens) == (1, 2191)


def test_an_update_of_commits_is_refused() -> None:
    ingest_body(BATCHES[0])

    def update(cur: duckdb.DuckDBPyConnection) -> None:
        run_rollups.update_events(
            cur, "UPDATE events SET ok = true WHERE event = 'commit'", "event = 'commit'", []
        )

    with pytest.raises(run_rollups.RollupError):
        warehouse.write(update)
    assert runs.list_runs() == every_event()


def test_a_delete_counts_its_runs_again_from_the_events_they_keep() -> None:
    for batch in BATCHES:
        ingest_body(batch)

    def delete(cur: duckdb.DuckDBPyConnection) -> int:
        return run_rollups.delete_events(
            cur, "DELETE FROM events WHERE run = 'r1' AND agent IN ('w2', 'w3')", [], {"r1"}
        )

    # w2's five stored events (commits a and c, the error, push p1, a commit without a
    # sha) and w3's two (commits c and b): b's first logging is w1's failed one again.
    assert warehouse.write(delete) == 7
    listed = runs.list_runs()
    assert listed == every_event()
    r1 = next(r for r in listed if r.run == "r1")
    # root and w1: the spawn, two llm_calls, the failed tool call, commits a (landed),
    # b (failed) and one without a sha (landed).
    assert (r1.agents, r1.events, r1.commits, r1.errors) == (2, 7, 2, 2)
    assert (r1.input_tokens, r1.output_tokens) == (105, 47)


def test_a_lake_from_before_the_totals_is_rolled_up_by_its_migration() -> None:
    for batch in BATCHES:
        ingest_body(batch)

    def back_to_version_1(cur: duckdb.DuckDBPyConnection) -> None:
        for table in ("run_rollups", "run_agents", "run_commits", "agent_rows", "agent_links"):
            cur.execute(f"DROP TABLE {table}")
        # The agents' copies since migration 700; run_commits names each first logging's
        # agent since 701.
        cur.execute("DELETE FROM schema_versions WHERE version IN (2, 700, 701)")

    warehouse.write(back_to_version_1)
    assert warehouse.migrate() == [2, 700, 701]
    assert copies_differ() == {}
    assert warehouse.fetch_one("SELECT count(*) AS n FROM agent_links") == {"n": 1}
    assert runs.list_runs() == every_event()
    ingest_body(body(event(20, "w9", "commit", commit={"sha": "a"}, run="r3")))
    assert runs.list_runs() == every_event()


def test_every_writer_of_events_goes_through_run_rollups() -> None:
    """A new writer of `events` must keep the totals (benchmarks seed throwaway lakes)."""
    writes = re.compile(r"\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO)\s+events\b", re.I)
    writers = {
        str(path.relative_to(REPO))
        for folder in ("warehouse", "analytics", "ingest", "dashboard")
        for path in (REPO / folder).rglob("*.py")
        if writes.search(path.read_text())
    }
    # Each of these hands its statement to run_rollups.insert_events, update_events or
    # delete_events; the agent-event ingest hands its new rows to
    # run_rollups.PendingTotals. The adapters' migration 302 fills in message_id, a
    # column the totals do not read.
    assert writers == {
        "ingest/pipelines/run_rollups.py",
        "ingest/pipelines/adapter_loading.py",
        "ingest/pipelines/claude_code.py",
        "ingest/pipelines/otlp_calls.py",
        "ingest/pipelines/otlp_spans.py",
        "warehouse/schema/adapters.py",
    }
