"""Claude Code's OpenTelemetry (`service.name` = `claude-code`) -> agent events, per
docs/otlp.md ("Claude Code").

Owns what a Claude Code log record (an event) or `claude_code.*` span becomes. The event
name is the record's `event.name` attribute, or its body `claude_code.<name>` (either may
carry the `claude_code.` prefix). Every row's run is `session.id`; its identity is
`seq:<event.sequence>` (`req:<request_id>` for an `api_request`), so a retried export is
stored once by the loader (run + id), and an API call a transcript import also brings is
told apart by its `request_id` column (ingest/pipelines/otlp_calls.py).

Agents: events name no agent, so each is the session's `main` agent, unless the record
carries `agent_id` (then `agent-<agent_id>`, the name a transcript import gives the same
subagent). The tree comes from the traces: a `claude_code.llm_request` span made inside
a subagent (`agent_id`, `parent_agent_id`) is a `spawn` row of `agent-<agent_id>` whose
parent is `agent-<parent_agent_id>`, else `main` (id `spawn:<agent>`: one per agent per
run however many calls its spans show), and it names the agent of the call its
`request_id` is (the loader moves that api_request's llm_call to the agent). The spans'
token counts are not read: the `api_request` event is the call, and counting both
would double it.
`subagent_completed` is the `stop` of `agent-<agent_id>`, else of the agent its
`agent_type` names.

Pure: a record and its attributes in, rows out; Reject (a one-line reason) for a record
of this source that cannot be used (no session.id, a bad count or time, a tool result
without its tool). Must not read the warehouse or decide what is already stored.
"""

from __future__ import annotations

from typing import Any

import orjson

from ingest.parsers.claude_code_subagents import MAIN_AGENT, agent_name
from ingest.parsers.event_rows import Reject, check_name
from ingest.parsers.otlp import (
    IGNORED,
    Attrs,
    Mapped,
    Resource,
    Sender,
    count,
    extra_attrs,
    flag,
    number,
    text,
    ts_text,
)
from ingest.parsers.timestamps import TimeProblem, read_rfc3339
from warehouse.schema.events import EventKind

SERVICE = "claude-code"
PREFIX = "claude_code."
PROMPT = "prompt"  # the event kind of a user prompt (counted as `other`)
ERROR_KIND = "api"  # an api_error's kind (docs/otlp.md)
LLM_REQUEST_SPAN = "claude_code.llm_request"
# Attributes every row reads into columns or its identity, never kept in attrs.
_STANDARD = ("session.id", "event.name", "event.sequence", "event.timestamp")


def event_name(attrs: Attrs, record: Any) -> str | None:
    """`api_request` from `event.name` = `api_request` / `claude_code.api_request`, or
    from the body `claude_code.api_request`."""
    name = attrs.get("event.name")
    if not isinstance(name, str) or not name:
        body = record.body.string_value if record.HasField("body") else ""
        name = body if body.startswith(PREFIX) else None
    if name is None:
        return None
    return name.removeprefix(PREFIX)


def _time(attrs: Attrs, record: Any) -> str:
    """The record's time, else its `event.timestamp`, else when the SDK observed it."""
    if record.time_unix_nano:
        return ts_text(record.time_unix_nano)
    stamp = attrs.get("event.timestamp")
    if isinstance(stamp, str) and stamp:
        try:
            moment = read_rfc3339(stamp)
        except TimeProblem as exc:
            raise Reject(f"event.timestamp {exc}") from None
        return ts_text(int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000)
    return ts_text(record.observed_time_unix_nano)


def _session(resource: Resource, attrs: Attrs) -> str:
    """`session.id`, on the record (where Claude Code writes it) or its resource."""
    where = attrs if "session.id" in attrs else resource.attrs
    session = text(where, "session.id", required=True)
    assert session is not None  # required
    return session


def _agent(attrs: Attrs) -> str:
    agent_id = text(attrs, "agent_id")
    return agent_name(agent_id) if agent_id is not None else MAIN_AGENT


def _ids(record: Any) -> dict[str, Any]:
    """A log record's span context, hex (when it was emitted inside a span)."""
    out: dict[str, Any] = {}
    if record.trace_id:
        out["trace_id"] = record.trace_id.hex()
    if record.span_id:
        out["span_id"] = record.span_id.hex()
    return out


def _commit_sha(attrs: Attrs) -> str | None:
    """A Bash result's `git_commit_id` from its `tool_parameters` (a JSON object as text,
    or an attribute map)."""
    params = attrs.get("tool_parameters")
    if isinstance(params, str) and params:
        try:
            params = orjson.loads(params)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(params, dict):
        return None
    sha = params.get("git_commit_id")
    return check_name(sha, "git_commit_id") if isinstance(sha, str) and sha else None


def map_log(resource: Resource, attrs: Attrs, record: Any, sender: Sender) -> Mapped | None:
    if resource.service != SERVICE:
        return None
    name = event_name(attrs, record)
    if name is None:
        raise Reject("no event name (event.name or a claude_code.* body)")
    build = _BUILDERS.get(name)
    if build is None:
        return IGNORED  # tool_decision, api_request_body...: valid, not kept
    run = _session(resource, attrs)
    sequence = count(attrs, "event.sequence")
    ts = _time(attrs, record)
    base: dict[str, Any] = {
        "run": run,
        "agent": _agent(attrs),
        "ts": ts,
        # Without a sequence (releases before it), the time and name are the identity.
        "id": f"seq:{sequence}" if sequence is not None else f"t:{ts}:{name}",
        **_ids(record),
    }
    if base["agent"] == MAIN_AGENT:
        base["role"] = "main"  # as a transcript import of the session names it
    rows = build(attrs, base)
    return Mapped(events=rows)


