"""The demo's OpenTelemetry-fed Claude Code sessions (ingest/demo.py's `otlp-demo` step):
three people of two teams, each a session as Claude Code exports it (events as OTLP
logs, a subagent's `claude_code.llm_request` span, the usual metrics), with the person
and team as resource attributes (`user.email`, `team.id`, as OTEL_RESOURCE_ATTRIBUTES
sets them).

Owns building those requests (`opentelemetry-proto` classes, placed in time before the
demo's `now`), writing them as protobuf bodies once, and loading them the way the
receiver's requests are: map_request, the spool (otlp_spool.append), the loader
(otlp.drain), so a second load stores nothing twice. Must not write the warehouse itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.pipelines.loading import IngestSummary
from ingest.sources.otlp import PROTOBUF, Signal, decode, key_values

SENDER = Sender("demo")  # an all-teams sender: each resource names its team
MODEL = "claude-sonnet-4-5-20250929"
SUBAGENT_MODEL = "claude-haiku-4-5-20251001"
TURN = timedelta(minutes=8)
FILES = {Signal.LOGS: "logs.binpb", Signal.TRACES: "traces.binpb", Signal.METRICS: "metrics.binpb"}
# $ per million tokens (input, output, cache read, cache write): what the demo logs as
# cost_usd, as Claude Code logs its own estimate.
_PRICES = {MODEL: (3.0, 15.0, 0.3, 3.75), SUBAGENT_MODEL: (1.0, 5.0, 0.1, 1.25)}
_DELTA = 1


@dataclass(frozen=True)
class Person:
    email: str
    team: str
    session: str
    starts_ago: timedelta  # the session's first prompt, before the demo's now
    turns: int  # prompts, each two API calls, a Read and an Edit
    extra: str  # what else their session shows: a failed test, an API error, a subagent


PEOPLE = (
    Person("alice@example.com", "platform", "demo-otlp-alice", timedelta(hours=3), 4, "test"),
    Person("bob@example.com", "platform", "demo-otlp-bob", timedelta(hours=2), 3, "error"),
    Person("carol@example.com", "payments", "demo-otlp-carol", timedelta(minutes=90), 2, "agent"),
)


def _ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _resource(person: Person) -> dict[str, Any]:
    return {
        "service.name": "claude-code",
        "service.version": "2.1.140",
        "os.type": "linux",
        "user.email": person.email,
        "team.id": person.team,
    }


def _cost(model: str, tokens: tuple[int, int, int, int]) -> float:
    return round(sum(t * p for t, p in zip(tokens, _PRICES[model], strict=True)) / 1e6, 6)


class _Session:
    """One person's events, numbered by event.sequence as Claude Code numbers them."""

    def __init__(self, person: Person, start: datetime) -> None:
        self.person = person
        self.start = start
        self.events: list[tuple[datetime, str, dict[str, Any]]] = []

    def add(self, at: datetime, name: str, **attrs: Any) -> None:
        self.events.append((at, name, attrs))

    def call(self, at: datetime, request: str, model: str, tokens: tuple[int, ...]) -> None:
        counts = (tokens[0], tokens[1], tokens[2], tokens[3])
        self.add(
            at, "api_request", model=model, input_tokens=counts[0], output_tokens=counts[1],
            cache_read_tokens=counts[2], cache_creation_tokens=counts[3],
            cost_usd=_cost(model, counts), duration_ms=4000 + counts[1] * 5, speed="normal",
            request_id=request, query_source="repl_main_thread",
        )  # fmt: skip

    def tool(self, at: datetime, tool: str, ok: bool, ms: int, **attrs: Any) -> None:
        self.add(at, "tool_result", tool_name=tool, success="true" if ok else "false",
                 duration_ms=ms, decision_type="accept", decision_source="config", **attrs)  # fmt: skip

    def records(self) -> list[Any]:
        out = []
        for sequence, (at, name, attrs) in enumerate(self.events, start=1):
            log = LogRecord(time_unix_nano=_ns(at), observed_time_unix_nano=_ns(at))
            log.body.string_value = f"claude_code.{name}"
            log.attributes.extend(
                key_values({"session.id": self.person.session, "event.name": name,
                     "event.sequence": sequence, "terminal.type": "vscode", **attrs})
            )  # fmt: skip
            out.append(log)
        return out


def session_of(person: Person, now: datetime) -> _Session:
    """The person's session: per turn a prompt, a call, a Read, a call, an Edit; a commit
    on the last turn; then what `person.extra` adds."""
    start = now.astimezone(UTC).replace(second=0, microsecond=0) - person.starts_ago
    session = _Session(person, start)
    name = person.session.removeprefix("demo-otlp-")
    for k in range(person.turns):
        at = start + k * TURN
        session.add(at, "user_prompt", prompt_length=40 + k)
        session.call(at + timedelta(seconds=5), f"req_{name}_{k}a", MODEL,
                     (1500 + 100 * k, 400 + 50 * k, 20000, 1000))  # fmt: skip
        session.tool(at + timedelta(seconds=9), "Read", True, 15)
        session.call(at + timedelta(seconds=20), f"req_{name}_{k}b", MODEL, (200, 800, 22000, 0))
        session.tool(at + timedelta(seconds=30), "Edit", True, 40)
    end = start + person.turns * TURN
    sha = _sha(person.session)
    commit = f'{{"bash_command":"git","full_command":"git commit -m demo","git_commit_id":"{sha}"}}'
    session.tool(end - timedelta(minutes=2), "Bash", True, 900, tool_parameters=commit)
    if person.extra == "test":
        tests = '{"bash_command":"pytest","full_command":"pytest -q"}'
        session.tool(end - timedelta(minutes=1), "Bash", False, 5200, error="Exit code 1",
                     tool_parameters=tests)  # fmt: skip
    elif person.extra == "error":
        session.add(end - timedelta(minutes=1), "api_error", model=MODEL, error="Overloaded",
                    status_code="529", duration_ms=2100, attempt=1)  # fmt: skip
    else:  # a subagent's call (traces_request's span names its agent), then its end
        session.call(end - timedelta(seconds=87), "req_carol_agent", SUBAGENT_MODEL,
                     (900, 210, 0, 3100))  # fmt: skip
        session.add(end - timedelta(minutes=1), "subagent_completed", agent_id="d3m0a1",
                    agent_type="Explore", total_tool_uses=3, duration_ms=30000)  # fmt: skip
    return session


