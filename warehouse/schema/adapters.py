"""Warehouse changes for the log adapters (Claude Code, Codex, git): versions 300-399.

Adds the event columns those sources know and the agent-event format does not (all
nullable, so agent-event rows leave them empty), and the per-file parser state a
transcript needs to resume mid-file (a Codex rollout names its session and model only
near its start). Never edit a migration that has shipped: append a new one.
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        300,
        "adapter columns on events, source states",
        (
            # Cache writes split by lifetime (Claude: 5-minute and 1-hour ephemeral cache,
            # priced differently); their sum is cache_write_tokens.
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS cache_write_5m_tokens BIGINT",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS cache_write_1h_tokens BIGINT",
            # The part of output_tokens spent on reasoning (Codex reports it; it is billed
            # as output, so output_tokens keeps it too).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS reasoning_output_tokens BIGINT",
            # git: when the agent made the commit (ts is when it landed: committer time).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS author_ts TIMESTAMPTZ",
            # git: "Name <e-mail>" of the author.
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS commit_author VARCHAR",
            # git: the commit only adds or removes files under the claims folder (a task
            # claim or release, not work).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS commit_claim BOOLEAN",
            # Append-only like read_positions: the newest row of a source is its state,
            # written in the same transaction as the position it belongs to.
            """
            CREATE TABLE IF NOT EXISTS source_states (
                source_kind VARCHAR NOT NULL,
                source VARCHAR NOT NULL,
                file_key VARCHAR NOT NULL,
                byte_offset BIGINT NOT NULL,
                state VARCHAR NOT NULL,
                committed_at TIMESTAMPTZ NOT NULL
            )
            """,
        ),
    ),
    Migration(
        301,
        "the speed an API response was served at",
        (
            # Claude: `usage.speed` ("fast" is billed at the model's fast-mode prices);
            # NULL where the source does not say (standard speed).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS speed VARCHAR",
        ),
    ),
    Migration(
        302,
        "the API response an llm_call came from",
        (
            # Claude: the response's message.id where a requestId names the request too
            # (behind a gateway every response may share one id: then NULL). A sidechain
            # that replays its parent's response carries the same one, under a new
            # requestId, and is not counted twice (ingest/pipelines/claude_code.py).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS message_id VARCHAR",
            # Claude Code calls stored before: their id was `<message.id>:<requestId>`.
            """
            UPDATE events SET message_id = split_part(id, ':', 1)
            WHERE source_kind = 'claude-code' AND event = 'llm_call'
              AND len(string_split(id, ':')) = 2
            """,
        ),
    ),
)
