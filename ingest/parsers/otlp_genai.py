"""Spans following the OpenTelemetry GenAI semantic conventions (OpenAI Agents SDK,
OpenLLMetry, a harness of one's own) -> agent events.

Owns which spans are GenAI operations and what each becomes (docs/otlp.md, "GenAI
semantic conventions"):

- run = `gen_ai.conversation.id`, else the trace id (hex); every row carries its
  `trace_id`, `span_id`, `parent_span_id`; id `span:<trace_id>:<span_id>`, so a retried
  span is stored once. `ts` is the span's start, `duration_ms` its length.
- `invoke_agent` -> `spawn` of the agent `gen_ai.agent.id`, else `gen_ai.agent.name`.
- `execute_tool` -> `tool_call` (`gen_ai.tool.name`), `ok` false when the span's status
  is ERROR, true otherwise.
- `chat`, `generate_content`, `text_completion`, `embeddings` -> `llm_call` with the
  model (`gen_ai.request.model`, else the response's) and usage. The conventions count
  cached tokens inside `gen_ai.usage.input_tokens` and reasoning inside
  `.output_tokens`: `input_tokens` here excludes `cache_read.input_tokens` (kept as
  `cached_input_tokens`) and `cache_creation.input_tokens` (`cache_write_tokens`), as the
  events contract counts them; when the cache parts exceed the input count the sender
  wrote them apart (Anthropic's way) and the input count is kept as it is. The
  deprecated `gen_ai.usage.prompt_tokens` / `completion_tokens` are read when the new
  names are absent.
- any other GenAI span (`create_agent`, a workflow, OpenLLMetry's `traceloop.span.kind`
  `workflow` / `task`) -> a `span` event (counted as `other`): the link that lets the
  spans below it find their agent. OpenLLMetry's older spans name their operation in
  `llm.request.type`, their agents and tools in `traceloop.span.kind` /
  `traceloop.entity.name`.

The agent of a chat or tool span is its nearest `invoke_agent` ancestor, which a span
exported before its parent (a span is exported when it ends) cannot know: such a row
carries the placeholder agent `main` (which stays when the span has no agent above it),
and an agent's `spawn` its parent NULL, until ingest/pipelines/otlp_spans.py assigns both
at load time from the stored span tree. Pure: no warehouse, no files. Prompts and
completions (message content) are not kept.
"""

from __future__ import annotations

from typing import Any

from ingest.parsers import otlp
from ingest.parsers.event_rows import Reject
from ingest.parsers.otlp import Attrs, Mapped, Resource, Sender
from warehouse.schema.events import EventKind

PENDING_AGENT = "main"  # a span's agent until (or unless) an invoke_agent above it is stored
SPAN_ID_PREFIX = "span:"  # an event's id: span:<trace_id>:<span_id>
SPAN_EVENT = "span"  # a GenAI span that is neither an agent, a tool nor a model call
STATUS_ERROR = 2  # Status.STATUS_CODE_ERROR
MESSAGE_LIMIT = 1000
LLM_OPERATIONS = frozenset({"chat", "generate_content", "text_completion", "embeddings"})
# OpenLLMetry's names for what the conventions now call gen_ai.operation.name.
_LEGACY_REQUEST_TYPES = {
    "chat": "chat",
    "completion": "text_completion",
    "embedding": "embeddings",
}
_TRACELOOP_KINDS = {"agent": "invoke_agent", "tool": "execute_tool"}
# Message content and tool payloads: a session's text, never kept.
_CONTENT_PREFIXES = (
    "gen_ai.input.",
    "gen_ai.output.",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "traceloop.entity.input",
    "traceloop.entity.output",
)
_CONSUMED = (
    "gen_ai.operation.name",
    "gen_ai.conversation.id",
    "gen_ai.agent.id",
    "gen_ai.agent.name",
    "gen_ai.tool.name",
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "llm.request.type",
    "traceloop.span.kind",
    "traceloop.entity.name",
)