def _llm_call(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    request_id = text(attrs, "request_id")
    row = {
        **base,
        "event": EventKind.LLM_CALL,
        "model": text(attrs, "model", required=True),
        "input_tokens": count(attrs, "input_tokens"),
        "output_tokens": count(attrs, "output_tokens"),
        "cached_input_tokens": count(attrs, "cache_read_tokens"),
        "cache_write_tokens": count(attrs, "cache_creation_tokens"),
        "cost_usd": number(attrs, "cost_usd"),
        "duration_ms": number(attrs, "duration_ms"),
        "speed": text(attrs, "speed"),
        "request_id": request_id,
        "attrs": extra_attrs(attrs, (*_STANDARD, *_LLM_KEYS)),
    }
    if request_id is not None:
        row["id"] = f"req:{request_id}"
    return [row]


_LLM_KEYS = (
    "model",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cost_usd",
    "duration_ms",
    "speed",
    "request_id",
)


def _error(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    message = attrs.get("error")
    return [
        {
            **base,
            "event": EventKind.ERROR,
            "model": text(attrs, "model"),
            "duration_ms": number(attrs, "duration_ms"),
            "request_id": text(attrs, "request_id"),
            "error_kind": ERROR_KIND,
            "error_message": str(message)[:1000] if message not in (None, "") else None,
            # status_code and attempt stay in attrs, as logged (`529`, `undefined`).
            "attrs": extra_attrs(
                attrs, (*_STANDARD, "model", "duration_ms", "error", "request_id")
            ),
        }
    ]


def _tool_call(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    tool = text(attrs, "tool_name", required=True)
    ok = flag(attrs, "success")
    rows = [
        {
            **base,
            "event": EventKind.TOOL_CALL,
            "tool": tool,
            "ok": ok,
            "duration_ms": number(attrs, "duration_ms"),
            "attrs": extra_attrs(attrs, (*_STANDARD, "tool_name", "success", "duration_ms")),
        }
    ]
    sha = _commit_sha(attrs) if tool == "Bash" else None
    if sha is not None:
        rows.append(
            {
                **base,
                "id": f"commit:{sha}",
                "event": EventKind.COMMIT,
                "commit_sha": sha,
                "ok": ok,
            }
        )
    return rows


def _prompt(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    kept: dict[str, Any] = {"prompt_length": count(attrs, "prompt_length")}
    prompt = attrs.get("prompt")
    if isinstance(prompt, str) and prompt:
        kept["prompt"] = prompt  # only when the user enabled OTEL_LOG_USER_PROMPTS
    for key in ("prompt.id", "terminal.type"):
        if attrs.get(key) is not None:
            kept[key] = attrs[key]
    return [
        {
            **base,
            "event": PROMPT,
            "attrs": orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).decode(),
        }
    ]


def _summary(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    count(attrs, "pre_tokens")
    count(attrs, "post_tokens")
    return [{**base, "event": EventKind.SUMMARY, "attrs": extra_attrs(attrs, _STANDARD)}]


def _stop(attrs: Attrs, base: dict[str, Any]) -> list[dict[str, Any]]:
    count(attrs, "total_tool_uses")
    agent = base["agent"]
    if agent == MAIN_AGENT:
        agent = text(attrs, "agent_type") or "subagent"
    return [
        {
            **base,
            "agent": agent,
            "parent": MAIN_AGENT,
            "event": EventKind.STOP,
            "role": text(attrs, "agent_type"),
            "duration_ms": number(attrs, "duration_ms"),
            "attrs": extra_attrs(attrs, (*_STANDARD, "agent_id", "duration_ms")),
        }
    ]


_BUILDERS = {
    "api_request": _llm_call,
    "api_error": _error,
    "tool_result": _tool_call,
    "user_prompt": _prompt,
    "compaction": _summary,
    "subagent_completed": _stop,
}


def map_span(resource: Resource, attrs: Attrs, span: Any, sender: Sender) -> Mapped | None:
    if resource.service != SERVICE or not span.name.startswith(PREFIX):
        return None
    if span.name != LLM_REQUEST_SPAN:
        return IGNORED  # interaction and tool spans: the events carry what they say
    agent_id = text(attrs, "agent_id")
    if agent_id is None:
        return IGNORED  # the main agent's call
    run = _session(resource, attrs)
    agent = agent_name(agent_id)
    parent_id = text(attrs, "parent_agent_id")
    row = {
        "run": run,
        "agent": agent,
        "ts": ts_text(span.start_time_unix_nano),
        "event": EventKind.SPAWN,
        "id": f"spawn:{agent}",
        "parent": agent_name(parent_id) if parent_id is not None else MAIN_AGENT,
        "role": text(attrs, "agent_type"),
        # The call this span is: the loader names `agent` the agent of its api_request
        # (ingest/pipelines/otlp_calls.py), then stores the spawn without it.
        "request_id": text(attrs, "request_id"),
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex() or None,
    }
    return Mapped(events=[row])
