"""Warehouse tables for per-request records, their token counts, and parallel texts.

Token counts sit in long tables (one row per text and encoding) so that configuring
another encoding adds rows, not columns. Never edit a migration that has shipped: append
a new one in this topic's range (200-299).
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        200,
        "requests, request token counts, parallel texts and their counts",
        (
            """
            CREATE TABLE IF NOT EXISTS requests (
                request_id VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                model VARCHAR,
                instance VARCHAR,
                run VARCHAR,
                agent VARCHAR,
                language VARCHAR,
                language_detected BOOLEAN NOT NULL,
                prompt VARCHAR,
                completion VARCHAR,
                prompt_chars BIGINT,
                prompt_bytes BIGINT,
                completion_chars BIGINT,
                completion_bytes BIGINT,
                usage_prompt_tokens BIGINT,
                usage_completion_tokens BIGINT,
                usage_cached_tokens BIGINT,
                reference_encoding VARCHAR,
                usage_mismatch BOOLEAN,
                ttft_ms DOUBLE,
                latency_ms DOUBLE,
                finish_reason VARCHAR,
                shape VARCHAR NOT NULL,
                attrs VARCHAR,
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS request_tokens (
                request_id VARCHAR NOT NULL,
                encoding VARCHAR NOT NULL,
                prompt_tokens BIGINT,
                completion_tokens BIGINT
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS parallel_texts (
                id VARCHAR NOT NULL,
                language VARCHAR NOT NULL,
                text VARCHAR NOT NULL,
                chars BIGINT NOT NULL,
                bytes BIGINT NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS parallel_tokens (
                id VARCHAR NOT NULL,
                language VARCHAR NOT NULL,
                encoding VARCHAR NOT NULL,
                tokens BIGINT NOT NULL
            )
            """,
        ),
    ),
)
