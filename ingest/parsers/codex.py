"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) -> agent events.

Pure: whole lines and the file's state so far in, event rows and the new state out; no
files, no warehouse. The mapping:

- run: the rollout's own `session_meta` id (its first line; a forked rollout replays
  its parent's lines, `session_meta` included, after it); one agent, `main`.
- `spawn`: the session start, with cwd, CLI version and the fork or parent thread.
- `llm_call`: one per `token_count` event, from its per-call `last_token_usage` (never
  the cumulative `total_token_usage`, except as the difference of two totals when an old
  Codex wrote no per-call figure). Codex counts cached tokens inside `input_tokens` and
  reasoning inside `output_tokens`: here `input_tokens` excludes the cached part,
  `cached_input_tokens` holds it, and `reasoning_output_tokens` is the reasoning part of
  `output_tokens` (billed as output, so kept in it). The model is the latest
  `turn_context`'s. Codex repeats a token_count when only rate limits changed: the id is
  a digest of the cumulative and per-call figures, so a repeat is the same event, and so
  is a copy replayed by a forked or child rollout (the pipeline keeps those once across
  all rollouts).
- `tool_call`: `function_call`, `custom_tool_call` and `local_shell_call` items; their
  `*_output` sets `ok` from the exit code Codex reports and the duration, and a
  `git commit` whose output shows `[branch sha] subject` makes a `commit` event.
- `summary`: a compaction; `error`: an error event.

Other line types are skipped by rule and counted; a line that is not a JSON object or
lacks a valid timestamp goes to quarantine. The turns of the same lines (messages, tool
calls and outputs, reasoning summaries, for replay) and the session's label are
codex_turns.py's, loaded with these events.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ingest.parsers.codex_turns import add_line, exit_code
from ingest.parsers.event_rows import (
    BOM,
    EventRows,
    Reject,
    check_count,
    check_name,
    read_timestamp,
)
from ingest.parsers.session_turns import SessionRows
from ingest.parsers.tool_calls import (
    GIT_COMMIT_COMMAND,
    ToolResult,
    ToolUse,
    read_commit_header,
)
from warehouse.schema.events import EventKind

__all__ = ["SOURCE_KIND", "ParsedRollouts", "RolloutState", "exit_code", "parse_chunk"]

SOURCE_KIND = "codex"
AGENT = "main"
RAW_TEXT_LIMIT = 64 * 1024
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
_TOOL_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_TOOL_OUTPUTS = {"function_call_output", "custom_tool_call_output"}


@dataclass
class RolloutState:
    """What a rollout said before the lines being read (saved with the read position)."""

    run: str | None = None
    model: str | None = None
    forked: bool = False  # a fork or child: replays its parent's lines first
    last_total: dict[str, int] | None = None  # cumulative usage at the last token_count

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "model": self.model,
            "forked": self.forked,
            "last_total": self.last_total,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutState:
        return cls(
            run=data.get("run"),
            model=data.get("model"),
            forked=bool(data.get("forked")),
            last_total=data.get("last_total"),
        )


