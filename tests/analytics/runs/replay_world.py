"""A small Claude Code session written by hand for the replay tests: a prompt, a
response, two tool calls (one failing) with their results, a subagent with its own
prompt, call and result, and thinking without text. Each line's facts are spelled here,
so the tests count what they expect from these lists, not from the code under test."""

from pathlib import Path
from typing import Any

import orjson

SESSION = "5e55-replay-0001"
CWD = "/home/dev/src/shop"
BRANCH = "feature/cart"
PROMPT = "Fix the <script>alert(1)</script> cart total please"


def _line(kind: str, ts: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(model="claude-sonnet-4-5-20250929", id=f"msg-{ts}")
    return {
        "type": kind,
        "sessionId": SESSION,
        "timestamp": ts,
        "cwd": CWD,
        "gitBranch": BRANCH,
        "uuid": f"u-{ts}",
        "message": message,
        **extra,
    }


def _use(use_id: str, name: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": {"command": command}}


def _result(use_id: str, text: str, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": text, "is_error": error}


MAIN_LINES = [
    _line("user", "2026-03-01T10:00:00.000Z", PROMPT),
    _line("assistant", "2026-03-01T10:00:01.000Z", [{"type": "thinking", "thinking": ""}]),
    _line("assistant", "2026-03-01T10:00:02.000Z", [{"type": "text", "text": "Looking."}]),
    _line("assistant", "2026-03-01T10:00:03.000Z", [_use("t1", "Bash", "pytest -q")]),
    _line("user", "2026-03-01T10:00:04.000Z", [_result("t1", "1 failed", error=True)]),
    _line("assistant", "2026-03-01T10:00:05.000Z", [_use("t2", "Read", "cart.py")]),
    _line(
        "user", "2026-03-01T10:00:06.000Z", [_result("t2", "\n".join(f"l{i}" for i in range(40)))]
    ),
    _line("assistant", "2026-03-01T10:00:09.000Z", [{"type": "text", "text": "Fixed."}]),
]
SUB = {"isSidechain": True, "agentId": "b0b"}
SUB_LINES = [
    _line("user", "2026-03-01T10:00:07.000Z", "Explore the tests", **SUB),
    _line("assistant", "2026-03-01T10:00:07.500Z", [_use("s1", "Grep", "total")], **SUB),
    _line("user", "2026-03-01T10:00:08.000Z", [_result("s1", "cart.py:3")], **SUB),
]
# Top-level turns of a replay (results ride with their calls), oldest first:
# prompt, thinking, response, call t1, call t2, sub prompt, sub call s1, response.
TOP_LEVEL = 8
TURNS = 11  # and the three results


def write_session(folder: Path) -> tuple[Path, Path]:
    main = folder / f"{SESSION}.jsonl"
    sub = folder / SESSION / "subagents" / "agent-b0b.jsonl"
    sub.parent.mkdir(parents=True)
    main.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in MAIN_LINES))
    sub.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in SUB_LINES))
    return main, sub
