"""Codex rollout lines -> session turns and labels, checked against the real fixture
rollouts (user and assistant messages counted here with the json module; developer
messages and the event_msg copies are not turns) and hand-written lines for calls,
outputs and reasoning."""

import json

import orjson

from ingest.parsers import codex
from ingest.parsers.codex import RolloutState
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"


def _turns(data: bytes) -> tuple[list[tuple], dict]:
    parsed = codex.parse_chunk(data, RolloutState(), source="r")
    return parsed.session.turns, parsed.session.labels


def test_the_fixture_rollouts_give_their_messages_as_prompts_and_responses() -> None:
    for name in ("codex-rollout-0.135.jsonl", "codex-rollout-0.77.jsonl"):
        path = FIXTURES / name
        expected = []
        for line in path.read_text().splitlines():
            payload = json.loads(line).get("payload", {})
            if payload.get("type") == "message" and payload.get("role") in ("user", "assistant"):
                kind = "prompt" if payload["role"] == "user" else "response"
                texts = [b["text"] for b in payload["content"]]
                expected.append((kind, "\n".join(texts)))
        turns, _ = _turns(path.read_bytes())
        assert [(t[6], t[11]) for t in turns] == expected, name
    assert len(expected) == 3  # 0.77: AGENTS.md, the environment and the typed prompt


def test_the_label_is_the_sessions_folder_branch_and_typed_prompt() -> None:
    path = FIXTURES / "codex-rollout-0.77.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    typed = next(
        x["payload"]["message"] for x in lines if x["payload"].get("type") == "user_message"
    )
    _, labels = _turns(path.read_bytes())
    [(key, label)] = labels.items()
    assert key == ("019b64e5-57fa-7463-b644-fba7e456f905", "r")
    assert (label.cwd, label.branch, label.first_prompt) == (
        "/Users/macmini/Code/homelab-migration", None, typed
    )  # fmt: skip
    assert label.first_ts == "2025-12-28T12:18:30.533Z"


def _rollout(*payloads: tuple[str, dict]) -> bytes:
    meta = {"id": "r-1", "cwd": "/w/api", "git": {"branch": "main"}}
    lines = [{"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": meta}]
    for n, (kind, payload) in enumerate(payloads, start=1):
        lines.append({"timestamp": f"2026-03-01T10:00:{n:02}Z", "type": kind, "payload": payload})
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def test_calls_outputs_and_reasoning_summaries() -> None:
    data = _rollout(
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]}),
        ("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "..."}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                           "arguments": '{"command":["ls"]}'}),
        ("response_item", {"type": "function_call_output", "call_id": "c1",
                           "output": "Exit code: 2\nno such file"}),
        ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                           "input": "*** Begin Patch"}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done"}),
        ("response_item", {"type": "message", "role": "developer", "content": []}),
    )  # fmt: skip
    turns, labels = _turns(data)
    assert [(t[6], t[7], t[8], t[9], t[10], t[11]) for t in turns] == [
        ("thinking", None, None, None, True, "plan"),
        ("thinking", None, None, None, False, None),
        ("tool_call", "shell", "c1", None, True, '{"command":["ls"]}'),
        ("tool_result", None, "c1", True, True, "Exit code: 2\nno such file"),
        ("tool_call", "apply_patch", "c2", None, True, "*** Begin Patch"),
        ("tool_result", None, "c2", False, True, "Done"),
    ]
    label = labels[("r-1", "r")]
    assert (label.cwd, label.branch) == ("/w/api", "main")


def test_a_forked_rollout_replaying_its_parents_first_line_keeps_its_own_label() -> None:
    data = _rollout(
        ("session_meta", {"id": "parent", "cwd": "/elsewhere", "git": {"branch": "old"}}),
    )
    _, labels = _turns(data)
    assert list(labels) == [("r-1", "r")]
    assert (labels[("r-1", "r")].cwd, labels[("r-1", "r")].first_ts) == (
        "/w/api", "2026-03-01T10:00:00Z"
    )  # fmt: skip
