"""What a runs-list request asks for: the search, the filters, the sort and the page, read
and checked once for `GET /api/runs` and the runs page alike (a bad value is a
ParameterError: 422, one line), and the keyset cursor that names where a page ends.

Pure: strings in, a RunListRequest out; no queries. The SQL that filters, sorts and pages
lives in analytics/runs/listing.py, which reads each sort's column from SORTS.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from analytics.runs.paging import MAX_LIMIT
from analytics.runs.status import RunState
from lib.bounds import name_problem
from lib.errors import ParameterError
from lib.window import TimeRange, WindowQuery

# The page shows a screen or two; the API, which used to answer every run, answers up to
# the most a page may hold unless asked for fewer.
PAGE_LIMIT = 50
API_LIMIT = MAX_LIMIT
BAD_CURSOR = "cursor is not one this list gave"


@dataclass(frozen=True)
class SortColumn:
    """A column the list sorts by: its SQL over the listed rows (never NULL, so the keyset
    comparison holds) and the type its cursor value is bound as."""

    expression: str
    sql_type: str


SORTS: dict[str, SortColumn] = {
    "name": SortColumn("run", "VARCHAR"),
    "source": SortColumn("source_kind", "VARCHAR"),
    "first_seen": SortColumn("first_ts", "TIMESTAMPTZ"),
    "last_seen": SortColumn("last_ts", "TIMESTAMPTZ"),
    "agents": SortColumn("agents", "BIGINT"),
    "events": SortColumn("events", "BIGINT"),
    "commits": SortColumn("commits", "BIGINT"),
    "errors": SortColumn("errors", "BIGINT"),
    "tokens": SortColumn("tokens", "BIGINT"),
}
DEFAULT_SORT = "-last_seen"  # the latest first, as the list always was
SORT_NAMES = ", ".join(f"{name}, -{name}" for name in SORTS)

CursorKey = tuple[str | int | datetime, str]  # the sort column's value, then the run


@dataclass(frozen=True)
class RunListRequest:
    """One page of the runs list. `q` is lower-cased (matched as a substring of the run's
    name and label); `sort` names a SORTS column, `descending` its direction; ties are
    always broken by the run's name, A to Z."""

    q: str | None = None
    status: RunState | None = None
    source: str | None = None
    team: str | None = None
    model: str | None = None
    window: TimeRange = TimeRange()
    sort: str = "last_seen"
    descending: bool = True
    limit: int = PAGE_LIMIT
    after: CursorKey | None = None

    @property
    def sort_token(self) -> str:
        """The sort as the URL spells it (`-last_seen`)."""
        return ("-" if self.descending else "") + self.sort

    @property
    def column(self) -> SortColumn:
        return SORTS[self.sort]

    @property
    def filtered(self) -> bool:
        """Whether anything narrows the list (the empty state says which case it is)."""
        narrowing = (self.q, self.status, self.source, self.team, self.model)
        return any(v is not None for v in (*narrowing, self.window.start, self.window.end))


def _text(params: Mapping[str, Any], name: str) -> str | None:
    """The parameter without its surrounding spaces; a control character anywhere in it,
    a trailing newline included, is refused rather than trimmed away."""
    value = params.get(name)
    if value is None or str(value).strip(" ") == "":
        return None
    text = str(value).strip(" ")
    problem = name_problem(text, name)
    if problem:
        raise ParameterError(problem)
    return text


def _limit(value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise ParameterError(f"limit {str(value)[:40]!r} is not an integer") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise ParameterError(f"limit must be between 1 and {MAX_LIMIT}")
    return limit


def _sort(value: str | None) -> tuple[str, bool]:
    token = value or DEFAULT_SORT
    name = token.removeprefix("-")
    if name not in SORTS:
        raise ParameterError(f"sort must be one of {SORT_NAMES}")
    return name, token.startswith("-")


def _status(value: str | None) -> RunState | None:
    if value is None:
        return None
    try:
        return RunState(value)
    except ValueError:
        names = ", ".join(s.value for s in RunState)
        raise ParameterError(f"status must be one of {names}") from None


def read_request(params: Mapping[str, Any], *, default_limit: int = PAGE_LIMIT) -> RunListRequest:
    """The request a query string (or the API's Query schema, as a dict) asks for."""
    q = _text(params, "q")
    sort, descending = _sort(_text(params, "sort"))
    window = WindowQuery(start=params.get("start") or None, end=params.get("end") or None)
    cursor = _text(params, "cursor")
    return RunListRequest(
        q=q.lower() if q else None,
        status=_status(_text(params, "status")),
        source=_text(params, "source"),
        team=_text(params, "team"),
        model=_text(params, "model"),
        window=window.time_range(),
        sort=sort,
        descending=descending,
        limit=_limit(params.get("limit"), default_limit),
        after=decode_cursor(cursor, ("-" if descending else "") + sort) if cursor else None,
    )


def encode_cursor(sort_token: str, key: CursorKey) -> str:
    value, run = key
    shown = value.isoformat() if isinstance(value, datetime) else value
    raw = orjson.dumps([sort_token, shown, run])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, sort_token: str) -> CursorKey:
    """A cursor this list gave for this sort, or ParameterError (one line)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        token, value, run = orjson.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise ParameterError(BAD_CURSOR) from None
    if token != sort_token or not isinstance(run, str):
        raise ParameterError(BAD_CURSOR)
    sql_type = SORTS[sort_token.removeprefix("-")].sql_type
    if sql_type == "BIGINT" and isinstance(value, int) and not isinstance(value, bool):
        return value, run
    if sql_type == "VARCHAR" and isinstance(value, str):
        return value, run
    if sql_type == "TIMESTAMPTZ" and isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            raise ParameterError(BAD_CURSOR) from None
        if when.tzinfo is not None:
            return when.astimezone(UTC), run
    raise ParameterError(BAD_CURSOR)
