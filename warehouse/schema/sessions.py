"""Warehouse tables for session replay and friendly session names (Claude Code and
Codex transcripts, and OTLP events with content capture on): versions 600-699.

`session_turns` keeps what a session said, in order: one row per prompt, response text,
tool call and tool result, as the transcript (or the telemetry) carried it, its text cut
at a bound (`text_chars` is the length before the cut). `session_labels` keeps what
names a session for people: its project folder and git branch (a transcript's `cwd` and
`gitBranch`) and its first prompt's first words. Never edit a migration that has
shipped: append a new one.
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        600,
        "session turns and labels",
        (
            # `run` is the session's run (its session id), `agent` the agent speaking
            # (`main` or a subagent); `source`/`source_line` where the turn was read
            # (for OTLP: the body digest and the record's position); `seq` orders turns
            # logged in one line (a response's blocks). `kind`: prompt, response,
            # thinking, tool_call, tool_result. `tool_use_id` pairs a call with its
            # result; `is_error` marks a failed result. `captured` is false when the
            # source said a turn happened without its content (OTLP without
            # OTEL_LOG_USER_PROMPTS, a redacted transcript): `text` is then NULL.
            """
            CREATE TABLE IF NOT EXISTS session_turns (
                run VARCHAR NOT NULL,
                agent VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                source_line BIGINT,
                seq INTEGER NOT NULL,
                kind VARCHAR NOT NULL,
                tool VARCHAR,
                tool_use_id VARCHAR,
                is_error BOOLEAN,
                captured BOOLEAN NOT NULL,
                text VARCHAR,
                text_chars BIGINT,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
            # One row per (run, source) that names it; a run's label is its earliest
            # row's (by first_ts). `first_prompt` holds at most 200 characters.
            """
            CREATE TABLE IF NOT EXISTS session_labels (
                run VARCHAR NOT NULL,
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                project VARCHAR,
                cwd VARCHAR,
                branch VARCHAR,
                first_prompt VARCHAR,
                first_ts TIMESTAMPTZ,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
        ),
    ),
)
