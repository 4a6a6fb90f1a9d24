"""Per-request records (../shared/contract/requests.md) -> typed rows.

Three shapes map onto one record: the native v1 record, an OpenAI-style chat completion
log line (`{"request": ..., "response": ...}`) and an OpenAI Batch API output line
(`{"id", "custom_id", "response": {"status_code", "body"}, "error"}`). Pure: no files, no
Django, no warehouse, no token counting; a line that cannot become a record raises
`InvalidRecord` with the one-line reason the quarantine keeps.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import orjson

SOURCE_KIND = "requests"
RAW_TEXT_LIMIT = 64 * 1024  # quarantined lines keep at most 64 KiB of their raw text
# Unix seconds outside 2000-01-01 .. 2100-01-01 are almost surely milliseconds or junk.
TS_MIN, TS_MAX = 946684800, 4102444800

_ISO_639_1 = re.compile(r"^[a-z]{2}$")


class Shape(StrEnum):
    RECORD = "record"
    CHAT_COMPLETION = "chat_completion"
    BATCH_OUTPUT = "batch_output"


class InvalidRecord(ValueError):
    """The line cannot become a request record; the message is the quarantine reason."""


@dataclass(frozen=True)
class RawLine:
    """One line of input, where it came from, and its bytes without the newline."""

    line_no: int
    byte_offset: int
    data: bytes


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


@dataclass(frozen=True)
class Rejected:
    line_no: int
    byte_offset: int | None
    reason: str
    raw: str


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
    parsed = ParsedLines([], [])
    for line in lines:
        if not line.data.strip():
            continue
        try:
            obj = orjson.loads(line.data)
        except orjson.JSONDecodeError as exc:
            parsed.rejected.append(_reject(line, f"not JSON: {exc}"))
            continue
        try:
            parsed.records.append(parse_object(obj, line_no=line.line_no))
        except InvalidRecord as exc:
            parsed.rejected.append(_reject(line, str(exc)))
    return parsed


def parse_array(items: list[Any]) -> ParsedLines:
    """A JSON array body: element i is "line" i + 1."""
    parsed = ParsedLines([], [])
    for index, obj in enumerate(items):
        try:
            parsed.records.append(parse_object(obj, line_no=index + 1))
        except InvalidRecord as exc:
            raw = orjson.dumps(obj).decode()[:RAW_TEXT_LIMIT]
            parsed.rejected.append(Rejected(index + 1, None, str(exc), raw))
    return parsed


def _reject(line: RawLine, reason: str) -> Rejected:
    raw = line.data[:RAW_TEXT_LIMIT].decode("utf-8", "replace")
    return Rejected(line.line_no, line.byte_offset, reason, raw)


def parse_object(obj: Any, *, line_no: int | None = None) -> RequestRecord:
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {_json_type(obj)}")
    if isinstance(obj.get("request"), dict) and "response" in obj:
        return _parse_chat_log(obj, line_no)
    if "custom_id" in obj and "response" in obj:
        return _parse_batch_output(obj, line_no)
    return _parse_native(obj, line_no)


def _parse_native(obj: dict[str, Any], line_no: int | None) -> RequestRecord:
    usage = _object(obj, "usage")
    return RequestRecord(
        request_id=_request_id(obj.get("request_id"), "request_id"),
        ts=_timestamp(obj.get("ts"), "ts"),
        shape=Shape.RECORD,
        model=_string(obj, "model"),
        instance=_string(obj, "instance"),
        run=_string(obj, "run"),
        agent=_string(obj, "agent"),
        language=_language(obj.get("language")),
        prompt=_string(obj, "prompt"),
        completion=_string(obj, "completion"),
        usage_prompt_tokens=_count(usage, "prompt_tokens", "usage."),
        usage_completion_tokens=_count(usage, "completion_tokens", "usage."),
        usage_cached_tokens=_cached_tokens(usage),
        ttft_ms=_duration(obj, "ttft_ms"),
        latency_ms=_duration(obj, "latency_ms"),
        finish_reason=_string(obj, "finish_reason"),
        attrs=_attrs(obj, set()),
        line_no=line_no,
    )


def _parse_chat_log(obj: dict[str, Any], line_no: int | None) -> RequestRecord:
    request: dict[str, Any] = obj["request"]
    response = obj["response"]
    if not isinstance(response, dict):
        raise InvalidRecord(f"response: expected an object, got {_json_type(response)}")
    usage = _object(response, "usage", "response.")
    choices = _choices(response, "response.")
    request_id = obj.get("request_id", response.get("id"))
    ts = obj.get("ts", response.get("created"))
    return RequestRecord(
        request_id=_request_id(request_id, "request_id (or response.id)"),
        ts=_timestamp(ts, "ts (or response.created)"),
        shape=Shape.CHAT_COMPLETION,
        model=_string(obj, "model")
        or _string(response, "model", "response.")
        or _string(request, "model", "request."),
        instance=_string(obj, "instance"),
        run=_string(obj, "run"),
        agent=_string(obj, "agent"),
        language=_language(obj.get("language")),
        prompt=_prompt_text(request),
        completion=_completion_text(choices),
        usage_prompt_tokens=_count(usage, "prompt_tokens", "response.usage."),
        usage_completion_tokens=_count(usage, "completion_tokens", "response.usage."),
        usage_cached_tokens=_cached_tokens(usage),
        ttft_ms=_duration(obj, "ttft_ms"),
        latency_ms=_duration(obj, "latency_ms"),
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
        raise InvalidRecord(f"response: expected an object, got {_json_type(response)}")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200 or not isinstance(body, dict):
        raise InvalidRecord(f"batch request {custom_id} failed with status {status}")
    usage = _object(body, "usage", "response.body.")
    choices = _choices(body, "response.body.")
    attrs = {"custom_id": custom_id}
    if isinstance(response.get("request_id"), str):
        attrs["provider_request_id"] = response["request_id"]
    if isinstance(body.get("id"), str):
        attrs["completion_id"] = body["id"]
    return RequestRecord(
        request_id=_request_id(obj.get("id"), "id"),
        ts=_timestamp(body.get("created"), "response.body.created"),
        shape=Shape.BATCH_OUTPUT,
        model=_string(body, "model", "response.body."),
        completion=_completion_text(choices),
        usage_prompt_tokens=_count(usage, "prompt_tokens", "response.body.usage."),
        usage_completion_tokens=_count(usage, "completion_tokens", "response.body.usage."),
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
        raise InvalidRecord(f"{prefix}choices: expected an array, got {_json_type(choices)}")
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
        return _count(usage, "cached_tokens", "usage.")
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        return _count(details, "cached_tokens", "usage.prompt_tokens_details.")
    return None


# --- field readers -------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _request_id(value: Any, name: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if value is None:
        raise InvalidRecord(f"{name} is required")
    raise InvalidRecord(f"{name}: expected a non-empty string, got {_json_type(value)}")


def _timestamp(value: Any, name: str) -> datetime:
    if value is None:
        raise InvalidRecord(f"{name} is required")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidRecord(
            f"{name}: expected an RFC 3339 string or Unix seconds, got {_json_type(value)}"
        )
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidRecord(f"{name}: not an RFC 3339 time: {value[:64]!r}") from None
        # A time without an offset is taken as UTC, the product's only zone.
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    if not math.isfinite(value) or not TS_MIN <= value < TS_MAX:
        raise InvalidRecord(f"{name}: {value} is not Unix seconds between 2000 and 2100")
    return datetime.fromtimestamp(value, UTC)


def _string(obj: dict[str, Any], key: str, prefix: str = "") -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InvalidRecord(f"{prefix}{key}: expected a string, got {_json_type(value)}")


def _object(obj: dict[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise InvalidRecord(f"{prefix}{key}: expected an object, got {_json_type(value)}")


def _count(obj: dict[str, Any], key: str, prefix: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRecord(f"{prefix}{key}: expected an integer, got {_json_type(value)}")
    if value < 0:
        raise InvalidRecord(f"{prefix}{key}: must not be negative, got {value}")
    return value


def _duration(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRecord(f"{key}: expected a number, got {_json_type(value)}")
    if not math.isfinite(value) or value < 0:
        raise InvalidRecord(f"{key}: must be a non-negative number, got {value}")
    return float(value)


def _language(value: Any) -> str | None:
    """ISO 639-1, lower-cased; a region or script subtag ("pt-BR", "zh_Hans") is dropped."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRecord(f"language: expected a string, got {_json_type(value)}")
    code = re.split(r"[-_]", value.strip().lower(), maxsplit=1)[0]
    if not _ISO_639_1.match(code):
        raise InvalidRecord(f"language: expected an ISO 639-1 code, got {value[:32]!r}")
    return code


def _attrs(obj: dict[str, Any], consumed: set[str]) -> dict[str, Any] | None:
    """`attrs`, plus any top-level field the contract does not name (explicit attrs win)."""
    attrs = obj.get("attrs")
    if attrs is not None and not isinstance(attrs, dict):
        raise InvalidRecord(f"attrs: expected an object, got {_json_type(attrs)}")
    extra = {k: v for k, v in obj.items() if k not in _NATIVE_FIELDS and k not in consumed}
    merged = {**extra, **(attrs or {})}
    return merged or None
