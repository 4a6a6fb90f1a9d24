"""Claude Code transcript lines -> session turns and labels, checked against the real
fixture transcripts: the counts per kind are read from the files here with the json
module (text blocks and string contents of user lines are prompts, tool_result blocks
results; text, thinking and tool_use blocks of assistant lines responses, thinking and
calls), never from the parser."""

import json
from collections import Counter
from pathlib import Path

import orjson

from ingest.parsers import claude_code
from ingest.parsers.session_turns import TEXT_LIMIT, project_of
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"
FILES = (
    "claude-code-session-start-and-subagent-call.jsonl",
    "claude-code-commit-and-tool-error.jsonl",
    "claude-code-subagent-agent-aac57f5.jsonl",
)
BLOCK_KINDS = {
    ("user", "text"): "prompt",
    ("user", "tool_result"): "tool_result",
    ("assistant", "text"): "response",
    ("assistant", "thinking"): "thinking",
    ("assistant", "tool_use"): "tool_call",
}


def expected_kinds(path: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for line in path.read_text().splitlines():
        doc = json.loads(line)
        if doc.get("type") not in ("user", "assistant"):
            continue
        agent = f"agent-{doc['agentId']}" if doc.get("isSidechain") else "main"
        content = doc["message"]["content"]
        if isinstance(content, str):
            counts[(agent, "prompt")] += 1
            continue
        for block in content:
            kind = BLOCK_KINDS.get((doc["type"], block["type"]))
            if kind:
                counts[(agent, kind)] += 1
    return counts


def parsed_turns(path: Path) -> list[tuple]:
    parsed = claude_code.parse_chunk(path.read_bytes(), source=str(path))
    return parsed.session.turns


def test_each_fixture_gives_the_turns_its_lines_hold() -> None:
    for name in FILES:
        path = FIXTURES / name
        turns = parsed_turns(path)
        got = Counter((t[1], t[6]) for t in turns)
        assert got == expected_kinds(path), name
    # The figures by hand for the session's start: one typed prompt and one skill text,
    # 5 texts, 3 thinking, 13 calls, 12 results.
    start = Counter(t[6] for t in parsed_turns(FIXTURES / FILES[0]))
    assert start == Counter(
        {"prompt": 2, "response": 5, "thinking": 3, "tool_call": 13, "tool_result": 12}
    )


def test_results_keep_their_call_id_and_error_flag() -> None:
    path = FIXTURES / FILES[1]
    errors = []
    for line in path.read_text().splitlines():
        doc = json.loads(line)
        content = doc.get("message", {}).get("content")
        if doc["type"] == "user" and isinstance(content, list):
            errors += [b["tool_use_id"] for b in content if b.get("is_error") is True]
    results = [t for t in parsed_turns(path) if t[6] == "tool_result"]
    assert [t[8] for t in results if t[9]] == errors
    assert len(errors) == 1  # the pre-commit failure


def test_a_call_keeps_its_tool_and_input_as_compact_json() -> None:
    path = FIXTURES / FILES[0]
    first_use = next(
        block
        for line in path.read_text().splitlines()
        if json.loads(line)["type"] == "assistant"
        for block in json.loads(line)["message"]["content"]
        if block["type"] == "tool_use"
    )
    call = next(t for t in parsed_turns(path) if t[6] == "tool_call")
    assert (call[7], call[8]) == (first_use["name"], first_use["id"])
    assert call[11] == json.dumps(first_use["input"], separators=(",", ":"), ensure_ascii=False)


def test_the_label_is_the_main_agents_folder_branch_and_typed_prompt() -> None:
    path = FIXTURES / FILES[0]
    first = next(json.loads(x) for x in path.read_text().splitlines() if '"type":"user"' in x)
    parsed = claude_code.parse_chunk(path.read_bytes(), source="s")
    [(key, label)] = parsed.session.labels.items()
    assert key == ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", "s")
    assert (label.cwd, label.branch) == (first["cwd"], first["gitBranch"])
    assert label.first_prompt == first["message"]["content"][:200]
    # A subagent's file names no session: its lines are the subagent's.
    sub = claude_code.parse_chunk((FIXTURES / FILES[2]).read_bytes(), source="sub")
    assert sub.session.labels == {}


def _line(**fields: object) -> bytes:
    doc = {"sessionId": "s-1", "timestamp": "2026-03-01T10:00:00Z", "cwd": "/x/shop/"}
    return orjson.dumps({**doc, **fields}) + b"\n"


def test_commands_and_meta_lines_are_not_the_first_prompt() -> None:
    data = (
        _line(type="user", isMeta=True, message={"role": "user", "content": "Caveat: ..."})
        + _line(type="user", message={"role": "user", "content": "<command-name>/clear</command-name>"})
        + _line(type="user", message={"role": "user", "content": [{"type": "text", "text": "  add   a test "}]})
    )  # fmt: skip
    parsed = claude_code.parse_chunk(data, source="f")
    label = parsed.session.labels[("s-1", "f")]
    assert (label.first_prompt, project_of(label.cwd or "")) == ("add a test", "shop")
    assert [t[6] for t in parsed.session.turns] == ["prompt", "prompt", "prompt"]


def test_long_text_is_cut_and_its_full_length_kept() -> None:
    text = "x" * (TEXT_LIMIT + 10)
    data = _line(type="user", message={"role": "user", "content": text})
    [turn] = claude_code.parse_chunk(data, source="f").session.turns
    assert (len(turn[11]), turn[12], turn[10]) == (TEXT_LIMIT, TEXT_LIMIT + 10, True)


def test_redacted_thinking_is_a_turn_without_content() -> None:
    content = [{"type": "redacted_thinking", "data": "..."}, {"type": "thinking", "thinking": "hm"}]
    data = _line(
        type="assistant",
        uuid="u",
        message={"role": "assistant", "id": "m", "model": "claude-x", "content": content},
    )
    turns = claude_code.parse_chunk(data, source="f").session.turns
    assert [(t[5], t[6], t[10], t[11]) for t in turns] == [
        (0, "thinking", False, None),
        (1, "thinking", True, "hm"),
    ]


def test_a_line_without_a_valid_time_gives_no_turn_and_no_exception() -> None:
    data = _line(type="user", timestamp="yesterday", message={"role": "user", "content": "hi"})
    assert claude_code.parse_chunk(data, source="f").session.turns == []