@dataclass
class ParsedRollouts:
    """Rows of one batch (several rollouts). `rows` are kept once across all rollouts
    (ids are global: call ids, session ids, and the token counts of forked rollouts,
    which replay their parent's); `run_counts`, the token counts of rollouts that are
    not forks, once within their run."""

    rows: EventRows = field(default_factory=EventRows)
    session: SessionRows = field(default_factory=SessionRows)  # turns and labels (replay)
    run_counts: EventRows = field(default_factory=EventRows)
    uses: dict[str, ToolUse] = field(default_factory=dict)
    results: list[ToolResult] = field(default_factory=list)
    rejected: dict[str, list[tuple[int, int, str, str]]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    lines: int = 0


def _usage(value: Any, name: str) -> dict[str, int] | None:
    """A usage figure (a count left out or null is 0), None when there is none; Reject
    when a count is not an integer 0 <= n < 10^18 (lib.bounds.count_problem)."""
    if not isinstance(value, dict):
        return None
    counts = {key: value.get(key) for key in _USAGE_KEYS}
    return {
        key: 0 if count is None else check_count(count, f"{name}.{key}")
        for key, count in counts.items()
    }


def parse_chunk(
    data: bytes,
    state: RolloutState,
    *,
    source: str,
    first_line_no: int = 1,
    base_offset: int = 0,
    into: ParsedRollouts | None = None,
) -> ParsedRollouts:
    """Parse whole lines of one rollout, updating `state` in place."""
    parsed = into if into is not None else ParsedRollouts()
    pieces = data.split(b"\n")
    if data.endswith(b"\n"):
        pieces.pop()
    offset = base_offset
    if base_offset == 0 and pieces and pieces[0].startswith(BOM):
        pieces[0] = pieces[0][len(BOM) :]  # a byte order mark is not part of the first line
        offset = len(BOM)
    for line_no, line in enumerate(pieces, start=first_line_no):
        at, offset = offset, offset + len(line) + 1
        parsed.lines += 1
        if not line or line.isspace():
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            _reject(parsed, source, line_no, at, line, "not valid JSON")
            continue
        if not isinstance(doc, dict):
            _reject(parsed, source, line_no, at, line, "not a JSON object")
            continue
        kind = doc.get("type")
        payload = doc.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        try:
            _line(parsed, state, source, line_no, str(kind), payload, doc)
        except Reject as exc:
            _reject(parsed, source, line_no, at, line, f"{kind} line: {exc}")
            continue
        add_line(parsed.session, state.run, source, line_no, str(kind), payload, doc)
    return parsed


def _reject(
    parsed: ParsedRollouts, source: str, line_no: int, offset: int, line: bytes, reason: str
) -> None:
    raw = line[:RAW_TEXT_LIMIT].decode("utf-8", errors="replace").rstrip("\r")
    parsed.rejected.setdefault(source, []).append((line_no, offset, reason, raw))


def _line(
    parsed: ParsedRollouts,
    state: RolloutState,
    source: str,
    line_no: int,
    kind: str,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    inner = payload.get("type")
    if kind == "session_meta":
        _session_meta(parsed, state, source, line_no, payload, doc)
    elif kind == "turn_context":
        if isinstance(payload.get("model"), str):
            state.model = check_name(payload["model"], "payload.model")
    elif state.run is None:
        parsed.skipped["before session_meta"] += 1  # no run to put it in
    elif kind == "event_msg" and inner == "token_count":
        _token_count(parsed, state, source, line_no, payload, doc)
    elif kind == "response_item" and inner in _TOOL_CALLS:
        _tool_call(parsed, state, source, line_no, payload, doc)
    elif kind == "response_item" and inner in _TOOL_OUTPUTS:
        _tool_output(parsed, source, line_no, payload, doc)
    elif kind == "compacted" or (kind == "event_msg" and inner == "context_compacted"):
        ts, _ = read_timestamp(doc)
        parsed.rows.add(
            run=state.run,
            agent=AGENT,
            ts=ts,
            event=EventKind.SUMMARY,
            id=f"compacted:{state.run}:{ts}",
            source_line=line_no,
            source=source,
        )
    elif kind == "event_msg" and inner == "error":
        ts, _ = read_timestamp(doc)
        message = payload.get("message")
        parsed.rows.add(
            run=state.run,
            agent=AGENT,
            ts=ts,
            event=EventKind.ERROR,
            id=f"error:{state.run}:{ts}",
            error_kind="model",
            error_message=message[:1000] if isinstance(message, str) else None,
            source_line=line_no,
            source=source,
        )
    else:
        parsed.skipped[f"{kind}/{inner}" if inner else kind] += 1


def _session_meta(
    parsed: ParsedRollouts,
    state: RolloutState,
    source: str,
    line_no: int,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    if state.run is not None:
        parsed.skipped["session_meta (replayed)"] += 1
        return
    run = payload.get("id")
    if not isinstance(run, str) or not run:
        raise Reject("payload.id missing or not a string")
    check_name(run, "payload.id")
    ts, _ = read_timestamp(doc)
    origin = payload.get("source")
    spawn = origin.get("subagent") if isinstance(origin, dict) else None
    parent_thread = None
    if isinstance(spawn, dict):
        thread_spawn = spawn.get("thread_spawn")
        if isinstance(thread_spawn, dict):
            parent_thread = thread_spawn.get("parent_thread_id")
    forked_from = payload.get("forked_from_id")
    state.run = run
    state.forked = isinstance(forked_from, str) or spawn is not None
    attrs = {
        "cwd": payload.get("cwd"),
        "cli_version": payload.get("cli_version"),
        "originator": payload.get("originator"),
        "forked_from": forked_from if isinstance(forked_from, str) else None,
        "parent_thread": parent_thread if isinstance(parent_thread, str) else None,
    }
    parsed.rows.add(
        run=run,
        agent=AGENT,
        ts=ts,
        event=EventKind.SPAWN,
        id=f"session:{run}",
        role="subagent" if spawn is not None else "main",
        attrs=orjson.dumps({k: v for k, v in attrs.items() if v is not None}).decode(),
        source_line=line_no,
        source=source,
    )


def _token_count(
    parsed: ParsedRollouts,
    state: RolloutState,
    source: str,
    line_no: int,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    info = payload.get("info")
    if not isinstance(info, dict):
        parsed.skipped["token_count (rate limits only)"] += 1
        return
    total = _usage(info.get("total_token_usage"), "total_token_usage")
    last = _usage(info.get("last_token_usage"), "last_token_usage")
    if last is None and total is not None:
        # Old rollouts: the per-call figure is the growth of the cumulative one.
        before = state.last_total or dict.fromkeys(_USAGE_KEYS, 0)
        last = {key: max(total[key] - before.get(key, 0), 0) for key in _USAGE_KEYS}
    if last is None:
        raise Reject("token_count without usable token figures")
    ts, _ = read_timestamp(doc)
    if total is not None:
        state.last_total = total
    digest = hashlib.sha1(orjson.dumps([total, last]), usedforsecurity=False).hexdigest()[:24]
    cached = min(last["cached_input_tokens"], last["input_tokens"])
    target = parsed.rows if state.forked else parsed.run_counts
    target.add(
        run=state.run,
        agent=AGENT,
        ts=ts,
        event=EventKind.LLM_CALL,
        id=f"tc:{digest}",
        model=state.model,
        input_tokens=last["input_tokens"] - cached,
        cached_input_tokens=cached,
        cache_write_tokens=0,
        output_tokens=last["output_tokens"],
        reasoning_output_tokens=min(last["reasoning_output_tokens"], last["output_tokens"]),
        source_line=line_no,
        source=source,
    )


def _tool_call(
    parsed: ParsedRollouts,
    state: RolloutState,
    source: str,
    line_no: int,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    call_id = payload.get("call_id")
    if not isinstance(call_id, str) or call_id in parsed.uses:
        return
    ts, ts_ms = read_timestamp(doc)
    if payload["type"] == "local_shell_call":
        name = "shell"
        action = payload.get("action")
        command = _command_text(action.get("command") if isinstance(action, dict) else None)
    else:
        given = payload.get("name")
        name = check_name(given, "payload.name") if isinstance(given, str) else str(payload["type"])
        command = _command_text(payload.get("arguments", payload.get("input")))
    git_commit = GIT_COMMIT_COMMAND.search(command) is not None
    row = parsed.rows.add(
        run=state.run,
        agent=AGENT,
        ts=ts,
        event=EventKind.TOOL_CALL,
        id=call_id,
        model=state.model,
        tool=name,
        attrs='{"git_commit":true}' if git_commit else None,
        source_line=line_no,
        source=source,
    )
    parsed.uses[call_id] = ToolUse(call_id, state.run or "", AGENT, ts_ms, name, git_commit, row)


def _command_text(value: Any) -> str:
    """A shell command as one string: argv lists joined, `{"command": ...}` or
    `{"cmd": ...}` arguments (JSON text) unpacked; anything else as it is."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    if isinstance(value, dict):
        value = value.get("command", value.get("cmd"))
    if isinstance(value, list):
        return " ".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _tool_output(
    parsed: ParsedRollouts,
    source: str,
    line_no: int,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    call_id = payload.get("call_id")
    if not isinstance(call_id, str):
        return
    ts, ts_ms = read_timestamp(doc)
    output = payload.get("output")
    if isinstance(output, dict):
        output = orjson.dumps(output).decode()
    text = output if isinstance(output, str) else ""
    code = exit_code(text)
    ok = code is None or code == 0
    commit = read_commit_header(text, anywhere=True) if ok else None
    parsed.results.append(ToolResult(call_id, ts, ts_ms, ok, line_no, commit, source))
