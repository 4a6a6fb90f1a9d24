"""Warehouse tables an agent's own reads come from: versions 700-799.

A run's events are stored in the order they were logged, so a read of one agent of a
2,000-agent run prunes no row group and decodes every row of the run. `agent_rows` keeps
a copy of the few columns an agent's page reads, sorted by (run, agent, ts) as DuckLake
writes it (on insert and at compaction), so that read decodes a row group or two;
`agent_links` keeps the rows that name a parent or a role (the tree's links), so the
agent's place in the tree is read without a pass over the run; `run_commits` names the
agent of each first logging, sorted the same way, so an agent's commits that count are
read without the run's. Both are derived from
`events` only, row for row, in the writer's transaction (ingest/pipelines/run_rollups.py,
through ingest/pipelines/agent_copies.py); what they hold is the events' own values.

Never edit a migration that has shipped: append a new one.
"""

from __future__ import annotations

from warehouse.schema.events import COLUMNS, SHA_COMMIT_SQL
from warehouse.schema.migration import Migration

_TYPES = {c.name: c.sql_type for c in COLUMNS}

# What an agent's page reads (analytics/runs/agent.py), and what the UPDATE scopes of
# the ingest name (source_kind, event, id, run): an UPDATE of events is followed here
# by deleting and copying again the rows of its scope.
AGENT_ROW_COLUMNS = (
    "run", "agent", "ts", "event", "id", "source_kind", "ok", "commit_sha", "tool", "model",
    "input_tokens", "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
    "output_tokens", "cost_usd", "speed",
)  # fmt: skip
# The tree's links (analytics/runs/queries.py PARENT_SQL, ROLE_SQL read these), and what
# the UPDATE scopes name.
AGENT_LINK_COLUMNS = (
    "run", "agent", "parent", "role", "event", "ts", "source_line", "id", "source_kind",
)  # fmt: skip
# Which events are links.
LINK_ROW_SQL = "(parent IS NOT NULL OR role IS NOT NULL)"


def _create(table: str, columns: tuple[str, ...]) -> str:
    listed = ",\n    ".join(f"{name} {_TYPES[name]}" for name in columns)
    return f"CREATE TABLE IF NOT EXISTS {table} (\n    {listed}\n)"


MIGRATIONS = (
    Migration(
        700,
        "agent_rows and agent_links, an agent's own columns sorted by run and agent",
        (
            _create("agent_rows", AGENT_ROW_COLUMNS),
            "ALTER TABLE agent_rows SET SORTED BY (run, agent, ts)",
            _create("agent_links", AGENT_LINK_COLUMNS),
            "ALTER TABLE agent_links SET SORTED BY (run, agent, ts)",
            # Events stored before this version, copied once.
            f"INSERT INTO agent_rows SELECT {', '.join(AGENT_ROW_COLUMNS)} FROM events",
            f"INSERT INTO agent_links SELECT {', '.join(AGENT_LINK_COLUMNS)} FROM events"
            f" WHERE {LINK_ROW_SQL}",
        ),
    ),
    Migration(
        701,
        "the agent of each commit's first logging in run_commits, sorted by run and agent",
        (
            # Made again with the agent among its first columns, not added to it: DuckLake
            # (1.5.5) fails to flush inlined rows of a table sorted by an added column
            # ("Failed to bind column reference", an INTERNAL error).
            "DROP TABLE IF EXISTS run_commits",
            """
            CREATE TABLE run_commits (
                run VARCHAR NOT NULL,
                agent VARCHAR,
                commit_sha VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                ok BOOLEAN
            )
            """,
            "ALTER TABLE run_commits SET SORTED BY (run, agent, ts)",
            # Counted again from events, as migration 2 first did, with the agent.
            f"""
            INSERT INTO run_commits (run, commit_sha, ts, source, source_line, ok, agent)
            SELECT run, commit_sha, ts, source, source_line, ok, agent FROM events
            WHERE {SHA_COMMIT_SQL}
            QUALIFY row_number() OVER (
                PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
            """,
        ),
    ),
)
