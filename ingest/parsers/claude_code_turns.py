"""The turns of a Claude Code transcript line, and what names its session (for replay;
the events of the same lines are claude_code.py's).

- `user` lines: a prompt per string content or text block; a tool_result block is the
  result of its call (`tool_use_id`, `is_error`, its text; an image says so).
- `assistant` lines (one per content block as Claude Code streams): `text` -> response,
  `thinking` -> thinking (its text when the transcript kept it; redacted thinking is a
  turn without content), `tool_use` -> tool_call (the tool, the input as compact JSON);
  an API error Claude Code wrote in place of a response is an error response.
- A subagent's lines (isSidechain) are turns of `agent-<agentId>`, as their events are.
- Labels: the main agent's `cwd`, `gitBranch` (any of its lines), its first line's time
  and its first real prompt (not a command or
  reminder Claude Code wrapped in `<...>`, not a meta or compaction-summary line).

Pure; a line without a session id or a valid timestamp gives no turns (its events
decide whether it is quarantined), never an exception.
"""

from __future__ import annotations

from typing import Any

import orjson

from ingest.parsers.claude_code_subagents import MAIN_AGENT, agent_name
from ingest.parsers.event_rows import Reject, check_name, read_timestamp
from ingest.parsers.session_turns import SessionRows, TurnKind


def _agent(doc: dict[str, Any]) -> str:
    agent_id = doc.get("agentId")
    if doc.get("isSidechain") is True:
        return agent_name(agent_id) if isinstance(agent_id, str) and agent_id else "sidechain"
    return MAIN_AGENT


def content_text(content: Any) -> str:
    """A tool result's or prompt's content as text: a string, or its blocks' texts joined
    (an image block as `[image]`)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def add_turns(rows: SessionRows, doc: dict[str, Any], line_no: int, kind: str, source: str) -> None:
    """The turns (and label facts) of one `user` or `assistant` line."""
    message = doc.get("message")
    session = doc.get("sessionId")
    if not isinstance(message, dict) or not isinstance(session, str):
        return
    try:
        run = check_name(session, "sessionId")
        ts, ts_ms = read_timestamp(doc)
        agent = _agent(doc)
    except Reject:
        return
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    at: dict[str, Any] = {
        "run": run,
        "agent": agent,
        "ts": ts,
        "source": source,
        "line_no": line_no,
    }
    prompt = None
    if kind == "user":
        prompt = _user(rows, at, blocks)
    elif doc.get("isApiErrorMessage") is True:
        rows.turn(**at, seq=0, kind=TurnKind.RESPONSE, text=content_text(content), is_error=True)
    else:
        _assistant(rows, at, blocks)
    if agent == MAIN_AGENT:
        real = prompt is not None and not _wrapped(doc, prompt)
        rows.label(
            run,
            source,
            ts,
            ts_ms,
            cwd=_text(doc.get("cwd")),
            branch=_text(doc.get("gitBranch")),
            prompt=prompt if real else None,
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _wrapped(doc: dict[str, Any], prompt: str) -> bool:
    """A prompt Claude Code wrote itself: a slash command, a reminder, a summary."""
    return (
        doc.get("isMeta") is True
        or doc.get("isCompactSummary") is True
        or prompt.lstrip().startswith("<")
    )


def _user(rows: SessionRows, at: dict[str, Any], blocks: list[Any]) -> str | None:
    """Add the line's prompts and results; returns its first prompt's text, if any."""
    first: str | None = None
    for seq, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            use_id = block.get("tool_use_id")
            rows.turn(
                **at,
                seq=seq,
                kind=TurnKind.TOOL_RESULT,
                text=content_text(block.get("content")),
                tool_use_id=use_id if isinstance(use_id, str) else None,
                is_error=block.get("is_error") is True,
            )
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            rows.turn(**at, seq=seq, kind=TurnKind.PROMPT, text=block["text"])
            first = block["text"] if first is None else first
        elif block.get("type") == "image":
            rows.turn(**at, seq=seq, kind=TurnKind.PROMPT, text="[image]")
    return first


def _assistant(rows: SessionRows, at: dict[str, Any], blocks: list[Any]) -> None:
    for seq, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            rows.turn(**at, seq=seq, kind=TurnKind.RESPONSE, text=block["text"])
        elif kind in ("thinking", "redacted_thinking"):
            thought = block.get("thinking")
            text = thought if isinstance(thought, str) and thought else None
            rows.turn(**at, seq=seq, kind=TurnKind.THINKING, text=text)
        elif kind == "tool_use":
            name, use_id = block.get("name"), block.get("id")
            rows.turn(
                **at,
                seq=seq,
                kind=TurnKind.TOOL_CALL,
                text=orjson.dumps(block.get("input")).decode(),
                tool=name if isinstance(name, str) else None,
                tool_use_id=use_id if isinstance(use_id, str) else None,
            )
