"""Per-run totals kept in step with `events`: run_rollups, and the run_agents and
run_commits they are counted from.

Every change to `events` goes through this module, inside the writer's transaction:
insert_events() runs a pipeline's INSERT stamped with an ingested_at no stored row has,
reads the rows with that stamp back and appends what they add to each run's totals;
PendingTotals stores rows the pipeline has already narrowed to new ones (Arrow rows, or a
Parquet file added as it is, reduced where it was written: reduce_rows) and adds what they
all add once per transaction (the agent-event ingest's bulk path);
update_events() runs an UPDATE of stored events and appends the difference it made;
delete_events() runs a DELETE and counts the runs it touched again from the events they
keep. A run's totals are the sums of its run_rollups rows (the earliest first_ts, the latest
last_ts), so GET /api/runs reads a few rows per run (analytics/runs/queries.py), and its
figures are exactly what aggregating every event gives, per
docs/agent-events.md: a commit sha counts once per run, at its first
logging (by ts, source, source_line), and that logging's `ok` decides whether it landed
or failed; commits without a sha each count; errors are error events plus failed
attempts. Rows stored before these tables existed are rolled up by migration 2
(warehouse/schema/events.py, which words attempts and errors in SQL for every reader).

The same changes are made to the agents' copies of events (agent_rows, agent_links:
ingest/pipelines/agent_copies.py) in the same transaction.

Must not decide which events are new (the callers' INSERTs do) nor parse any format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.pipelines import agent_copies
from ingest.pipelines.loading import now_utc
from warehouse.schema.events import COMMIT_SQL, ERROR_SQL, LANDED_COMMIT_SQL, SHA_COMMIT_SQL

Params = Sequence[Any] | dict[str, Any]

# Totals are appended: a DuckLake UPDATE or MERGE costs a batch three times as much or
# more (bench/run_rollups.md). Once this many rows of run_rollups could go, they are folded
# into one per run (counted beyond one row per run: a lake of thousands of sessions would
# otherwise be folded at every batch).
COMPACT_ROWS = 1000

# One row per run: the same sums as GET /api/runs reads (analytics/runs/queries.py).
_COMPACTED_SQL = """
SELECT run, min(first_ts) AS first_ts, max(last_ts) AS last_ts, sum(agents) AS agents,
       sum(events) AS events, sum(commits) AS commits, sum(errors) AS errors,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       min(source_kind) AS source_kind
FROM run_rollups
GROUP BY run
"""

_STAMP_USED = "SELECT count(*) FROM events WHERE ingested_at = ?"

# The columns of stored rows that the totals read.
_TOTALS_INPUT = (
    "run",
    "agent",
    "ts",
    "event",
    "ok",
    "commit_sha",
    "source",
    "source_line",
    "input_tokens",
    "output_tokens",
    "source_kind",
)

# The rows one insert_events() call stored: no other row has their stamp.
_BATCH_SQL = f"SELECT {', '.join(_TOTALS_INPUT)} FROM events WHERE ingested_at = ?"

# What a batch of stored rows (the relation `{batch}`) adds to the totals, reduced to two
# smaller relations (Reduced) that merge with those of other batches: per run and agent,
# the figures of every event but commits with a sha (sums, and the first_ts a min, the
# last_ts a max); and those commits (`sha_commits`, listed per run and agent and flattened
# by Reduced.of), whose first logging of each sha is picked once all batches are merged
# (its events, commits and errors are counted then: _APPEND_TOTALS).
# One scan of the batch, and `{extra}` aggregates for the caller's own use. The bulk
# ingest reduces each chunk on a worker where it stages it, so the loading thread, alone
# at the transaction's end, only merges them: a third less of its CPU (bench/run_rollups.md).
_REDUCE_SQL = """
SELECT run, agent,
       min(ts) AS first_ts,
       max(ts) AS last_ts,
       count(*) FILTER (WHERE NOT {sha_commit}) AS events,
       count(*) FILTER (WHERE {landed_commit} AND commit_sha IS NULL) AS commits,
       count(*) FILTER (WHERE {error} AND NOT {sha_commit}) AS errors,
       coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens,
       min(source_kind) AS source_kind,
       list({{'run': run, 'commit_sha': commit_sha, 'ts': ts, 'source': source,
              'source_line': source_line, 'ok': ok, 'agent': agent}})
           FILTER (WHERE {sha_commit}) AS sha_commits
       {extra}
