"""Per-request records (docs/requests.md) -> typed rows.

Three shapes map onto one record: the native v1 record, an OpenAI-style chat completion
log line (`{"request": ..., "response": ...}`) and an OpenAI Batch API output line
(`{"id", "custom_id", "response": {"status_code", "body"}, "error"}`). Pure: no files, no
Django, no warehouse, no token counting; a line that cannot become a record raises
`InvalidRecord` with the one-line reason the quarantine keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson

from ingest.parsers.json_lines import (
    RAW_TEXT_LIMIT,
    InvalidRecord,
    RawLine,
    Rejected,
    json_type,
    parse_json_lines,
    read_count,
    read_duration,
    read_language,
    read_name,
    read_object,
    read_request_id,
    read_string,
    read_timestamp,
)

SOURCE_KIND = "requests"


class Shape(StrEnum):
    RECORD = "record"
    CHAT_COMPLETION = "chat_completion"
    BATCH_OUTPUT = "batch_output"


@dataclass(frozen=True)
class RequestRecord:
    request_id: str
    ts: datetime
    shape: Shape
    model: str | None = None
    instance: str | None = None
    run: str | None = None
    agent: str | None = None
    language: str | None = None
    prompt: str | None = None
    completion: str | None = None
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None
    usage_cached_tokens: int | None = None
    ttft_ms: float | None = None
    latency_ms: float | None = None
    finish_reason: str | None = None
    attrs: dict[str, Any] | None = None
    line_no: int | None = None


@dataclass
class ParsedLines:
    records: list[RequestRecord]
    rejected: list[Rejected]


# Native fields; anything else at the top level is kept in attrs.
_NATIVE_FIELDS = {
    "ts",
    "request_id",
    "model",
    "instance",
    "prompt",
    "completion",
    "language",
    "usage",
    "ttft_ms",
    "latency_ms",
    "finish_reason",
    "run",
    "agent",
    "attrs",
}


def parse_lines(lines: Iterable[RawLine]) -> ParsedLines:
    """Every non-blank line becomes a record or a rejection; blank lines are skipped."""
    records, rejected = parse_json_lines(lines, lambda obj, n: parse_object(obj, line_no=n))
    return ParsedLines(records, rejected)


def parse_array(items: list[Any], *, first_index: int = 0) -> ParsedLines:
    """A JSON array body (or a part of it starting at element `first_index`): element i is
    "line" i + 1."""
    parsed = ParsedLines([], [])
    for index, obj in enumerate(items, start=first_index):
        try:
            parsed.records.append(parse_object(obj, line_no=index + 1))
        except InvalidRecord as exc:
            raw = orjson.dumps(obj).decode()[:RAW_TEXT_LIMIT]
            parsed.rejected.append(Rejected(index + 1, None, str(exc), raw))
    return parsed


def parse_object(obj: Any, *, line_no: int | None = None) -> RequestRecord:
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {json_type(obj)}")
    if isinstance(obj.get("request"), dict) and "response" in obj:
        return _parse_chat_log(obj, line_no)
    if "custom_id" in obj and "response" in obj:
        return _parse_batch_output(obj, line_no)
    return _parse_native(obj, line_no)


def _parse_native(obj: dict[str, Any], line_no: int | None) -> RequestRecord:
    usage = read_object(obj, "usage")
    return RequestRecord(
        request_id=read_request_id(obj.get("request_id"), "request_id"),
        ts=read_timestamp(obj.get("ts"), "ts"),
        shape=Shape.RECORD,
        model=read_name(obj, "model"),
        instance=read_name(obj, "instance"),
        run=read_name(obj, "run"),
        agent=read_name(obj, "agent"),
        language=read_language(obj.get("language")),
        prompt=read_string(obj, "prompt"),
        completion=read_string(obj, "completion"),
        usage_prompt_tokens=read_count(usage, "prompt_tokens", "usage."),
        usage_completion_tokens=read_count(usage, "completion_tokens", "usage."),
        usage_cached_tokens=_cached_tokens(usage),
        ttft_ms=read_duration(obj, "ttft_ms"),
        latency_ms=read_duration(obj, "latency_ms"),
        finish_reason=read_string(obj, "finish_reason"),
        attrs=_attrs(obj, set()),
        line_no=line_no,
    )


def _parse_chat_log(obj: dict[str, Any], line_no: int | None) -> RequestRecord:
    request: dict[str, Any] = obj["request"]
    response = obj["response"]
    if not isinstance(response, dict):
        raise InvalidRecord(f"response: expected an object, got {json_type(response)}")
    usage = read_object(response, "usage", "response.")
    choices = _choices(response, "response.")
    request_id = obj.get("request_id", response.get("id"))
    ts = obj.get("ts", response.get("created"))
    return RequestRecord(
        request_id=read_request_id(request_id, "request_id (or response.id)"),
        ts=read_timestamp(ts, "ts (or response.created)"),
        shape=Shape.CHAT_COMPLETION,
        model=read_name(obj, "model")
        or read_name(response, "model", "response.")
        or read_name(request, "model", "request."),
        instance=read_name(obj, "instance"),
        run=read_name(obj, "run"),
        agent=read_name(obj, "agent"),
        language=read_language(obj.get("language")),
        prompt=_prompt_text(request),
        completion=_completion_text(choices),
        usage_prompt_tokens=read_count(usage, "prompt_tokens", "response.usage."),
        usage_completion_tokens=read_count(usage, "completion_tokens", "response.usage."),
        usage_cached_tokens=_cached_tokens(usage),
        ttft_ms=read_duration(obj, "ttft_ms"),
        latency_ms=read_duration(obj, "latency_ms"),
        finish_reason=_finish_reason(choices),
        attrs=_attrs(obj, {"request", "response"}),
        line_no=line_no,
    )


def _parse_batch_output(obj: dict[str, Any], line_no: int | None) -> RequestRecord:
    response = obj["response"]
    custom_id = obj.get("custom_id")
    error = obj.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise InvalidRecord(f"batch request {custom_id} failed: {message}")
    if not isinstance(response, dict):
        raise InvalidRecord(f"response: expected an object, got {json_type(response)}")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200 or not isinstance(body, dict):
        raise InvalidRecord(f"batch request {custom_id} failed with status {status}")
    usage = read_object(body, "usage", "response.body.")
    choices = _choices(body, "response.body.")
    attrs = {"custom_id": custom_id}
    if isinstance(response.get("request_id"), str):
        attrs["provider_request_id"] = response["request_id"]
    if isinstance(body.get("id"), str):
        attrs["completion_id"] = body["id"]
    return RequestRecord(
        request_id=read_request_id(obj.get("id"), "id"),
        ts=read_timestamp(body.get("created"), "response.body.created"),
        shape=Shape.BATCH_OUTPUT,
        model=read_name(body, "model", "response.body."),
        completion=_completion_text(choices),
        usage_prompt_tokens=read_count(usage, "prompt_tokens", "response.body.usage."),
        usage_completion_tokens=read_count(usage, "completion_tokens", "response.body.usage."),
        usage_cached_tokens=_cached_tokens(usage),
        finish_reason=_finish_reason(choices),
        attrs=attrs,
        line_no=line_no,
    )


# --- OpenAI chat bodies ------------------------------------------------------------------


def _content_text(content: Any) -> Iterator[str]:
    """Text of a message's content: a string, or the text parts of a parts list."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]


