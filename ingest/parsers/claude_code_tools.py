"""Claude Code's tool calls: a `tool_use` block -> a `tool_call` row, and a later `user`
line's `tool_result` blocks -> the results that set its `ok` (`is_error: true` -> false)
and duration, once the pipeline pairs them (ingest/parsers/tool_calls.py, with a call of
this chunk or a stored one). A successful Bash `git commit` whose result starts
`[branch sha] subject` also makes a `commit` event; a Task/Agent call is kept as the start
of a subagent (claude_code_subagents.py).

Pure: a line's blocks in, rows and results of the transcript's ParsedTranscript
(claude_code.py) added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ingest.parsers.claude_code_subagents import MAIN_AGENT, SUBAGENT_TOOLS, subagent_call
from ingest.parsers.tool_calls import (
    GIT_COMMIT_COMMAND,
    RESULT_TEXT_LIMIT,
    ToolResult,
    ToolUse,
    read_commit_header,
)
from warehouse.schema.events import EventKind

if TYPE_CHECKING:
    from ingest.parsers.claude_code import ParsedTranscript


def add_tool_use(
    parsed: ParsedTranscript,
    block: dict[str, Any],
    line_no: int,
    run: str,
    agent: str,
    ts: str,
    ts_ms: float,
    model: str | None,
) -> None:
    """A `tool_call` row for a `tool_use` block (the first one of each id)."""
    use_id = block.get("id")
    name = block.get("name")
    if not isinstance(use_id, str) or not isinstance(name, str) or use_id in parsed.uses:
        return
    tool_input = block.get("input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    attrs: dict[str, Any] = {}
    git_commit = False
    if name == "Bash":
        command = tool_input.get("command")
        git_commit = isinstance(command, str) and GIT_COMMIT_COMMAND.search(command) is not None
        if git_commit:
            attrs["git_commit"] = True
    elif name in SUBAGENT_TOOLS:
        call = parsed.subagent_calls[use_id] = subagent_call(ts, tool_input)
        attrs["subagent_type"] = call.subagent_type
        attrs["description"] = call.description
    row = parsed.rows.add(
        run=run,
        agent=agent,
        ts=ts,
        event=EventKind.TOOL_CALL,
        id=use_id,
        parent=MAIN_AGENT if agent != MAIN_AGENT else None,
        role="main" if agent == MAIN_AGENT else None,
        model=model,
        tool=name,
        attrs=orjson.dumps(attrs).decode() if attrs else None,
        source_line=line_no,
    )
    parsed.uses[use_id] = ToolUse(use_id, run, agent, ts_ms, name, git_commit, row)


def add_tool_results(
    parsed: ParsedTranscript, blocks: list[dict[str, Any]], line_no: int, ts: str, ts_ms: float
) -> None:
    """The results in a `user` line's `tool_result` blocks, for the pipeline to pair with
    their calls (tool_calls.resolve_results)."""
    for block in blocks:
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str):
            continue
        failed = block.get("is_error") is True
        text = text_of(block.get("content"))
        commit = read_commit_header(text) if not failed and text.startswith("[") else None
        parsed.results.append(
            ToolResult(use_id, ts, ts_ms, not failed, line_no, commit, parsed.source)
        )


def text_of(content: Any) -> str:
    """A content's text: a string, or its text blocks joined (stopping once past
    RESULT_TEXT_LIMIT)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        size = 0
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
                size += len(block["text"])
                if size >= RESULT_TEXT_LIMIT:
                    break
        return "\n".join(parts)
    return ""
