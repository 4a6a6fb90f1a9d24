"""Codex's OpenTelemetry log records (`[otel]` in `config.toml`) -> agent events.

Owns which log records are Codex's (`service.name` `codex-cli`, `codex_exec`,
`codex_tui`, or an `event.name` `codex.*`) and what each becomes (docs/otlp.md, "Codex"):

- run = `conversation.id` (the run a rollout import of the same session makes); one
  agent, `main`, as ingest/parsers/codex.py names it.
- `codex.conversation_starts` -> `spawn` (role `main`: model, provider, policies in attrs).
- `codex.sse_event` with `event.kind` `response.completed` and token counts -> `llm_call`.
  Codex counts cached tokens inside `input_token_count` and reasoning inside
  `output_token_count` (the Responses API's usage), as in a rollout: `input_tokens`
  excludes the cached part, `cached_input_tokens` holds it, `reasoning_output_tokens` is
  the reasoning part of `output_tokens` (billed as output, so kept in it). A
  `response.completed` with `error.message` is a failed `llm_call`; another kind with
  `error.message` an `error` (kind `model`); other SSE events are not kept.
- `codex.api_request` -> `api_request` (attempt, duration, status; not an attempt of the
  contract: the call's tokens come with its `response.completed`), or an `error` (kind
  `api`) when it failed (`error.message`, or a status of 400 or more).
- `codex.tool_result` -> `tool_call` (tool, `success`, duration), id the `call_id` as a
  rollout's; a successful `git commit` whose output shows `[branch sha] subject` is also a
  `commit`.
- `codex.user_prompt` -> `prompt` (`prompt_length`; the text only when Codex logged it,
  not `[REDACTED]`); `codex.tool_decision` -> `tool_decision` (tool, decision, source).

Codex logs no sequence number: an event's id is a digest of the record (its time and
attributes), so an exporter's retry is the same event. Pure: no warehouse, no files.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ingest.parsers import otlp
from ingest.parsers.event_rows import Reject
from ingest.parsers.otlp import IGNORED, Attrs, Mapped, Resource, Sender
from ingest.parsers.tool_calls import GIT_COMMIT_COMMAND, read_commit_header
from warehouse.schema.events import EventKind

SERVICES = frozenset({"codex-cli", "codex_exec", "codex_tui"})
AGENT = "main"  # as a rollout import names Codex's one agent (ingest/parsers/codex.py)
PROMPT = "prompt"
API_REQUEST = "api_request"
TOOL_DECISION = "tool_decision"
MESSAGE_LIMIT = 1000  # an error message kept, cut here
# What every Codex record repeats: the session's fixed facts, not kept on each event.
_COMMON = (
    "event.name",
    "event.timestamp",
    "conversation.id",
    "app.version",
    "auth_mode",
    "user.account_id",
    "terminal.type",
    "slug",
    "model",
)


def map_codex(resource: Resource, attrs: Attrs, record: Any, sender: Sender) -> Mapped | None:
    """A Codex log record's events; None for another source's record."""
    name = _event_name(attrs, record)
    if name is None or (resource.service not in SERVICES and not name.startswith("codex.")):
        return None
    name = name.removeprefix("codex.")
    handler = _HANDLERS.get(name)
    if handler is None:
        return IGNORED  # sandbox assessments, websocket events...: Codex's, not kept
    run = otlp.text(attrs, "conversation.id", required=True)
    base = {
        "run": run,
        "agent": AGENT,
        "ts": otlp.ts_text(record.time_unix_nano or record.observed_time_unix_nano),
        "model": otlp.text(attrs, "model"),
    }
    return handler(base, attrs, _digest(name, record, attrs))


def _event_name(attrs: Attrs, record: Any) -> str | None:
    name = attrs.get("event.name")
    if isinstance(name, str) and name:
        return name
    body = record.body.string_value if record.body.WhichOneof("value") == "string_value" else ""
    return body if body.startswith("codex.") else None


def _digest(name: str, record: Any, attrs: Attrs) -> str:
    """The record's identity: its name, time and attributes (a retry sends them again)."""
    at = record.time_unix_nano or record.observed_time_unix_nano
    raw = orjson.dumps([name, at, attrs], option=orjson.OPT_SORT_KEYS, default=str)
    return f"codex:{name}:{hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:24]}"


def _attrs(attrs: Attrs, consumed: tuple[str, ...]) -> str | None:
    return otlp.extra_attrs(attrs, (*_COMMON, *consumed))


def _message(attrs: Attrs) -> str | None:
    value = attrs.get("error.message")
    if value is None or value == "":
        return None
    return str(value)[:MESSAGE_LIMIT]


