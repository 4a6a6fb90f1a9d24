"""The turns of a Codex rollout line, and what names its session (for replay; the events
of the same lines are codex.py's). Also what a tool output says of its exit status,
which both read.

- `response_item` messages: role `user` -> prompt, `assistant` -> response (their
  input_text / output_text blocks joined); `developer` messages (system instructions)
  are not turns. `event_msg` user_message / agent_message repeat these and are skipped.
- `reasoning` -> thinking: its summary texts when Codex logged them, else a turn without
  content (the reasoning itself is encrypted).
- `function_call`, `custom_tool_call`, `local_shell_call` -> tool_call (its arguments as
  logged); their `*_output` -> tool_result, an error when the exit code is not 0.
- Labels: `session_meta`'s cwd and `git.branch`, the first `user_message` event's text
  (the prompt as typed, without the environment context Codex sends before it).

Pure; a line without a valid timestamp gives no turns, never an exception.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ingest.parsers.event_rows import Reject, read_timestamp
from ingest.parsers.session_turns import SessionRows, TurnKind

AGENT = "main"
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
# How Codex reports a command's exit status in a tool output, across versions.
_EXIT_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)", re.MULTILINE)


def exit_code(output: str) -> int | None:
    """The exit code a tool output reports: JSON `metadata.exit_code` (older Codex) or an
    `Exit code: N` / `Process exited with code N` line (newer)."""
    if output.startswith("{"):
        try:
            doc = orjson.loads(output)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            metadata = doc.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return code if isinstance(code, int) else None
    match = _EXIT_CODE.search(output[:4096])
    return int(match[1]) if match else None


def _blocks_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(parts) if parts else None


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def add_line(
    rows: SessionRows,
    run: str | None,
    source: str,
    line_no: int,
    kind: str,
    payload: dict[str, Any],
    doc: dict[str, Any],
) -> None:
    """The turns and label facts of one rollout line of session `run` (None before its
    session_meta: nothing to add)."""
    if run is None:
        return
    try:
        ts, ts_ms = read_timestamp(doc)
    except Reject:
        return
    inner = payload.get("type")
    at: dict[str, Any] = {
        "run": run,
        "agent": AGENT,
        "ts": ts,
        "source": source,
        "line_no": line_no,
        "seq": 0,
    }
    if kind == "session_meta":
        if payload.get("id") != run:
            return  # a forked rollout replaying its parent's first line
        git = payload.get("git")
        branch = git.get("branch") if isinstance(git, dict) else None
        cwd = payload.get("cwd")
        rows.label(
            run,
            source,
            ts,
            ts_ms,
            cwd=cwd if isinstance(cwd, str) else None,
            branch=branch if isinstance(branch, str) else None,
        )
    elif kind == "event_msg" and inner == "user_message":
        message = payload.get("message")
        rows.label(run, source, ts, ts_ms, prompt=message if isinstance(message, str) else None)
    elif kind != "response_item":
        return
    elif inner == "message" and payload.get("role") in ("user", "assistant"):
        text = _blocks_text(payload.get("content"))
        turn = TurnKind.PROMPT if payload["role"] == "user" else TurnKind.RESPONSE
        rows.turn(**at, kind=turn, text=text)
    elif inner == "reasoning":
        summary = payload.get("summary")
        rows.turn(**at, kind=TurnKind.THINKING, text=_blocks_text(summary) or None)
    elif inner in _CALLS:
        _call(rows, at, payload)
    elif inner in _OUTPUTS:
        call_id = payload.get("call_id")
        output = _as_text(payload.get("output"))
        code = exit_code(output)
        rows.turn(
            **at,
            kind=TurnKind.TOOL_RESULT,
            text=output,
            tool_use_id=call_id if isinstance(call_id, str) else None,
            is_error=code is not None and code != 0,
        )


def _call(rows: SessionRows, at: dict[str, Any], payload: dict[str, Any]) -> None:
    call_id = payload.get("call_id")
    if payload["type"] == "local_shell_call":
        name: str | None = "shell"
        action = payload.get("action")
        text = _as_text(action.get("command") if isinstance(action, dict) else None)
    else:
        given = payload.get("name")
        name = given if isinstance(given, str) else str(payload["type"])
        text = _as_text(payload.get("arguments", payload.get("input")))
    rows.turn(
        **at,
        kind=TurnKind.TOOL_CALL,
        text=text,
        tool=name,
        tool_use_id=call_id if isinstance(call_id, str) else None,
    )
