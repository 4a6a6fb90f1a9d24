"""Warehouse tables for agent events: events, quarantine and read positions, and the
per-run totals kept with them (ingest/pipelines/run_rollups.py maintains those).

Also the facts about events that every floor reads from here, each stated once: the
table's columns (COLUMNS: the parsers' rows and their Arrow schema derive from it), the
event kinds (EventKind), and which events are attempts and errors (ATTEMPT_SQL,
ERROR_SQL: the runs queries, run status, the alerts' facts and the run totals count
with them), per docs/agent-events.md.

Never edit a migration that has shipped: append a new one in this topic's version range.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

from warehouse.schema.migration import Migration


class EventKind(StrEnum):
    """The contract's event kinds. An event of another kind is stored as written and
    counted as `other`."""

    SPAWN = "spawn"
    TASK = "task"
    LLM_CALL = "llm_call"
    TOOL_CALL = "tool_call"
    COMMIT = "commit"
    PUSH = "push"
    HANDOFF = "handoff"
    ERROR = "error"
    SUMMARY = "summary"
    STOP = "stop"


ATTEMPT_KINDS = (EventKind.TOOL_CALL, EventKind.LLM_CALL, EventKind.COMMIT, EventKind.PUSH)


def kind_in_sql(kinds: Iterable[EventKind]) -> str:
    return "event IN (" + ", ".join(f"'{kind}'" for kind in kinds) + ")"


# Conditions on a row of events (or of a relation with its event, ok and commit_sha).
ATTEMPT_SQL = kind_in_sql(ATTEMPT_KINDS)
ERROR_SQL = f"(event = '{EventKind.ERROR}' OR ({ATTEMPT_SQL} AND ok = false))"
COMMIT_SQL = f"(event = '{EventKind.COMMIT}')"
LANDED_COMMIT_SQL = f"({COMMIT_SQL} AND ok IS DISTINCT FROM false)"
# A commit sha counts once per run, at its first logging (by ts, source, source_line):
# what counts each logging apart leaves these rows to that first logging.
SHA_COMMIT_SQL = f"({COMMIT_SQL} AND commit_sha IS NOT NULL)"


class Column(NamedTuple):
    name: str
    sql_type: str
    required: bool = False  # NOT NULL


# The agent-event format's fields (docs/agent-events.md), in the table's order.
CONTRACT_COLUMNS = (
    Column("run", "VARCHAR", required=True),
    Column("agent", "VARCHAR", required=True),
    Column("ts", "TIMESTAMPTZ", required=True),
    Column("event", "VARCHAR", required=True),
    Column("id", "VARCHAR"),
    Column("parent", "VARCHAR"),
    Column("role", "VARCHAR"),
    Column("model", "VARCHAR"),
    Column("input_tokens", "BIGINT"),
    Column("cached_input_tokens", "BIGINT"),
    Column("cache_write_tokens", "BIGINT"),
    Column("output_tokens", "BIGINT"),
    Column("cost_usd", "DOUBLE"),
    Column("tool", "VARCHAR"),
    Column("ok", "BOOLEAN"),
    Column("duration_ms", "DOUBLE"),
    Column("task", "VARCHAR"),
    Column("commit_sha", "VARCHAR"),
    Column("commit_files", "BIGINT"),
    Column("commit_insertions", "BIGINT"),
    Column("commit_deletions", "BIGINT"),
    Column("commit_message", "VARCHAR"),
    Column("push_conflict", "BOOLEAN"),
    Column("error_kind", "VARCHAR"),
    Column("error_message", "VARCHAR"),
    Column("handoff_to", "VARCHAR"),
    Column("handoff_status", "VARCHAR"),
    Column("handoff_notes", "VARCHAR"),
    Column("attrs", "VARCHAR"),
)
# Where each row came from and when it was stored.
ORIGIN_COLUMNS = (
    Column("source_kind", "VARCHAR", required=True),
    Column("source", "VARCHAR", required=True),
    Column("source_line", "BIGINT"),
    Column("ingested_at", "TIMESTAMPTZ", required=True),
)
# What the log adapters know and the format does not, added by warehouse/schema/adapters.py
# (migrations 300-302, which say what each holds).
ADAPTER_COLUMNS = (
    Column("cache_write_5m_tokens", "BIGINT"),
    Column("cache_write_1h_tokens", "BIGINT"),
    Column("reasoning_output_tokens", "BIGINT"),
    Column("author_ts", "TIMESTAMPTZ"),
    Column("commit_author", "VARCHAR"),
    Column("commit_claim", "BOOLEAN"),
    Column("speed", "VARCHAR"),
    Column("message_id", "VARCHAR"),
)
# What OpenTelemetry carries and the other sources do not, added by
# warehouse/schema/otlp.py (migration 500, which says what each holds).
TELEMETRY_COLUMNS = (
    Column("request_id", "VARCHAR"),
    Column("person", "VARCHAR"),
    Column("organization", "VARCHAR"),
    Column("team", "VARCHAR"),
    Column("department", "VARCHAR"),
    Column("cost_center", "VARCHAR"),
    Column("trace_id", "VARCHAR"),
    Column("span_id", "VARCHAR"),
    Column("parent_span_id", "VARCHAR"),
)
# The events table once every migration has run, in its order.
COLUMNS = (*CONTRACT_COLUMNS, *ORIGIN_COLUMNS, *ADAPTER_COLUMNS, *TELEMETRY_COLUMNS)


def _create_events() -> str:
    """Migration 1's table: the format's columns and their origin. A column added later
    comes with a migration of its own (ALTER TABLE), never in these two tuples."""
    columns = [
        f"{c.name} {c.sql_type}{' NOT NULL' if c.required else ''}"
        for c in (*CONTRACT_COLUMNS, *ORIGIN_COLUMNS)
    ]
    return "CREATE TABLE IF NOT EXISTS events (\n    " + ",\n    ".join(columns) + "\n)"


MIGRATIONS = (
    Migration(
        1,
        "agent events, quarantine, read positions",
        (
            _create_events(),
            """
            CREATE TABLE IF NOT EXISTS quarantine (
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                line_no BIGINT,
                byte_offset BIGINT,
                reason VARCHAR NOT NULL,
                raw VARCHAR,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
            # Append-only: the current position of a source is its newest row. Written in
            # the same transaction as the rows it covers, so a crash loses nothing.
            """
            CREATE TABLE IF NOT EXISTS read_positions (
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                file_key VARCHAR NOT NULL,
                byte_offset BIGINT NOT NULL,
                line_no BIGINT NOT NULL,
                committed_at TIMESTAMPTZ NOT NULL
            )
            """,
        ),
    ),
    Migration(
        2,
        "per-run totals: run_rollups, run_agents, run_commits",
        (
            # One row per (run, agent) seen: a run's agent count grows by the new pairs.
            """
            CREATE TABLE IF NOT EXISTS run_agents (
                run VARCHAR NOT NULL,
                agent VARCHAR NOT NULL
            )
            """,
            # The first logging of each commit sha in a run (by ts, source, source_line):
            # its `ok` decides whether the commit landed or failed.
            """
            CREATE TABLE IF NOT EXISTS run_commits (
                run VARCHAR NOT NULL,
                commit_sha VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                ok BOOLEAN
            )
            """,
            # What GET /api/runs lists: a run's figures are the sums of its rows (the
            # earliest first_ts, the latest last_ts); `events` counts a commit sha once.
            # A row that only corrects figures of stored events has no times or kind.
            """
            CREATE TABLE IF NOT EXISTS run_rollups (
                run VARCHAR NOT NULL,
                first_ts TIMESTAMPTZ,
                last_ts TIMESTAMPTZ,
                agents BIGINT NOT NULL,
                events BIGINT NOT NULL,
                commits BIGINT NOT NULL,
                errors BIGINT NOT NULL,
                input_tokens BIGINT NOT NULL,
                output_tokens BIGINT NOT NULL,
                source_kind VARCHAR
            )
            """,
            # Events stored before this version, rolled up once.
            "INSERT INTO run_agents SELECT DISTINCT run, agent FROM events",
            f"""
            INSERT INTO run_commits
            SELECT run, commit_sha, ts, source, source_line, ok FROM events
            WHERE {SHA_COMMIT_SQL}
            QUALIFY row_number() OVER (
                PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
            """,
            # Commits count through commit_stats (a sha once); the totals count the rest.
            f"""
            INSERT INTO run_rollups
            WITH commit_stats AS (
                SELECT run,
                       count(*) AS logged,
                       count(*) FILTER (WHERE ok IS DISTINCT FROM false) AS commits,
                       count(*) FILTER (WHERE ok = false) AS failed
                FROM (
                    SELECT run, ok FROM run_commits
                    UNION ALL
                    SELECT run, ok FROM events WHERE {COMMIT_SQL} AND commit_sha IS NULL
                )
                GROUP BY run
            ),
            totals AS (
                SELECT run,
                       min(ts) AS first_ts,
                       max(ts) AS last_ts,
                       count(DISTINCT agent) AS agents,
                       count(*) FILTER (WHERE NOT {COMMIT_SQL}) AS other_events,
                       count(*) FILTER (WHERE {ERROR_SQL} AND NOT {COMMIT_SQL}) AS other_errors,
                       coalesce(sum(input_tokens), 0) AS input_tokens,
                       coalesce(sum(output_tokens), 0) AS output_tokens,
                       min(source_kind) AS source_kind
                FROM events
                GROUP BY run
            )
            SELECT t.run, t.first_ts, t.last_ts, t.agents,
                   t.other_events + coalesce(c.logged, 0),
                   coalesce(c.commits, 0),
                   t.other_errors + coalesce(c.failed, 0),
                   t.input_tokens, t.output_tokens, t.source_kind
            FROM totals AS t LEFT JOIN commit_stats AS c USING (run)
            """,
        ),
    ),
)
