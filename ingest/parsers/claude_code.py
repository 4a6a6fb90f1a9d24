"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl` and
`<session>/subagents/agent-<id>.jsonl`) -> agent events.

Pure: numbered lines in, event rows and the facts that need other lines out (results of
tool calls, subagent links); no files, no warehouse queries. The mapping:

- run: the line's `sessionId` (a subagent's lines carry their parent session's id);
  agent: `main`, or `agent-<agentId>` for a sidechain (subagent) line.
- `llm_call`: one per API response, its usage read only from top-level `assistant`
  lines, never from the copies of a subagent's messages inside the parent's `progress`
  lines (claude_code_usage.py says how a response is keyed and counted).
- `tool_call`: one per `tool_use` block, its result (in a later `user` line) setting `ok`
  and the duration, and a successful `git commit` making a `commit` event too
  (claude_code_tools.py).
- `spawn`: a subagent, linked to the Task/Agent call that started it (by the parent's
  `agent_progress` lines or the call's result), with the subagent type as its role.
- `stop`: a subagent's end (the Task/Agent result), with the usage it reports for its
  final response: Claude Code's own transcript of that response can under-report
  output tokens, and the pipeline corrects it from here.
- `summary`: a `compact_boundary` (the context was summarized); `error`: an API error
  Claude Code reported in place of a response.

Other line types (file-history snapshots, hook progress, queue operations, titles...)
are skipped by rule and counted; a line that is not a JSON object, or a known type
without its session id or a valid timestamp, goes to quarantine. The turns of the same
`user` and `assistant` lines (prompts, responses, tool calls and results, for replay)
and the session's label are claude_code_turns.py's, loaded with these events.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ingest.parsers.claude_code_subagents import (
    MAIN_AGENT,
    SUBAGENT_TOOLS,
    SubagentCall,
    SubagentLink,
    agent_name,
    subagent_outcome,
)
from ingest.parsers.claude_code_tools import add_tool_results, add_tool_use, text_of
from ingest.parsers.claude_code_turns import add_turns
from ingest.parsers.claude_code_usage import add_llm_call, check_usage
from ingest.parsers.event_rows import BOM, EventRows, Reject, check_name, read_timestamp
from ingest.parsers.session_turns import SessionRows
from ingest.parsers.tool_calls import ToolResult, ToolUse
from warehouse.schema.events import EventKind

__all__ = ["SOURCE_KIND", "SUBAGENT_TOOLS", "ParsedTranscript", "parse_chunk"]

SOURCE_KIND = "claude-code"
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's stand-in for a response it made up
RAW_TEXT_LIMIT = 64 * 1024

# A line's top-level "type" is read without parsing the line when no object opens before
# it (Claude Code writes plain fields first): progress lines are half of a transcript's
# bytes, and all but the first agent_progress line of each subagent are not needed. The
# bytes `"type":"` cannot occur inside a JSON string (its quotes would be escaped), so
# the first occurrence before any `{` is the top-level key.
_TYPE_KEY = b'"type":"'
_TYPE_WITHIN = 2048  # bytes: the plain fields before it (paths, ids) fit; if not, parse
_PARENT_TOOL_USE = b'"parentToolUseID":"'
_PARSED_TYPES = frozenset((b"assistant", b"user", b"system"))
# Line types only Claude Code writes: a file with none of them is not a transcript.
CLAUDE_TYPES = frozenset(
    ("assistant", "user", "progress", "system", "summary", "file-history-snapshot")
)
_CLAUDE_TYPES_BYTES = frozenset(kind.encode() for kind in CLAUDE_TYPES)
_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.isspace() counts as blank


@dataclass
class ParsedTranscript:
    """What the lines of a batch (one file or several) gave: rows, and what the pipeline
    settles against other lines or stored events (results, subagent links and usages)."""

    rows: EventRows = field(default_factory=EventRows)
    session: SessionRows = field(default_factory=SessionRows)  # turns and labels (replay)
    uses: dict[str, ToolUse] = field(default_factory=dict)  # this chunk's tool calls
    subagent_calls: dict[str, SubagentCall] = field(default_factory=dict)  # by tool use id
    results: list[ToolResult] = field(default_factory=list)
    links: list[SubagentLink] = field(default_factory=list)
    linked: set[tuple[str, str]] = field(default_factory=set)  # (run, agent id)
    linked_uses: set[str] = field(default_factory=set)  # Task/Agent calls already linked
    final_usages: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    # The first response of each chunk read from the middle of a file: its earlier lines
    # may have been loaded with the chunk before, with a smaller output count.
    continued_calls: set[str] = field(default_factory=set)
    recognized: set[str] = field(default_factory=set)  # files with Claude Code lines
    chunk_open: bool = False  # no response seen yet in a chunk that starts mid-file
    llm_rows: dict[str, int] = field(default_factory=dict)  # call id -> row
    rejected: dict[str, list[tuple[int, int, str, str]]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    lines: int = 0
    source: str | None = None  # the file being parsed


def _session(doc: dict[str, Any]) -> str:
    value = doc.get("sessionId")
    if not isinstance(value, str):
        raise Reject("sessionId missing or not a string")
    return check_name(value, "sessionId")


def _agent(doc: dict[str, Any]) -> str:
    agent_id = doc.get("agentId")
    if doc.get("isSidechain") is True:
        return agent_name(agent_id) if isinstance(agent_id, str) and agent_id else "sidechain"
    return MAIN_AGENT


def parse_chunk(
    data: bytes,
    *,
    source: str | None = None,
    first_line_no: int = 1,
    base_offset: int = 0,
    into: ParsedTranscript | None = None,
) -> ParsedTranscript:
    """Parse whole lines of one file (`source`; `data` ends with a newline), adding to
    `into` when given: a batch of several files is parsed into one ParsedTranscript, so
    calls and results, parents and subagents meet in memory when read together."""
    parsed = into if into is not None else ParsedTranscript()
    parsed.source = source
    parsed.chunk_open = base_offset > 0
    first_row = len(parsed.rows)
    # Lines are found in place and only those that must be decoded are copied out: most
    # progress lines are skipped by their leading type (_skip_unparsed).
    size = len(data)
    line_no = first_line_no - 1
    # A byte order mark before the first line is not part of it.
    next_start = len(BOM) if base_offset == 0 and data.startswith(BOM) else 0
    while next_start < size:
        start = next_start
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        next_start = end + 1
        line_no += 1
        if _blank(data, start, end) or _skip_unparsed(parsed, data, start, end):
            continue
        at = base_offset + start
        line = data[start:end]
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            _reject(parsed, line_no, at, line, "not valid JSON")
            continue
        if not isinstance(doc, dict):
            _reject(parsed, line_no, at, line, "not a JSON object")
            continue
        kind = doc.get("type")
        if kind in CLAUDE_TYPES:
            parsed.recognized.add(source or "")
        try:
            if kind == "assistant":
                _assistant(parsed, doc, line_no)
                add_turns(parsed.session, doc, line_no, kind, source or "")
            elif kind == "user":
                _user(parsed, doc, line_no)
                add_turns(parsed.session, doc, line_no, kind, source or "")
            elif kind == "progress":
                _progress(parsed, doc, line_no)
            elif kind == "system" and doc.get("subtype") == "compact_boundary":
                _compaction(parsed, doc, line_no)
            else:
                parsed.skipped[str(kind)] += 1
        except Reject as exc:
            _reject(parsed, line_no, at, line, f"{kind} line: {exc}")
    parsed.lines += max(line_no - first_line_no + 1, 1)  # b"" is one empty line
    for row in parsed.rows.rows[first_row:]:
        row["source"] = source
    return parsed


def _blank(data: bytes, start: int, end: int) -> bool:
    """data[start:end].isspace() or empty, without copying a line that starts otherwise."""
    return start == end or (data[start] in _SPACE and data[start:end].isspace())


def _skip_unparsed(parsed: ParsedTranscript, data: bytes, start: int, end: int) -> bool:
    """True for the line data[start:end] when it can be skipped by its leading type alone."""
    # A `{` before the first type key means it may be a nested object's: parse the line.
    # Looking for the (one-byte, fast) brace first bounds the search for the key.
    within = min(start + _TYPE_WITHIN, end)
    brace = data.find(b"{", start + 1, within)
    at = data.find(_TYPE_KEY, start, brace if brace >= 0 else within)
    if at < 0:
        return False  # parse it: the rules below decide
    at += len(_TYPE_KEY)
    close = data.find(b'"', at, end)
    kind = data[at : close if close >= 0 else end - 1]
    if kind in _PARSED_TYPES:
        return False
    if kind in _CLAUDE_TYPES_BYTES:
        parsed.recognized.add(parsed.source or "")
    if kind == b"progress":
        if data.find(b'"agent_progress"', start, end) < 0:
            parsed.skipped["progress (other)"] += 1
            return True
        use = _parent_tool_use(data, start, end)
        if use is None or use.decode() not in parsed.linked_uses:
            return False
        parsed.skipped["progress (agent_progress)"] += 1
        return True
    parsed.skipped[kind.decode()] += 1
    return True


def _parent_tool_use(data: bytes, start: int, end: int) -> bytes | None:
    """In the line data[start:end], the first `"parentToolUseID":"<value>"` whose value is
    not empty and holds no backslash (an escape), found with bytes.find: a regex scans
    these long lines slowly."""
    at = data.find(_PARENT_TOOL_USE, start, end)
    while at >= 0:
        value = at + len(_PARENT_TOOL_USE)
        close = data.find(b'"', value, end)
        if close < 0:
            return None
        if close > value and data.find(b"\\", value, close) < 0:
            return data[value:close]
        at = data.find(_PARENT_TOOL_USE, at + 1, end)
    return None


def _reject(parsed: ParsedTranscript, line_no: int, offset: int, line: bytes, reason: str) -> None:
    raw = line[:RAW_TEXT_LIMIT].decode("utf-8", errors="replace").rstrip("\r")
    parsed.rejected.setdefault(parsed.source or "", []).append((line_no, offset, reason, raw))


def _assistant(parsed: ParsedTranscript, doc: dict[str, Any], line_no: int) -> None:
    message = doc.get("message")
    if not isinstance(message, dict):
        raise Reject("message missing or not an object")
    run = _session(doc)
    ts, ts_ms = read_timestamp(doc)
    agent = _agent(doc)
    parent = MAIN_AGENT if agent != MAIN_AGENT else None
    role = "main" if agent == MAIN_AGENT else None
    model = message.get("model") if isinstance(message.get("model"), str) else None
    if model is not None:
        check_name(model, "model")
    if doc.get("isApiErrorMessage") is True:
        parsed.rows.add(
            run=run,
            agent=agent,
            ts=ts,
            event=EventKind.ERROR,
            id=f"{doc.get('uuid') or line_no}:api-error",
            parent=parent,
            role=role,
            error_kind="model",
            error_message=text_of(message.get("content"))[:1000],
            source_line=line_no,
        )
        return
    usage = message.get("usage")
    message_id = message.get("id")
    content = message.get("content")
    uses = [
        block
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    # Every bound is checked before the first row is added: a line loads whole or not.
    for block in uses:
        if isinstance(block.get("name"), str):
            check_name(block["name"], "tool")
    if isinstance(usage, dict) and isinstance(message_id, str) and model != SYNTHETIC_MODEL:
        check_usage(message, usage)
        add_llm_call(parsed, doc, line_no, run, agent, ts, model, message, usage)
    for block in uses:
        add_tool_use(parsed, block, line_no, run, agent, ts, ts_ms, model)


def _user(parsed: ParsedTranscript, doc: dict[str, Any], line_no: int) -> None:
    message = doc.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        parsed.skipped["user (prompt)"] += 1
        return
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not blocks:
        parsed.skipped["user (prompt)"] += 1
        return
    run = _session(doc)
    ts, ts_ms = read_timestamp(doc)
    agent = _agent(doc)
    given = doc.get("toolUseResult")
    outcome: dict[str, Any] | None = None
    if isinstance(given, dict) and isinstance(given.get("agentId"), str) and len(blocks) == 1:
        outcome = given
        agent_name(outcome["agentId"])  # bounds first: a line loads whole or not
        subagent_outcome(outcome)
    add_tool_results(parsed, blocks, line_no, ts, ts_ms)
    if outcome is not None:
        _subagent_end(parsed, doc, line_no, run, agent, ts, blocks[0], outcome)


def _subagent_end(
    parsed: ParsedTranscript,
    doc: dict[str, Any],
    line_no: int,
    run: str,
    parent: str,
    ts: str,
    block: dict[str, Any],
    outcome: dict[str, Any],
) -> None:
    agent_id = outcome["agentId"]
    use_id = block["tool_use_id"]
    parsed.linked_uses.add(use_id)
    if (run, agent_id) not in parsed.linked:
        parsed.linked.add((run, agent_id))
        parsed.links.append(SubagentLink(run, parent, use_id, agent_id, ts, line_no, parsed.source))
    attrs, final = subagent_outcome(outcome)
    if final is not None:
        parsed.final_usages[(run, agent_name(agent_id))] = final
    duration = outcome.get("totalDurationMs")
    parsed.rows.add(
        run=run,
        agent=agent_name(agent_id),
        ts=ts,
        event=EventKind.STOP,
        id=f"stop:{use_id}",
        parent=parent,
        ok=block.get("is_error") is not True,
        duration_ms=float(duration) if isinstance(duration, int | float) else None,
        attrs=orjson.dumps(attrs).decode(),
        source_line=line_no,
    )


def _progress(parsed: ParsedTranscript, doc: dict[str, Any], line_no: int) -> None:
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        parsed.skipped[f"progress ({data.get('type') if isinstance(data, dict) else None})"] += 1
        return
    agent_id = data.get("agentId")
    use_id = doc.get("parentToolUseID")
    parsed.skipped["progress (agent_progress)"] += 1  # its copied usage is never read
    if not isinstance(agent_id, str) or not isinstance(use_id, str):
        return
    run = _session(doc)
    agent_name(agent_id)  # a name in bounds, or the line is rejected
    parsed.linked_uses.add(use_id)
    if (run, agent_id) in parsed.linked:
        return
    ts, _ = read_timestamp(doc)
    parsed.linked.add((run, agent_id))
    parsed.links.append(
        SubagentLink(run, _agent(doc), use_id, agent_id, ts, line_no, parsed.source)
    )


def _compaction(parsed: ParsedTranscript, doc: dict[str, Any], line_no: int) -> None:
    ts, _ = read_timestamp(doc)
    metadata = doc.get("compactMetadata")
    parsed.rows.add(
        run=_session(doc),
        agent=_agent(doc),
        ts=ts,
        event=EventKind.SUMMARY,
        id=f"compact:{doc.get('uuid') or line_no}",
        attrs=orjson.dumps(metadata).decode() if isinstance(metadata, dict) else None,
        source_line=line_no,
    )
