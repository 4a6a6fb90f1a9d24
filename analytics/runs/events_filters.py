"""The events explorer's question as a request spells it: the filters (kind, ok, agent and
its subtree, model, tool, a time window, a text search), the order, the page size and
the keyset cursor, read and checked once for the API and the page alike. A bad value is
a ParameterError with one line (422 on the API, the friendly 422 page on the page).

Pure: no queries (analytics/runs/events.py binds what this reads). The cursor is opaque
to readers: the sort key (ts, the row's stable DuckLake row id) of the last row shown.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import orjson

from analytics.runs.paging import DEFAULT_LIMIT, MAX_LIMIT
from lib.bounds import name_problem
from lib.errors import ParameterError
from lib.window import read_window

BAD_CURSOR = "cursor is not one this list gave"
QUERY_LENGTH = 200  # a text search longer than a sentence finds nothing a shorter one misses
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
# What the explorer's filter form and the API take; `format` (csv, jsonl) asks for the file.
FILTER_NAMES = ("kind", "ok", "agent", "subtree", "model", "tool", "q", "start", "end", "order")


class Order(StrEnum):
    NEWEST = "newest"
    OLDEST = "oldest"


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


Key = tuple[datetime, int]  # (ts, row id) of an event: the sort key, unique in the lake


@dataclass(frozen=True)
class EventFilter:
    """Which events of a run, in which order. `ok`: True = attempts that did not fail,
    False = the errors (failed attempts and `error` events, as the error rate counts)."""

    kind: str | None = None
    ok: bool | None = None
    agent: str | None = None
    subtree: bool = False
    model: str | None = None
    tool: str | None = None
    q: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    order: Order = Order.NEWEST

    def __post_init__(self) -> None:
        for name in ("kind", "agent", "model", "tool"):
            value = getattr(self, name)
            if value is not None and (problem := name_problem(value, name)):
                raise ParameterError(problem)
        if self.subtree and self.agent is None:
            raise ParameterError("subtree needs an agent")
        if self.q is not None and len(self.q) > QUERY_LENGTH:
            raise ParameterError(f"q is longer than {QUERY_LENGTH} characters")
        if self.start and self.end and self.start >= self.end:
            raise ParameterError("start must be before end")

    def query(self) -> dict[str, str]:
        """The filter as query-string values (what a link to the same filter carries)."""
        values: dict[str, str | None] = {
            "kind": self.kind,
            "ok": None if self.ok is None else str(self.ok).lower(),
            "agent": self.agent,
            "subtree": "1" if self.subtree else None,
            "model": self.model,
            "tool": self.tool,
            "q": self.q,
            "start": _rfc3339(self.start),
            "end": _rfc3339(self.end),
            "order": None if self.order is Order.NEWEST else self.order.value,
        }
        return {k: v for k, v in values.items() if v is not None}

    def is_empty(self) -> bool:
        return not any(k != "order" for k in self.query())


def _rfc3339(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def read_bool(value: str | None, name: str) -> bool | None:
    if value is None or value == "":
        return None
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ParameterError(f"{name} must be true or false")


def read_order(value: str | None) -> Order:
    if not value:
        return Order.NEWEST
    try:
        return Order(value)
    except ValueError:
        raise ParameterError("order must be newest or oldest") from None


def read_format(value: str | None) -> ExportFormat | None:
    if not value:
        return None
    try:
        return ExportFormat(value)
    except ValueError:
        raise ParameterError("format must be csv or jsonl") from None


def read_limit(value: str | int | None) -> int:
    if value is None or value == "":
        return DEFAULT_LIMIT
    if isinstance(value, str):
        text = value
        try:
            value = int(text)
        except ValueError:
            raise ParameterError(f"limit {text[:40]!r} is not an integer") from None
    if isinstance(value, bool) or not 1 <= value <= MAX_LIMIT:
        raise ParameterError(f"limit must be between 1 and {MAX_LIMIT}")
    return value


def read_filter(params: Mapping[str, Any]) -> EventFilter:
    """The filter from a query string's values (absent or empty: no filter)."""

    def text(name: str) -> str | None:
        value = params.get(name)
        return str(value) if value not in (None, "") else None

    window = read_window({k: str(params[k]) for k in ("start", "end") if params.get(k)})
    return EventFilter(
        kind=text("kind"),
        ok=read_bool(text("ok"), "ok"),
        agent=text("agent"),
        subtree=bool(read_bool(text("subtree"), "subtree")),
        model=text("model"),
        tool=text("tool"),
        q=text("q"),
        start=window.start_time(),
        end=window.end_time(),
        order=read_order(text("order")),
    )


def like_pattern(text: str) -> str:
    r"""`%text%` for ILIKE ... ESCAPE '\', the text's own `\`, `%` and `_` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def encode_cursor(key: Key) -> str:
    ts, row = key
    raw = orjson.dumps([ts.astimezone(UTC).isoformat(), row])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> Key:
    """A cursor this list gave, or ParameterError (one line)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        ts, row = orjson.loads(raw)
        moment = datetime.fromisoformat(ts)
    except (ValueError, TypeError, binascii.Error, orjson.JSONDecodeError):
        raise ParameterError(BAD_CURSOR) from None
    if isinstance(row, bool) or not isinstance(row, int) or moment.tzinfo is None:
        raise ParameterError(BAD_CURSOR)
    return moment, row