def _conversation_starts(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    spawn = {
        **base,
        "event": EventKind.SPAWN,
        "id": f"session:{base['run']}",
        "role": "main",
        "attrs": _attrs(attrs, ()),
    }
    return Mapped(events=[spawn])


def _sse_event(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    kind = attrs.get("event.kind")
    message = _message(attrs)
    if kind != "response.completed":
        if message is None:
            return IGNORED  # a streamed delta or item: the call is its response.completed
        error = {
            **base,
            "event": EventKind.ERROR,
            "id": digest,
            "error_kind": "model",
            "error_message": message,
            "attrs": _attrs(attrs, ("error.message",)),
        }
        return Mapped(events=[error])
    if message is not None:
        failed = {
            **base,
            "event": EventKind.LLM_CALL,
            "id": digest,
            "ok": False,
            "error_message": message,
            "attrs": _attrs(attrs, ("error.message",)),
        }
        return Mapped(events=[failed])
    given = otlp.count(attrs, "input_token_count")
    output = otlp.count(attrs, "output_token_count")
    if given is None or output is None:
        raise Reject("response.completed without input_token_count and output_token_count")
    cached = min(otlp.count(attrs, "cached_token_count") or 0, given)
    reasoning = min(otlp.count(attrs, "reasoning_token_count") or 0, output)
    call = {
        **base,
        "event": EventKind.LLM_CALL,
        "id": digest,
        "input_tokens": given - cached,
        "cached_input_tokens": cached,
        "cache_write_tokens": 0,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "duration_ms": otlp.number(attrs, "duration_ms"),
        "attrs": _attrs(
            attrs,
            (
                "event.kind",
                "input_token_count",
                "output_token_count",
                "cached_token_count",
                "reasoning_token_count",
                "duration_ms",
            ),
        ),
    }
    return Mapped(events=[call])


def _api_request(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    status = otlp.count(attrs, "http.response.status_code")
    message = _message(attrs)
    failed = message is not None or (status is not None and status >= 400)
    row = {
        **base,
        "event": EventKind.ERROR if failed else API_REQUEST,
        "id": digest,
        "duration_ms": otlp.number(attrs, "duration_ms"),
        "attrs": _attrs(attrs, ("duration_ms", "error.message")),
    }
    if failed:
        row["error_kind"] = "api"
        row["error_message"] = message or f"HTTP {status}"
    return Mapped(events=[row])


def _tool_result(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    tool = otlp.text(attrs, "tool_name", required=True)
    ok = otlp.flag(attrs, "success")
    call_id = otlp.text(attrs, "call_id")
    output = attrs.get("output")
    arguments = attrs.get("arguments")
    call = {
        **base,
        "event": EventKind.TOOL_CALL,
        "id": call_id or digest,
        "tool": tool,
        "ok": ok,
        "duration_ms": otlp.number(attrs, "duration_ms"),
        # The output and arguments are the session's content, not kept on the event.
        "attrs": _attrs(attrs, ("tool_name", "success", "call_id", "duration_ms", "output")),
    }
    events = [call]
    if ok is not False and isinstance(arguments, str) and isinstance(output, str):
        commit = (
            read_commit_header(output, anywhere=True)
            if GIT_COMMIT_COMMAND.search(arguments)
            else None
        )
        if commit is not None:
            events.append(
                {
                    **base,
                    "event": EventKind.COMMIT,
                    "id": f"commit:{call_id or digest}",
                    "commit_sha": commit.sha,
                    "commit_message": commit.subject,
                    "commit_files": commit.files,
                    "commit_insertions": commit.insertions,
                    "commit_deletions": commit.deletions,
                }
            )
    return Mapped(events=events)


def _user_prompt(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    prompt = attrs.get("prompt")
    captured = {"prompt": prompt} if isinstance(prompt, str) and prompt != "[REDACTED]" else {}
    kept = {**{k: v for k, v in attrs.items() if k != "prompt"}, **captured}
    row = {**base, "event": PROMPT, "id": digest, "attrs": _attrs(kept, ())}
    return Mapped(events=[row])


def _tool_decision(base: dict[str, Any], attrs: Attrs, digest: str) -> Mapped:
    row = {
        **base,
        "event": TOOL_DECISION,
        "id": digest,
        "tool": otlp.text(attrs, "tool_name"),
        "attrs": _attrs(attrs, ("tool_name",)),
    }
    return Mapped(events=[row])


_HANDLERS = {
    "conversation_starts": _conversation_starts,
    "sse_event": _sse_event,
    "api_request": _api_request,
    "tool_result": _tool_result,
    "user_prompt": _user_prompt,
    "tool_decision": _tool_decision,
}
