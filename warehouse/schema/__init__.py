"""Every warehouse schema change, gathered from one module per topic.

Never edit a migration that has shipped: append a new one. Version ranges by topic, so
features can add theirs independently: 1-99 agent events and runs, 100-199 serving
metrics, 200-299 requests and tokens, 300-399 log adapters (Claude Code, Codex, git),
400-499 costs, 500-599 OpenTelemetry, 600-699 session replay and labels, 700-799 the
copies an agent's own reads come from. Any migration not yet applied runs, in version
order.
"""

from warehouse.schema import adapters, agents, events, otlp, serving, sessions, tokens
from warehouse.schema.migration import Migration

MIGRATIONS: tuple[Migration, ...] = (
    *events.MIGRATIONS,
    *serving.MIGRATIONS,
    *tokens.MIGRATIONS,
    *adapters.MIGRATIONS,
    *otlp.MIGRATIONS,
    *sessions.MIGRATIONS,
    *agents.MIGRATIONS,
)