def operation(attrs: Attrs) -> str | None:
    """The span's GenAI operation, None when it is not a GenAI span."""
    name = attrs.get("gen_ai.operation.name")
    if isinstance(name, str) and name:
        return name
    legacy = attrs.get("llm.request.type")
    if isinstance(legacy, str) and legacy in _LEGACY_REQUEST_TYPES:
        return _LEGACY_REQUEST_TYPES[legacy]
    kind = attrs.get("traceloop.span.kind")
    if isinstance(kind, str) and kind:
        return _TRACELOOP_KINDS.get(kind, kind)
    return None


def map_genai(resource: Resource, attrs: Attrs, span: Any, sender: Sender) -> Mapped | None:
    """A GenAI span's event; None for a span of no GenAI operation."""
    op = operation(attrs)
    if op is None:
        return None
    trace_id, span_id = span.trace_id.hex(), span.span_id.hex()
    if len(trace_id) != 32 or len(span_id) != 16:
        raise Reject(f"trace id {trace_id!r} or span id {span_id!r} is not a valid id")
    parent_span = span.parent_span_id.hex() or None
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    failed = span.status.code == STATUS_ERROR
    row: dict[str, Any] = {
        "run": otlp.text(attrs, "gen_ai.conversation.id") or trace_id,
        "agent": PENDING_AGENT,
        "ts": otlp.ts_text(start),
        "id": f"{SPAN_ID_PREFIX}{trace_id}:{span_id}",
        "duration_ms": (end - start) / 1e6 if end >= start else None,
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent_span,
        "attrs": otlp.extra_attrs(_kept(attrs), _CONSUMED),
    }
    if op == "invoke_agent":
        row.update(event=EventKind.SPAWN, agent=_agent_name(attrs, span, span_id))
    elif op == "execute_tool":
        tool = otlp.text(attrs, "gen_ai.tool.name") or otlp.text(attrs, "traceloop.entity.name")
        row.update(
            event=EventKind.TOOL_CALL,
            tool=tool or _after_operation(span.name) or span.name,
            ok=not failed,
        )
    elif op in LLM_OPERATIONS:
        row.update(event=EventKind.LLM_CALL, ok=not failed, **_usage(attrs))
        row["model"] = otlp.text(attrs, "gen_ai.request.model") or otlp.text(
            attrs, "gen_ai.response.model"
        )
    else:
        row.update(event=SPAN_EVENT, attrs=otlp.extra_attrs({**_kept(attrs), "op": op}, _CONSUMED))
    if failed:
        message = span.status.message or attrs.get("error.type") or "span status ERROR"
        row["error_message"] = str(message)[:MESSAGE_LIMIT]
    return Mapped(events=[row])


def _kept(attrs: Attrs) -> Attrs:
    return {k: v for k, v in attrs.items() if not k.startswith(_CONTENT_PREFIXES)}


def _after_operation(span_name: str) -> str | None:
    """`execute_tool get_weather` -> `get_weather` (the conventions' span name); None
    when the name is the operation alone."""
    _, _, rest = span_name.partition(" ")
    return otlp.text({"name": rest.strip()}, "name")


def _agent_name(attrs: Attrs, span: Any, span_id: str) -> str:
    return (
        otlp.text(attrs, "gen_ai.agent.id")
        or otlp.text(attrs, "gen_ai.agent.name")
        or otlp.text(attrs, "traceloop.entity.name")
        or _after_operation(span.name)
        or f"agent-{span_id}"
    )


def _usage(attrs: Attrs) -> dict[str, int | None]:
    given = otlp.count(attrs, "gen_ai.usage.input_tokens")
    if given is None:
        given = otlp.count(attrs, "gen_ai.usage.prompt_tokens")
    output = otlp.count(attrs, "gen_ai.usage.output_tokens")
    if output is None:
        output = otlp.count(attrs, "gen_ai.usage.completion_tokens")
    read = otlp.count(attrs, "gen_ai.usage.cache_read.input_tokens") or 0
    written = otlp.count(attrs, "gen_ai.usage.cache_creation.input_tokens") or 0
    reasoning = otlp.count(attrs, "gen_ai.usage.reasoning.output_tokens")
    if given is not None and given >= read + written:
        given -= read + written  # the conventions' input count includes its cache parts
    return {
        "input_tokens": given,
        "cached_input_tokens": read,
        "cache_write_tokens": written,
        "output_tokens": output,
        "reasoning_output_tokens": (None if reasoning is None else min(reasoning, output or 0)),
    }
