"""Warehouse tables for agent events: events, quarantine and read positions, and the
per-run totals kept with them (ingest/pipelines/run_rollups.py maintains those).

Never edit a migration that has shipped: append a new one in this topic's version range.
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        1,
        "agent events, quarantine, read positions",
        (
            """
            CREATE TABLE IF NOT EXISTS events (
                run VARCHAR NOT NULL,
                agent VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                event VARCHAR NOT NULL,
                id VARCHAR,
                parent VARCHAR,
                role VARCHAR,
                model VARCHAR,
                input_tokens BIGINT,
                cached_input_tokens BIGINT,
                cache_write_tokens BIGINT,
                output_tokens BIGINT,
                cost_usd DOUBLE,
                tool VARCHAR,
                ok BOOLEAN,
                duration_ms DOUBLE,
                task VARCHAR,
                commit_sha VARCHAR,
                commit_files BIGINT,
                commit_insertions BIGINT,
                commit_deletions BIGINT,
                commit_message VARCHAR,
                push_conflict BOOLEAN,
                error_kind VARCHAR,
                error_message VARCHAR,
                handoff_to VARCHAR,
                handoff_status VARCHAR,
                handoff_notes VARCHAR,
                attrs VARCHAR,
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
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
            """
            INSERT INTO run_commits
            SELECT run, commit_sha, ts, source, source_line, ok FROM events
            WHERE event = 'commit' AND commit_sha IS NOT NULL
            QUALIFY row_number() OVER (
                PARTITION BY run, commit_sha ORDER BY ts, source, source_line) = 1
            """,
            """
            INSERT INTO run_rollups
            WITH commit_stats AS (
                SELECT run,
                       count(*) AS logged,
                       count(*) FILTER (WHERE ok IS DISTINCT FROM false) AS commits,
                       count(*) FILTER (WHERE ok = false) AS failed
                FROM (
                    SELECT run, ok FROM run_commits
                    UNION ALL
                    SELECT run, ok FROM events WHERE event = 'commit' AND commit_sha IS NULL
                )
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
                   t.other_events + coalesce(c.logged, 0),
                   coalesce(c.commits, 0),
                   t.other_errors + coalesce(c.failed, 0),
                   t.input_tokens, t.output_tokens, t.source_kind
            FROM totals AS t LEFT JOIN commit_stats AS c USING (run)
            """,
        ),
    ),
)