FROM {batch}
GROUP BY run, agent
"""

# Of the merged commits (`batch_commits`), each sha's first logging (`{firsts}`: by ts,
# source, source_line, a missing source_line last as ORDER BY puts it) that is now the first
# logging of all: the sha is new to the run, or this logging sorts before the stored one.
# A full tie keeps the stored one. `replaces` marks a stored first logging to take back.
_FIRSTS_SQL = """
WITH firsts AS ({firsts})
SELECT l.run, l.commit_sha, l.ts, l.source, l.source_line, l.ok, l.agent,
       s.run IS NOT NULL AS replaces, s.ok AS replaced_ok
FROM firsts AS l
LEFT JOIN run_commits AS s ON s.run = l.run AND s.commit_sha = l.commit_sha
WHERE s.run IS NULL
   OR l.ts < s.ts
   OR (l.ts = s.ts AND l.source < s.source)
   OR (l.ts = s.ts AND l.source = s.source
       AND (l.source_line < s.source_line
            OR (l.source_line IS NOT NULL AND s.source_line IS NULL)))
"""

_FIRST_LOGGINGS = """
SELECT * FROM batch_commits
QUALIFY row_number() OVER (PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
"""
# When no sha repeats among the merged commits (the usual case), each is its own first
# logging: the check, 10 ms for 125,000 commits, spares the window (bench/run_rollups.md).
# A hash collision only sends the batch through the window.
_SHAS_REPEAT_SQL = "SELECT count(*) > count(DISTINCT hash(run, commit_sha)) FROM batch_commits"

_DELETE_REPLACED_FIRSTS = """
DELETE FROM run_commits
WHERE EXISTS (
    SELECT 1 FROM batch_firsts AS f
    WHERE f.replaces AND f.run = run_commits.run AND f.commit_sha = run_commits.commit_sha)
"""

_INSERT_FIRSTS = """
INSERT INTO run_commits (run, commit_sha, ts, source, source_line, ok, agent)
SELECT run, commit_sha, ts, source, source_line, ok, agent FROM batch_firsts
"""

_NEW_AGENTS_SQL = """
SELECT DISTINCT run, agent FROM batch_logged
EXCEPT
SELECT run, agent FROM run_agents
"""

# When the batches' runs have nothing stored (new runs: PendingTotals.add), every first
# logging and every agent is new, and run_commits and run_agents are not read (65 ms less
# after the last chunk of the bench file: bench/run_rollups.md).
_NEW_RUN_FIRSTS_SQL = """
SELECT run, commit_sha, ts, source, source_line, ok, agent,
       false AS replaces, NULL::BOOLEAN AS replaced_ok
FROM ({firsts})
"""
_NEW_RUN_AGENTS_SQL = "SELECT DISTINCT run, agent FROM batch_logged"

_INSERT_AGENTS = "INSERT INTO run_agents (run, agent) SELECT run, agent FROM batch_agents"

_TOTALS_COLUMNS = """run, first_ts, last_ts, agents, events, commits, errors, input_tokens,
    output_tokens, source_kind"""

# What the merged batches add to each run they touch (`batch_logged`: Reduced.logged
# of every batch). Commits with a sha count through batch_firsts (a replaced first
# logging takes its own figures back).
_APPEND_TOTALS = f"""
INSERT INTO run_rollups ({_TOTALS_COLUMNS})
WITH logged AS (
    SELECT run, min(first_ts) AS first_ts, max(last_ts) AS last_ts, sum(events) AS events,
           sum(commits) AS commits, sum(errors) AS errors,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           min(source_kind) AS source_kind
    FROM batch_logged
    GROUP BY run
),
firsts AS (
    SELECT run,
           count(*) FILTER (WHERE NOT replaces) AS events,
           count(*) FILTER (WHERE ok IS DISTINCT FROM false)
             - count(*) FILTER (WHERE replaces AND replaced_ok IS DISTINCT FROM false)
             AS commits,
           count(*) FILTER (WHERE ok = false)
             - count(*) FILTER (WHERE replaces AND replaced_ok = false) AS errors
    FROM batch_firsts
    GROUP BY run
),
agents AS (SELECT run, count(*) AS agents FROM batch_agents GROUP BY run)
SELECT l.run, l.first_ts, l.last_ts,
       coalesce(a.agents, 0),
       l.events + coalesce(f.events, 0),
       l.commits + coalesce(f.commits, 0),
       l.errors + coalesce(f.errors, 0),
       l.input_tokens, l.output_tokens, l.source_kind
FROM logged AS l
LEFT JOIN firsts AS f USING (run)
LEFT JOIN agents AS a USING (run)
"""


@dataclass
class Reduced:
    """What some stored rows add to the totals: per run and agent, their figures
    (`logged`), and their commits with a sha (`commits`). Those of several batches are
    merged by _add_to_totals."""

    logged: pa.Table
    commits: pa.Table

    @classmethod
    def of(cls, rows: pa.Table) -> Reduced:
        """From _REDUCE_SQL's rows (its `extra` columns dropped first)."""
        commits = pc.list_flatten(rows.column("sha_commits")).combine_chunks()  # small
        return cls(rows.drop_columns(["sha_commits"]), pa.Table.from_struct_array(commits))


def reduce_sql(batch: str, extra: str = "") -> str:
    """The query reducing the relation `batch` (the _TOTALS_INPUT columns at least) to
    Reduced.of's rows, with `extra` aggregates (", count(*) AS rows", say) after them."""
    return _REDUCE_SQL.format(
        batch=batch,
        extra=extra,
        sha_commit=SHA_COMMIT_SQL,
        landed_commit=LANDED_COMMIT_SQL,
        error=ERROR_SQL,
    )


def reduce_rows(cur: warehouse.Cursor, batch: str, params: Params = ()) -> Reduced:
    """Reduce the rows of the relation `batch` (bound with `params`). Reads no lake table,
    so any thread's cursor may run it, outside a transaction."""
    return Reduced.of(cur.execute(reduce_sql(batch), params).to_arrow_table())


class RollupError(ValueError):
    """A change to events that the run totals cannot follow."""


def insert_events(
    cur: warehouse.Cursor, insert_sql: str, bind: Callable[[datetime], Params]
) -> int:
    """Run `insert_sql` (an INSERT INTO events, bound with `bind(stamp)`, that stores
    `stamp` as the ingested_at of every row it inserts) and add the rows it inserted to
    the run totals; returns how many it inserted."""
    stamp = unused_stamp(cur)
    inserted = _scalar(cur, insert_sql, bind(stamp))
    if not inserted:
        return 0
    agent_copies.copy_stamped(cur, stamp)
    batch = cur.execute(_BATCH_SQL, [stamp]).to_arrow_table()
    if batch.num_rows != inserted:
        raise RollupError(f"{inserted} events inserted, {batch.num_rows} stamped {stamp}")
    cur.register("batch_events", batch)
    try:
        reduced = reduce_rows(cur, "batch_events")
    finally:
        cur.unregister("batch_events")
    _add_to_totals(cur, [reduced])
    _compact_if_long(cur)
    return inserted


def unused_stamp(cur: warehouse.Cursor) -> datetime:
    """An ingested_at that no stored event has (now, or a microsecond or so later): the
    rows of one load can be told apart by it."""
    stamp = now_utc()
    while _scalar(cur, _STAMP_USED, [stamp]):
        stamp += timedelta(microseconds=1)
    return stamp


class PendingTotals:
    """The agent-event ingest's bulk path: insert() and add_file() store rows the pipeline
    has already narrowed to new ones and keep what they add, reduced (Reduced); add()
    merges and adds all of it at once, before the transaction commits (no stamp to find,
    no rows to read back, one pass over run_commits and run_agents however many chunks
    were stored). A transaction that stored rows must call add() before it commits."""

    def __init__(self) -> None:
        self._reduced: list[Reduced] = []

    def insert(self, cur: warehouse.Cursor, rows: pa.Table, reduced: Reduced | None = None) -> int:
        """Store every row of `rows` (columns named as events' own); returns how many.
        `reduced`, when given, is what the rows add (reduce_rows), worked out already."""
        listed = ", ".join(f'"{c}"' for c in rows.column_names)
        cur.register("new_events", rows)
        try:
            inserted = _scalar(
                cur, f"INSERT INTO events ({listed}) SELECT {listed} FROM new_events", []
            )
            if inserted:
                agent_copies.copy_registered(cur, "new_events", rows.column_names)
                self._reduced.append(
                    reduced if reduced is not None else reduce_rows(cur, "new_events")
                )
        finally:
            cur.unregister("new_events")
        return inserted

    def add_file(self, cur: warehouse.Cursor, path: Path, reduced: Reduced) -> None:
        """Make the Parquet file `path`, of new rows only, part of events as it is
        (warehouse.add_data_file); `reduced` is what its rows add (reduce_rows)."""
        warehouse.add_data_file(cur, "events", path)
        agent_copies.copy_file(cur, path)
        self._reduced.append(reduced)

    def add(self, cur: warehouse.Cursor, *, new_runs: bool = False) -> None:
        """`new_runs`: the caller knows that nothing of the rows' runs is stored (no
        event: the totals of a run only ever come with its events)."""
        if not self._reduced:
            return
        _add_to_totals(cur, self._reduced, new_runs=new_runs)
        self._reduced.clear()
        _compact_if_long(cur)


def _add_to_totals(
    cur: warehouse.Cursor, batches: list[Reduced], *, new_runs: bool = False
) -> None:
    """Append what the batches' stored rows add to run_commits, run_agents and
    run_rollups."""
    cur.register("batch_logged", pa.concat_tables([b.logged for b in batches]))
    cur.register("batch_commits", pa.concat_tables([b.commits for b in batches]))
    try:
        repeat = _scalar(cur, _SHAS_REPEAT_SQL, [])
        firsts_of = _FIRST_LOGGINGS if repeat else "SELECT * FROM batch_commits"
        firsts_sql, agents_sql = (
            (_NEW_RUN_FIRSTS_SQL, _NEW_RUN_AGENTS_SQL)
            if new_runs
            else (_FIRSTS_SQL, _NEW_AGENTS_SQL)
        )
        firsts = cur.execute(firsts_sql.format(firsts=firsts_of)).to_arrow_table()
        agents = cur.execute(agents_sql).to_arrow_table()
        cur.register("batch_firsts", firsts)
        cur.register("batch_agents", agents)
        if firsts.num_rows:
            if pc.any(firsts.column("replaces")).as_py():
                cur.execute(_DELETE_REPLACED_FIRSTS)
            cur.execute(_INSERT_FIRSTS)
        if agents.num_rows:
            cur.execute(_INSERT_AGENTS)
        cur.execute(_APPEND_TOTALS)
    finally:
        for name in ("batch_logged", "batch_commits", "batch_firsts", "batch_agents"):
            cur.unregister(name)


def _scalar(cur: warehouse.Cursor, sql: str, params: Params) -> int:
    row = cur.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _compact_if_long(cur: warehouse.Cursor) -> None:
    foldable = "SELECT count(*) - count(DISTINCT run) FROM run_rollups"
    if _scalar(cur, foldable, []) < COMPACT_ROWS:
        return
    totals = cur.execute(_COMPACTED_SQL).to_arrow_table()
    cur.register("compacted_totals", totals)
    try:
        cur.execute("DELETE FROM run_rollups")
        cur.execute(
            f"INSERT INTO run_rollups ({_TOTALS_COLUMNS}) "
            f"SELECT {_TOTALS_COLUMNS} FROM compacted_totals"
        )
    finally:
        cur.unregister("compacted_totals")


# What the rows an UPDATE may change add to their runs' totals, counted before and after
# (none is a commit: update_events refuses them).
_SCOPE_FIGURES = f"""
SELECT run,
       count(*) FILTER (WHERE {COMMIT_SQL}) AS commit_events,
       count(*) FILTER (WHERE {ERROR_SQL}) AS errors,
       coalesce(sum(input_tokens), 0)::BIGINT AS input_tokens,
       coalesce(sum(output_tokens), 0)::BIGINT AS output_tokens
FROM events
WHERE {{scope}}
GROUP BY run
"""

# The difference as a row per run that adds no event, agent or time.
_APPEND_UPDATE = f"""
INSERT INTO run_rollups ({_TOTALS_COLUMNS})
SELECT run, NULL, NULL, 0, 0, 0, sum(errors), sum(input_tokens), sum(output_tokens), NULL
FROM (
    SELECT run, errors, input_tokens, output_tokens FROM scope_after
    UNION ALL
    SELECT run, -errors, -input_tokens, -output_tokens FROM scope_before
)
GROUP BY run
HAVING sum(errors) <> 0 OR sum(input_tokens) <> 0 OR sum(output_tokens) <> 0
"""


def update_events(cur: warehouse.Cursor, update_sql: str, scope: str, params: Params) -> None:
    """Run `update_sql` (an UPDATE of events, bound with `params`) and add what it
    changed to the run totals. `scope` is a condition on events (same parameters) that
    holds for every row the UPDATE may change; the rows must not be commits, and the
    UPDATE may change only `ok`, `input_tokens`, `output_tokens` and columns the totals
    do not read."""
    figures = _SCOPE_FIGURES.format(scope=scope)
    before = cur.execute(figures, params).to_arrow_table()
    if pc.sum(before.column("commit_events")).as_py():
        raise RollupError("an UPDATE of events must not touch commits (their first logging)")
    agent_copies.delete_scope(cur, scope, params)
    cur.execute(update_sql, params)
    agent_copies.copy_scope(cur, scope, params)
    after = cur.execute(figures, params).to_arrow_table()
    cur.register("scope_before", before)
    cur.register("scope_after", after)
    try:
        cur.execute(_APPEND_UPDATE)
    finally:
        cur.unregister("scope_before")
        cur.unregister("scope_after")
    _compact_if_long(cur)


# The stored rows of the runs in `recounted_runs(run)`, for reduce_rows.
_RECOUNTED_SQL = (
    f"(SELECT {', '.join(_TOTALS_INPUT)} FROM events WHERE run IN (SELECT run FROM recounted_runs))"
)


def delete_events(cur: warehouse.Cursor, delete_sql: str, params: Params, runs: set[str]) -> int:
    """Run `delete_sql` (a DELETE FROM events, bound with `params`, of rows of `runs`
    only) and count those runs' totals again from the events they keep: what a deleted
    row added to a run's times, agents and first commit loggings cannot be taken back by
    appending a row. Returns how many rows it deleted."""
    deleted = _scalar(cur, delete_sql, params)
    if not deleted:
        return 0
    cur.register("recounted_runs", pa.table({"run": pa.array(sorted(runs), pa.string())}))
    try:
        for table in ("run_rollups", "run_agents", "run_commits"):
            cur.execute(f"DELETE FROM {table} WHERE run IN (SELECT run FROM recounted_runs)")
        agent_copies.copy_runs_again(cur, "recounted_runs")
        reduced = reduce_rows(cur, _RECOUNTED_SQL)
    finally:
        cur.unregister("recounted_runs")
    _add_to_totals(cur, [reduced], new_runs=True)
    _compact_if_long(cur)
    return deleted
