"""Claude Code's API responses -> `llm_call` rows: what each response used.

One llm_call per API response, keyed `<message.id>:<requestId>`, or without a requestId
`<message.id>:<sessionId>@<timestamp>` (a gateway may give every response the same
message.id). Claude Code writes a response as one line per content block, each repeating
`usage`; the line with the largest `output_tokens` wins (the earlier ones were written
mid-stream). Cache reads, 5-minute and 1-hour cache writes stay apart; `input_tokens`
excludes both, as the API reports it. `usage.speed` is kept ("fast": billed at the
model's fast-mode prices). An entry of `usage.iterations[]` of another type than the
response's (an advisor's sub-inference, `advisor_message`, with its own `model`) is an
llm_call of its own, `<call id>:<type>-<index>`; the entries of the response's own type
are parts of its top-level usage. A row keeps its response's message.id when a requestId
came with it: a sidechain (`/btw` side question, subagent) replays its parent's responses
under the same message.id and a new requestId, and the pipeline counts such a replay
once, as its parent's.

Pure: an `assistant` line's message in, rows of the transcript's ParsedTranscript
(claude_code.py, which decides which lines are read) added or raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ingest.parsers.claude_code_subagents import MAIN_AGENT, count_of
from ingest.parsers.event_rows import check_name
from warehouse.schema.events import EventKind

if TYPE_CHECKING:
    from ingest.parsers.claude_code import ParsedTranscript


_COUNTS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)
_SPLIT_COUNTS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def check_usage(message: dict[str, Any], usage: dict[str, Any]) -> None:
    """Reject a response whose counts or models are out of bounds, before any of its
    rows is added: a line is loaded whole or quarantined whole."""
    own_type = message.get("type") if isinstance(message.get("type"), str) else "message"
    parts = [usage]
    iterations = usage.get("iterations")
    if isinstance(iterations, list):
        parts += [
            entry
            for entry in iterations
            if isinstance(entry, dict)
            and isinstance(entry.get("type"), str)
            and entry["type"] != own_type
        ]
    for part in parts:
        for key in _COUNTS:
            count_of(part, key)
        split = part.get("cache_creation")
        if isinstance(split, dict):
            for key in _SPLIT_COUNTS:
                count_of(split, key)
        if part is not usage and isinstance(part.get("model"), str):
            check_name(part["model"], "model")


def add_llm_call(
    parsed: ParsedTranscript,
    doc: dict[str, Any],
    line_no: int,
    run: str,
    agent: str,
    ts: str,
    model: str | None,
    message: dict[str, Any],
    usage: dict[str, Any],
) -> None:
    """The llm_call rows of an `assistant` line's response and of its iterations of
    another type, or a larger output count for rows an earlier line of it made."""
    message_id = message["id"]
    request_id = doc.get("requestId")
    response: str | None = message_id  # what a sidechain's replay is matched by
    if isinstance(request_id, str) and request_id:
        call_id = f"{message_id}:{request_id}"
    else:
        # Behind a gateway or relay every response may carry the same message.id and no
        # requestId: the session and the line's timestamp tell one from another (the
        # lines of one response share both), and the message.id names no response.
        call_id = f"{message_id}:{run}@{ts}"
        response = None
    if parsed.chunk_open:
        parsed.continued_calls.add(call_id)
        parsed.chunk_open = False
    _usage_row(parsed, call_id, usage, line_no, run, agent, ts, model, response)
    if response is not None:
        # The provider's request id: the same call as Claude Code's OpenTelemetry
        # api_request of that id (ingest/pipelines/otlp_calls.py keeps it once).
        parsed.rows.set(parsed.llm_rows[call_id], request_id=request_id)
    iterations = usage.get("iterations")
    if not isinstance(iterations, list):
        return
    own_type = message.get("type") if isinstance(message.get("type"), str) else "message"
    for index, entry in enumerate(iterations):
        kind = entry.get("type") if isinstance(entry, dict) else None
        # An entry of the response's own type is a part of the top-level usage; another
        # type (an advisor's sub-inference) is another model's tokens, counted on its own.
        if not isinstance(kind, str) or kind == own_type:
            continue
        entry_id = f"{call_id}:{kind}-{index}"  # entries are appended: an index stays
        if call_id in parsed.continued_calls:
            parsed.continued_calls.add(entry_id)
        entry_model = entry.get("model")
        entry_model = entry_model if isinstance(entry_model, str) else None
        _usage_row(parsed, entry_id, entry, line_no, run, agent, ts, entry_model, response)


def _usage_row(
    parsed: ParsedTranscript,
    call_id: str,
    usage: dict[str, Any],
    line_no: int,
    run: str,
    agent: str,
    ts: str,
    model: str | None,
    message_id: str | None,
) -> None:
    """The llm_call `call_id` from this usage, or a larger output count for it."""
    output = count_of(usage, "output_tokens")
    known = parsed.llm_rows.get(call_id)
    if known is not None:
        if (output or 0) > (parsed.rows.get(known, "output_tokens") or 0):
            parsed.rows.set(known, output_tokens=output)
        return
    split = usage.get("cache_creation")
    split = split if isinstance(split, dict) else {}
    row = parsed.llm_rows[call_id] = parsed.rows.add(
        run=run,
        agent=agent,
        ts=ts,
        event=EventKind.LLM_CALL,
        id=call_id,
        parent=MAIN_AGENT if agent != MAIN_AGENT else None,
        role="main" if agent == MAIN_AGENT else None,
        model=model,
        input_tokens=count_of(usage, "input_tokens"),
        cached_input_tokens=count_of(usage, "cache_read_input_tokens"),
        cache_write_tokens=count_of(usage, "cache_creation_input_tokens"),
        cache_write_5m_tokens=count_of(split, "ephemeral_5m_input_tokens"),
        cache_write_1h_tokens=count_of(split, "ephemeral_1h_input_tokens"),
        output_tokens=output,
        source_line=line_no,
    )
    if message_id is not None:
        parsed.rows.set(row, message_id=message_id)
    speed = usage.get("speed")
    if isinstance(speed, str) and speed:
        parsed.rows.set(row, speed=speed)