def _prompt_text(request: dict[str, Any]) -> str | None:
    """For chat, the messages' text joined by newlines (the contract's definition); the
    legacy completions API's `prompt` as is."""
    messages = request.get("messages")
    if isinstance(messages, list):
        texts = [
            text
            for message in messages
            if isinstance(message, dict)
            for text in _content_text(message.get("content"))
        ]
        return "\n".join(texts)
    prompt = request.get("prompt")
    return prompt if isinstance(prompt, str) else None


def _choices(body: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    choices = body.get("choices")
    if choices is None:
        return []
    if not isinstance(choices, list):
        raise InvalidRecord(f"{prefix}choices: expected an array, got {json_type(choices)}")
    return [choice for choice in choices if isinstance(choice, dict)]


def _completion_text(choices: list[dict[str, Any]]) -> str | None:
    """Generated text of every choice, tool-call arguments included (the provider bills
    them as completion tokens), joined by newlines."""
    if not choices:
        return None
    texts: list[str] = []
    for choice in choices:
        message = choice.get("message")
        if isinstance(message, dict):
            texts.extend(_content_text(message.get("content")))
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    texts.append(function["arguments"])
        elif isinstance(choice.get("text"), str):
            texts.append(choice["text"])
    return "\n".join(texts)


def _finish_reason(choices: list[dict[str, Any]]) -> str | None:
    reason = choices[0].get("finish_reason") if choices else None
    return reason if isinstance(reason, str) else None


def _cached_tokens(usage: dict[str, Any]) -> int | None:
    """`usage.cached_tokens` (native) or OpenAI's `usage.prompt_tokens_details.cached_tokens`."""
    if usage.get("cached_tokens") is not None:
        return read_count(usage, "cached_tokens", "usage.")
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        return read_count(details, "cached_tokens", "usage.prompt_tokens_details.")
    return None


# --- field readers -------------------------------------------------------------------------


def _attrs(obj: dict[str, Any], consumed: set[str]) -> dict[str, Any] | None:
    """`attrs`, plus any top-level field the contract does not name (explicit attrs win)."""
    attrs = obj.get("attrs")
    if attrs is not None and not isinstance(attrs, dict):
        raise InvalidRecord(f"attrs: expected an object, got {json_type(attrs)}")
    extra = {k: v for k, v in obj.items() if k not in _NATIVE_FIELDS and k not in consumed}
    merged = {**extra, **(attrs or {})}
    return merged or None