def _sha(session: str) -> str:
    """A stable 7-hex-digit sha per session (Python's hash() is salted per process)."""
    return f"{sum((i + 1) * ord(c) for i, c in enumerate(session)) * 2654435761 % 16**7:07x}"


def logs_request(now: datetime) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    for person in PEOPLE:
        group = request.resource_logs.add()
        group.resource.attributes.extend(key_values(_resource(person)))
        group.scope_logs.add().log_records.extend(session_of(person, now).records())
    return request


def traces_request(now: datetime) -> ExportTraceServiceRequest:
    """Carol's subagent: one llm_request span made inside it (its place in the tree)."""
    request = ExportTraceServiceRequest()
    person = PEOPLE[2]
    session = session_of(person, now)
    group = request.resource_spans.add()
    group.resource.attributes.extend(key_values(_resource(person)))
    start = session.start + person.turns * TURN - timedelta(minutes=1, seconds=30)
    span = group.scope_spans.add().spans.add(
        name="claude_code.llm_request",
        trace_id=bytes.fromhex("6c0ffee0" * 4),
        span_id=bytes.fromhex("5ba0000000000001"),
        start_time_unix_nano=_ns(start),
        end_time_unix_nano=_ns(start + timedelta(seconds=3)),
    )
    span.attributes.extend(
        key_values({"session.id": person.session, "model": SUBAGENT_MODEL, "agent_id": "d3m0a1",
             "agent_type": "Explore", "request_id": "req_carol_agent", "ttft_ms": 620})
    )  # fmt: skip
    return request


def metrics_request(now: datetime) -> ExportMetricsServiceRequest:
    """Per session, one delta point each of the series the events do not carry: lines
    of code added and removed, active time, edit decisions, the session count."""
    request = ExportMetricsServiceRequest()
    for index, person in enumerate(PEOPLE):
        session = session_of(person, now)
        end = session.start + person.turns * TURN
        group = request.resource_metrics.add()
        group.resource.attributes.extend(key_values(_resource(person)))
        scope = group.scope_metrics.add()
        series: list[tuple[str, str, float, dict[str, Any]]] = [
            ("claude_code.session.count", "count", 1, {}),
            ("claude_code.lines_of_code.count", "count", 60 + 20 * index, {"type": "added"}),
            ("claude_code.lines_of_code.count", "count", 12 + 4 * index, {"type": "removed"}),
            ("claude_code.active_time.total", "s", 600.0 + 120 * index, {"type": "user"}),
            ("claude_code.code_edit_tool.decision", "count", person.turns,
             {"tool_name": "Edit", "decision": "accept", "language": "Python"}),
            ("claude_code.code_edit_tool.decision", "count", 1,
             {"tool_name": "Edit", "decision": "reject", "language": "Python"}),
            ("claude_code.commit.count", "count", 1, {}),
        ]  # fmt: skip
        for name, unit, value, attrs in series:
            metric = scope.metrics.add(name=name, unit=unit)
            metric.sum.aggregation_temporality = _DELTA
            metric.sum.is_monotonic = True
            point = metric.sum.data_points.add(
                start_time_unix_nano=_ns(session.start), time_unix_nano=_ns(end)
            )
            if isinstance(value, int):
                point.as_int = value
            else:
                point.as_double = value
            point.attributes.extend(key_values({"session.id": person.session, **attrs}))
    return request


def prepare(folder: Path, now: datetime) -> None:
    requests: dict[Signal, Message] = {
        Signal.LOGS: logs_request(now),
        Signal.TRACES: traces_request(now),
        Signal.METRICS: metrics_request(now),
    }
    for signal, request in requests.items():
        (folder / FILES[signal]).write_bytes(request.SerializeToString())


def load(folder: Path, progress: IO[str] | None) -> IngestSummary:
    """Spool the folder's requests as the receiver would, then drain the spool."""
    for signal, name in FILES.items():
        body = (folder / name).read_bytes()
        batch = map_request(signal, decode(signal, body, PROTOBUF), SENDER)
        otlp_spool.append(batch, SENDER, otlp_spool.body_digest(body))
    drained = otlp.drain(seconds=60)
    return IngestSummary(
        accepted=drained.events + drained.points,
        quarantined=drained.quarantined,
        duplicates=drained.duplicates,
        files=drained.files,
    )
