"""vLLM's request traces (`--otlp-traces-endpoint`): each `llm_request` span becomes one
per-request record (docs/requests.md, docs/otlp.md "vLLM request traces").

Owns reading vLLM's span attributes (vllm/tracing.py's SpanAttributes: latencies in
seconds, kept here in milliseconds), the instance the record belongs to (the resource's
`service.name`, else `host.name`, the one that names a scrape target first) and whether
the sender may send records of that instance (a sender who does not see every team: only
their teams' scrape targets). The span's trace, span and parent span ids are kept in hex:
with a propagated `traceparent` they are the calling agent's, which joins the record to
its run (analytics/runs/serving_latency.py). Reads the scrape targets' names and teams
(Django, cached for TARGETS_SECONDS); must not touch the warehouse or count tokens
(ingest/pipelines/otlp_requests.py does at load time).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ingest.parsers.event_rows import Reject
from ingest.parsers.otlp import (
    Attrs,
    Mapped,
    Resource,
    Sender,
    count,
    number,
    text,
    ts_text,
)

SPAN_NAME = "llm_request"
# How long the scrape targets' names and teams are reused before being read again.
TARGETS_SECONDS = 10.0
# The SDK's service.name when none was set (`unknown_service`, `unknown_service:python`).
_UNSET_SERVICE = "unknown_service"

# Latencies vLLM reports in seconds -> the record's columns in milliseconds.
LATENCIES_MS = {
    "gen_ai.latency.time_to_first_token": "ttft_ms",
    "gen_ai.latency.e2e": "latency_ms",
    "gen_ai.latency.time_in_queue": "queue_ms",
    "gen_ai.latency.time_in_model_prefill": "prefill_ms",
    "gen_ai.latency.time_in_model_decode": "decode_ms",
}
USAGE = {
    "gen_ai.usage.prompt_tokens": "usage_prompt_tokens",
    "gen_ai.usage.completion_tokens": "usage_completion_tokens",
    "gen_ai.usage.cached_tokens": "usage_cached_tokens",
}
# The current semantic conventions' name for cached prompt tokens, read when the above
# is absent.
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
REQUEST_ID = "gen_ai.request.id"
MODELS = ("gen_ai.response.model", "gen_ai.request.model")
FINISH_REASONS = "gen_ai.response.finish_reasons"
_CONSUMED = frozenset({*LATENCIES_MS, *USAGE, CACHE_READ, REQUEST_ID, *MODELS, FINISH_REASONS})


class _Targets:
    """The scrape targets' names -> their team's name (None: no team), read at most once
    per TARGETS_SECONDS by any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._teams: dict[str, str | None] = {}
        self._read_at: float | None = None

    def teams(self) -> dict[str, str | None]:
        with self._lock:
            now = time.monotonic()
            if self._read_at is None or now - self._read_at > TARGETS_SECONDS:
                from analytics.serving.models import ScrapeTarget

                rows = ScrapeTarget.objects.values_list("name", "team__name")
                self._teams = {name: team for name, team in rows}
                self._read_at = now
            return self._teams

    def clear(self) -> None:
        """Read them again next time (a test that adds targets)."""
        with self._lock:
            self._read_at = None


TARGETS = _Targets()


def instance_of(resource: Resource, targets: dict[str, str | None]) -> str | None:
    """The resource's `service.name` or `host.name`, the first that names a scrape
    target; else the first set (an SDK default service name does not count)."""
    candidates = []
    for key in ("service.name", "host.name"):
        value = text(resource.attrs, key)
        if value is not None and not (key == "service.name" and value.startswith(_UNSET_SERVICE)):
            candidates.append(value)
    for candidate in candidates:
        if candidate in targets:
            return candidate
    return candidates[0] if candidates else None


def _check_sender(instance: str | None, targets: dict[str, str | None], sender: Sender) -> None:
    """A sender who does not see every team sends only their teams' instances' records
    (as POST /api/ingest/requests decides for a record's instance)."""
    if sender.teams is None:
        return
    if instance is None:
        raise Reject(
            "llm_request: no service.name or host.name; only an all-teams sender may send it"
        )
    if instance not in targets or targets[instance] not in sender.teams:
        raise Reject(f"instance {instance} is not one of your teams' instances")


def _finish_reason(attrs: Attrs) -> str | None:
    value = attrs.get(FINISH_REASONS)
    if isinstance(value, list):
        value = value[0] if value else None
    return text({FINISH_REASONS: value}, FINISH_REASONS)


def _hex(raw: bytes) -> str | None:
    return raw.hex() if raw else None


def map_span(resource: Resource, attrs: Attrs, span: Any, sender: Sender) -> Mapped | None:
    """An `llm_request` span -> one per-request record; other spans are not vLLM's."""
    if span.name != SPAN_NAME or REQUEST_ID not in attrs:
        return None
    targets = TARGETS.teams()
    instance = instance_of(resource, targets)
    _check_sender(instance, targets, sender)
    record: dict[str, Any] = {
        "request_id": text(attrs, REQUEST_ID, required=True),
        "ts": ts_text(span.start_time_unix_nano),
        "model": next((m for m in (text(attrs, k) for k in MODELS) if m is not None), None),
        "instance": instance,
        "finish_reason": _finish_reason(attrs),
        "trace_id": _hex(span.trace_id),
        "span_id": _hex(span.span_id),
        "parent_span_id": _hex(span.parent_span_id),
    }
    for key, column in LATENCIES_MS.items():
        seconds = number(attrs, key)
        record[column] = None if seconds is None else seconds * 1000.0
    for key, column in USAGE.items():
        record[column] = count(attrs, key)
    if record["usage_cached_tokens"] is None:
        record["usage_cached_tokens"] = count(attrs, CACHE_READ)
    rest = {k: v for k, v in attrs.items() if k not in _CONSUMED}
    record["attrs"] = rest or None
    return Mapped(requests=[record])
