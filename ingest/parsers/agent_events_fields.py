"""The agent-event format's fields (docs/agent-events.md): each JSON path, the JSON type
it must have, and the events column it fills. Both paths of the parser read them
(agent_events_typed.py, agent_events_exact.py).

Pure: definitions only; the columns themselves are warehouse/schema/events.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from warehouse.schema.events import CONTRACT_COLUMNS

# The names (lib.bounds.name_problem): 1-NAME_LENGTH characters, none a control character.
NAMES = ("run", "agent", "model", "tool")
# lib.bounds' control characters as a pattern both paths' RE2 reads (DuckDB and Arrow).
CONTROL_CHARACTER = r"[\x00-\x1f\x7f-\x9f]"
# A comma closing an object or array, outside any string: DuckDB's JSON reader accepts it,
# JSON does not. Outside strings valid JSON has no quote or backslash, so strings are
# skipped whole ("..." with its escapes) and the comma looked for between them.
TRAILING_COMMA = r'^(?:[^"]|"(?:[^"\\]|\\.)*")*,[ \t\r\n]*[\]}]'
# A comma before a closing bracket anywhere, strings included: only lines holding one are
# searched with TRAILING_COMMA (bench/agent_events.md, "Trailing commas").
MAYBE_TRAILING_COMMA = r",[ \t\r\n]*[\]}]"


class JsonType(StrEnum):
    """JSON value classes, told apart by a value's first byte."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    OBJECT = "object"
    TIME = "time"  # an RFC 3339 string or a number of Unix seconds


@dataclass(frozen=True)
class Field:
    """One JSON path of the contract, the type it must have, and the column it fills."""

    path: str  # dotted, as the contract writes it: "usage.input_tokens"
    kind: JsonType
    column: str | None = None
    required: bool = False
    non_negative: bool = False

    @property
    def container(self) -> str | None:
        return self.path.split(".", 1)[0] if "." in self.path else None

    @property
    def leaf(self) -> str:
        return self.path.rsplit(".", 1)[-1]


FIELDS: tuple[Field, ...] = (
    Field("ts", JsonType.TIME, required=True),
    Field("run", JsonType.STRING, "run", required=True),
    Field("agent", JsonType.STRING, "agent", required=True),
    Field("event", JsonType.STRING, "event", required=True),
    Field("id", JsonType.STRING, "id"),
    Field("parent", JsonType.STRING, "parent"),
    Field("role", JsonType.STRING, "role"),
    Field("model", JsonType.STRING, "model"),
    Field("usage", JsonType.OBJECT),
    Field("usage.input_tokens", JsonType.INTEGER, "input_tokens", non_negative=True),
    Field("usage.cached_input_tokens", JsonType.INTEGER, "cached_input_tokens", non_negative=True),
    Field("usage.cache_write_tokens", JsonType.INTEGER, "cache_write_tokens", non_negative=True),
    Field("usage.output_tokens", JsonType.INTEGER, "output_tokens", non_negative=True),
    Field("cost_usd", JsonType.NUMBER, "cost_usd", non_negative=True),
    Field("tool", JsonType.STRING, "tool"),
    Field("ok", JsonType.BOOLEAN, "ok"),
    Field("duration_ms", JsonType.NUMBER, "duration_ms", non_negative=True),
    Field("task", JsonType.STRING, "task"),
    Field("commit", JsonType.OBJECT),
    Field("commit.sha", JsonType.STRING, "commit_sha"),
    Field("commit.files", JsonType.INTEGER, "commit_files", non_negative=True),
    Field("commit.insertions", JsonType.INTEGER, "commit_insertions", non_negative=True),
    Field("commit.deletions", JsonType.INTEGER, "commit_deletions", non_negative=True),
    Field("commit.message", JsonType.STRING, "commit_message"),
    Field("push", JsonType.OBJECT),
    Field("push.conflict", JsonType.BOOLEAN, "push_conflict"),
    Field("error", JsonType.OBJECT),
    Field("error.kind", JsonType.STRING, "error_kind"),
    Field("error.message", JsonType.STRING, "error_message"),
    Field("handoff", JsonType.OBJECT),
    Field("handoff.to", JsonType.STRING, "handoff_to"),
    Field("handoff.status", JsonType.STRING, "handoff_status"),
    Field("handoff.notes", JsonType.STRING, "handoff_notes"),
    Field("attrs", JsonType.OBJECT, "attrs"),
)

# The events columns this format fills, in the table's order.
EVENT_COLUMNS: tuple[str, ...] = tuple(column.name for column in CONTRACT_COLUMNS)

TOP_LEVEL = tuple(f.path for f in FIELDS if f.container is None)
CONTAINERS = tuple(f.path for f in FIELDS if f.kind == JsonType.OBJECT and f.column is None)
