"""OTLP requests mapped onto what Fleetscope stores: event rows (the events columns),
per-request records (docs/requests.md), metric points (`otlp_points`) and rejected
records with their position and reason (docs/otlp.md).

Owns the walk over a request's resources, scopes and records, reading attributes
(AnyValue -> Python), times, the people fields every row carries (person, organization,
team, department, cost center) and the first mapper (of ingest/parsers/otlp_sources.py's
ordered list) that takes a record. Pure: no files, no warehouse. A
mapper raises Reject for a record it cannot use; the walk turns that into a `Rejected`
and goes on. Records of no source Fleetscope knows (an HTTP server's spans, say) are
counted as ignored, not rejected: they are valid telemetry of something else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message

from ingest.parsers.event_rows import Reject
from ingest.sources.otlp import Signal
from lib.bounds import NAME_LENGTH, name_problem

RAW_LIMIT = 64 * 1024  # a rejected record's JSON kept in quarantine, cut here
# The first and last instants an event may carry (docs/agent-events.md: 1970-2199).
_FIRST_NS = 0
_END_NS = int(datetime(2200, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000_000

Attrs = dict[str, Any]


@dataclass(frozen=True)
class Sender:
    """Who sent the request: the token's user, and the names of the teams their data
    may belong to (None: an all-teams user, whose data may name any team or none)."""

    name: str
    teams: frozenset[str] | None = None

    def team_of(self, named: str | None) -> str | None:
        """The team a record belongs to: the one its resource names (`team.id`), which a
        sender who does not see every team must be in; else such a sender's first team."""
        if self.teams is None:
            return named
        if named is None:
            return min(self.teams) if self.teams else None
        if named not in self.teams:
            raise Reject(f"team.id {named} is not one of your teams")
        return named


@dataclass(frozen=True)
class Resource:
    """One resource's attributes (service.name, host.name, OTEL_RESOURCE_ATTRIBUTES)."""

    attrs: Attrs

    @property
    def service(self) -> str:
        value = self.attrs.get("service.name")
        return value if isinstance(value, str) else ""


@dataclass
class Rejected:
    position: int  # the record's ordinal in the request, counting from 0
    path: str  # e.g. resourceLogs[0].scopeLogs[1].logRecords[3]
    reason: str
    raw: str  # the record as OTLP/JSON, cut at RAW_LIMIT
    weight: int = 1  # what partial_success counts: 1 per log record or span, a metric's points


@dataclass
class OtlpBatch:
    """What one request maps to; `records` counts every record the request held."""

    signal: Signal
    records: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    ignored: int = 0  # taken by no mapper: telemetry of something else
    skipped: int = 0  # taken by a mapper that keeps nothing of it (Claude Code's tool_decision)

    @property
    def rejected_count(self) -> int:
        return sum(r.weight for r in self.rejected)

    def warning(self) -> str:
        """partial_success's error_message: the first rejections' reasons, and how many
        records no source took."""
        parts = [f"{r.path}: {r.reason}" for r in self.rejected[:3]]
        if len(self.rejected) > 3:
            parts.append(f"and {len(self.rejected) - 3} more rejected (quarantined)")
        if self.ignored:
            parts.append(f"{self.ignored} records of no known source were not kept")
        return "; ".join(parts)


@dataclass(frozen=True)
class Mapped:
    """What a mapper makes of one record (each list may be empty)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)


IGNORED = Mapped()

# A mapper takes (resource, the record's attributes, the record, the sender) and returns
# what it makes of it, or None when the record is not its source's (the next mapper is
# asked); Reject for a record of its source that it cannot use. Which mappers, in which
# order, is ingest/parsers/otlp_sources.py's list.
Mapper = Callable[[Resource, Attrs, Any, Sender], Mapped | None]


# --- attributes and times -------------------------------------------------------------


def value_of(any_value: Any) -> Any:
    """An AnyValue as Python: str, bool, int, float, bytes (as hex), list or dict."""
    kind = any_value.WhichOneof("value")
    if kind == "string_value":  # most attributes: first
        return any_value.string_value
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(key_values: Iterable[Any]) -> Attrs:
    return {kv.key: value_of(kv.value) for kv in key_values}


def ts_text(unix_nano: int) -> str:
    """An event time as the RFC 3339 text the events insert casts; Reject outside
    1970-2199."""
    if not _FIRST_NS < unix_nano < _END_NS:
        raise Reject(f"time {unix_nano} ns is outside 1970-2199 (or not set)")
    seconds, nanos = divmod(unix_nano, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{nanos // 1000:06d}Z"


def text(attrs: Attrs, key: str, *, required: bool = False) -> str | None:
    """A string attribute held to the name bounds (1-200 characters, no control
    characters); numbers are read as their decimal text. Reject when required and absent,
    or when present and out of bounds."""
    value = attrs.get(key)
    if type(value) is str and 0 < len(value) <= NAME_LENGTH and value.isprintable():
        return value  # the common case, and a valid name (no control character is printable)
    if isinstance(value, bool) or value is None or value == "":
        if required:
            raise Reject(f"{key} missing")
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        raise Reject(f"{key} is not a string")
    problem = name_problem(value, key)
    if problem is not None:
        raise Reject(problem)
    return value


def count(attrs: Attrs, key: str) -> int | None:
    """A count attribute (int, or a decimal string as some exporters write them);
    Reject when negative, fractional or not a number."""
    value = attrs.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**18:
        raise Reject(f"{key} {value!r} is not a count")
    return value


def number(attrs: Attrs, key: str) -> float | None:
    """A non-negative number attribute (int, float or decimal string); Reject otherwise."""
    value = attrs.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise Reject(f"{key} {str(value)[:40]!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e18:
        raise Reject(f"{key} {value!r} is not a non-negative number")
    return float(value)


def flag(attrs: Attrs, key: str) -> bool | None:
    """A boolean attribute, also as the text `true` / `false` (Claude Code writes
    `success` as text)."""
    value = attrs.get(key)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise Reject(f"{key} {value!r} is not true or false")


def extra_attrs(attrs: Attrs, consumed: Iterable[str]) -> str | None:
    """The attributes a mapper did not put in a column, as the events' attrs JSON."""
    skip = set(consumed) | _PEOPLE_KEYS
    rest = {k: v for k, v in attrs.items() if k not in skip}
    return orjson.dumps(rest, option=orjson.OPT_SORT_KEYS).decode() if rest else None


