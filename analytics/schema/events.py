"""Warehouse tables for agent events: events, quarantine and read positions.

Never edit a migration that has shipped: append a new one in this topic's version range.
"""

from analytics.warehouse import Migration

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
)