# --- people ---------------------------------------------------------------------------

_PEOPLE_KEYS = frozenset({"user.email", "user.id", "organization.id", "user.account_uuid"})


def people(resource: Resource, attrs: Attrs, sender: Sender) -> dict[str, Any]:
    """The people columns of a record: person (user.email, else user.id), organization,
    team (the resource's team.id as the sender may name it), department, cost center."""
    return {**_person(resource, attrs), **resource_people(resource, sender)}


def resource_people(resource: Resource, sender: Sender) -> dict[str, Any]:
    """The people columns a resource decides for all its records (Reject for a team the
    sender may not name)."""
    return {
        "team": sender.team_of(text(resource.attrs, "team.id")),
        "department": text(resource.attrs, "department"),
        "cost_center": text(resource.attrs, "cost_center"),
    }


def _person(resource: Resource, attrs: Attrs) -> dict[str, Any]:
    # A record's own attribute wins over its resource's.
    both = {k: attrs[k] if k in attrs else resource.attrs.get(k) for k in _WHO_KEYS}
    return {
        "person": text(both, "user.email") or text(both, "user.id"),
        "organization": text(both, "organization.id"),
    }


_WHO_KEYS = ("user.email", "user.id", "organization.id")


# --- the walk -------------------------------------------------------------------------


def map_request(
    signal: Signal, request: Message, sender: Sender, mappers: Sequence[Mapper]
) -> OtlpBatch:
    """Every record of an Export*ServiceRequest through the first of `mappers` that takes it."""
    batch = OtlpBatch(signal)
    decided: tuple[Resource, dict[str, Any] | Reject] | None = None  # the last resource's part
    for path, resource, attrs, record in _records(signal, request):
        position = batch.records
        batch.records += 1
        try:
            mapped = _first_taker(mappers, resource, attrs, record, sender)
            kept = mapped is not None and (mapped.events or mapped.points)
            common: dict[str, Any] = {}
            if kept:
                if decided is None or decided[0] is not resource:
                    decided = (resource, _resource_part(resource, sender))
                if isinstance(decided[1], Reject):
                    raise decided[1]
                common = {**_person(resource, attrs), **decided[1]}
        except Reject as exc:
            weight = _points_in(record) if signal is Signal.METRICS else 1
            batch.rejected.append(Rejected(position, path, str(exc), _raw(record), weight))
            continue
        if mapped is None:
            batch.ignored += 1
            continue
        if mapped is IGNORED:  # its source's, deliberately not kept (docs/otlp.md)
            batch.skipped += 1
            continue
        for row in mapped.events:
            batch.events.append({**common, **row, "source_line": position})
        for point in mapped.points:
            batch.points.append({**common, **point})
        batch.requests.extend(mapped.requests)
    return batch


def _resource_part(resource: Resource, sender: Sender) -> dict[str, Any] | Reject:
    try:
        return resource_people(resource, sender)
    except Reject as exc:
        return exc


def _first_taker(
    mappers: Sequence[Mapper], resource: Resource, attrs: Attrs, record: Any, sender: Sender
) -> Mapped | None:
    for mapper in mappers:
        mapped = mapper(resource, attrs, record, sender)
        if mapped is not None:
            return mapped
    return None


def _records(signal: Signal, request: Any) -> Iterable[tuple[str, Resource, Attrs, Any]]:
    """(path, resource, the record's attributes, the record) for each log record, span or
    metric (a metric's data points are the mapper's to walk)."""
    if signal is Signal.LOGS:
        groups, scopes, items = request.resource_logs, "scope_logs", "log_records"
        names = ("resourceLogs", "scopeLogs", "logRecords")
    elif signal is Signal.TRACES:
        groups, scopes, items = request.resource_spans, "scope_spans", "spans"
        names = ("resourceSpans", "scopeSpans", "spans")
    else:
        groups, scopes, items = request.resource_metrics, "scope_metrics", "metrics"
        names = ("resourceMetrics", "scopeMetrics", "metrics")
    for r, group in enumerate(groups):
        resource = Resource(attributes(group.resource.attributes))
        for s, scope in enumerate(getattr(group, scopes)):
            for i, record in enumerate(getattr(scope, items)):
                path = f"{names[0]}[{r}].{names[1]}[{s}].{names[2]}[{i}]"
                attrs = attributes(record.attributes) if signal is not Signal.METRICS else {}
                yield path, resource, attrs, record


def _points_in(metric: Any) -> int:
    which = metric.WhichOneof("data")
    return len(getattr(metric, which).data_points) if which else 1


def _raw(record: Message) -> str:
    try:
        raw = orjson.dumps(json_format.MessageToDict(record)).decode()
    except (ValueError, TypeError) as exc:  # an unprintable record still gets its reason
        raw = f"(record not printable: {exc})"
    return raw[:RAW_LIMIT]
