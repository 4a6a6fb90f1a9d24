"""Codex rollout lines -> events: per-call usage split into uncached, cached and reasoning
parts, the model from turn_context, tool calls with exit codes, repeats and replays."""

from typing import Any

import orjson
import pytest

from ingest.parsers import codex as parser
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"


def line(kind: str, payload: dict[str, Any], ts: str = "2026-06-05T04:58:26.707Z") -> bytes:
    return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload}) + b"\n"


def meta(run: str = "r1", **extra: Any) -> bytes:
    return line("session_meta", {"id": run, "cwd": "/w", "cli_version": "0.135.0", **extra})


def usage(inp: int, cached: int, out: int, reasoning: int) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": reasoning,
        "total_tokens": inp + out,
    }


def token_count(total: dict[str, int] | None, last: dict[str, int] | None) -> bytes:
    info: dict[str, Any] = {}
    if total is not None:
        info["total_token_usage"] = total
    if last is not None:
        info["last_token_usage"] = last
    return line("event_msg", {"type": "token_count", "info": info})


def parse(data: bytes, state: parser.RolloutState | None = None) -> parser.ParsedRollouts:
    return parser.parse_chunk(data, state or parser.RolloutState(), source="r.jsonl")


def calls(parsed: parser.ParsedRollouts) -> list[tuple[Any, ...]]:
    return [
        (
            r["model"],
            r["input_tokens"],
            r["cached_input_tokens"],
            r["output_tokens"],
            r["reasoning_output_tokens"],
        )
        for r in parsed.run_counts.rows + parsed.rows.rows
        if r["event"] == "llm_call"
    ]


def test_the_real_rollout_has_one_call_with_cached_input_apart() -> None:
    state = parser.RolloutState()
    parsed = parser.parse_chunk(
        (FIXTURES / "codex-rollout-0.135.jsonl").read_bytes(), state, source="x"
    )
    # last_token_usage: input 22539 of which 20864 cached, output 10 of which 0 reasoning.
    assert calls(parsed) == [("gpt-5.5", 1675, 20864, 10, 0)]
    assert state.as_dict() == {
        "run": "019e9625-802f-7e91-840a-cfe88d14117a",
        "model": "gpt-5.5",
        "forked": False,
        "last_total": {
            "input_tokens": 22539,
            "cached_input_tokens": 20864,
            "output_tokens": 10,
            "reasoning_output_tokens": 0,
        },
    }


def test_an_old_rollout_without_token_counts_has_no_calls() -> None:
    state = parser.RolloutState()
    parsed = parser.parse_chunk(
        (FIXTURES / "codex-rollout-0.77.jsonl").read_bytes(), state, source="x"
    )
    assert calls(parsed) == []
    assert (state.run, state.model) == ("019b64e5-57fa-7463-b644-fba7e456f905", "gpt-5.2-codex")
    assert parsed.skipped == {"response_item/message": 3, "event_msg/user_message": 1}


def test_per_call_usage_never_sums_the_cumulative_totals() -> None:
    first, second = usage(1000, 800, 50, 20), usage(1500, 1200, 70, 30)
    total = usage(2500, 2000, 120, 50)
    data = (
        meta()
        + line("turn_context", {"model": "gpt-5.2-codex"})
        + token_count(first, first)
        + token_count(first, first)  # repeated when only rate limits changed
        + line("turn_context", {"model": "gpt-5.5"})
        + token_count(total, second)
    )
    parsed = parse(data)
    assert calls(parsed) == [
        ("gpt-5.2-codex", 200, 800, 50, 20),
        ("gpt-5.2-codex", 200, 800, 50, 20),
        ("gpt-5.5", 300, 1200, 70, 30),
    ]
    ids = [r["id"] for r in parsed.run_counts.rows]
    assert ids[0] == ids[1] != ids[2]  # the repeat is the same event, stored once


def test_without_a_per_call_figure_the_growth_of_the_total_is_used() -> None:
    data = (
        meta()
        + token_count(usage(1000, 800, 50, 20), None)
        + token_count(usage(2500, 2000, 120, 50), None)
    )
    assert calls(parse(data)) == [(None, 200, 800, 50, 20), (None, 300, 1200, 70, 30)]


def test_a_forked_rollouts_counts_are_kept_once_across_rollouts() -> None:
    parsed = parse(meta("child", forked_from_id="parent") + token_count(usage(5, 0, 1, 0), None))
    assert len(parsed.run_counts) == 0 and len(parsed.rows) == 2
    child = parse(meta("sub", source={"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}))
    spawn = child.rows.rows[0]
    assert (spawn["role"], orjson.loads(spawn["attrs"])["parent_thread"]) == ("subagent", "p")


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ('{"output":"ok","metadata":{"exit_code":0,"duration_seconds":0.1}}', 0),
        ('{"output":"boom","metadata":{"exit_code":2,"duration_seconds":0.1}}', 2),
        ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail", 1),
        ("Chunk ID: f9\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n", 0),
        ("Success. Updated the following files:\nM a.py", None),
    ],
)
def test_it_reads_the_exit_code_codex_reports(output: str, code: int | None) -> None:
    assert parser.exit_code(output) == code


def test_tool_calls_results_and_a_commit() -> None:
    command = orjson.dumps({"command": ["bash", "-lc", "git commit -am 'fix: x'"]}).decode()
    data = (
        meta()
        + line(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": command, "call_id": "c1"},
            "2026-06-05T04:58:30Z",
        )
        + line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "Exit code: 0\nWall time: 0.3 seconds\nOutput:\n[main 9f2c1e0] fix: x\n"
                " 1 file changed, 2 insertions(+)\n",
            },
            "2026-06-05T04:58:31.5Z",
        )
        + line(
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** x", "call_id": "c2"},
        )
        + line(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": "c2", "output": "Exit code: 1\n"},
        )
    )
    parsed = parse(data)
    assert [(u.tool, u.git_commit) for u in parsed.uses.values()] == [
        ("shell", True),
        ("apply_patch", False),
    ]
    assert [(r.tool_use_id, r.ok, r.commit.sha if r.commit else None) for r in parsed.results] == [
        ("c1", True, "9f2c1e0"),
        ("c2", False, None),
    ]


def test_lines_before_the_session_and_bad_lines() -> None:
    data = (
        line("turn_context", {"model": "m"})
        + token_count(usage(1, 0, 1, 0), usage(1, 0, 1, 0))
        + b"[1]\n"
        + orjson.dumps({"type": "session_meta", "payload": {"id": "r"}})
        + b"\n"
    )
    parsed = parse(data)
    assert parsed.skipped == {"before session_meta": 1}
    assert [(n, reason) for n, _, reason, _ in parsed.rejected["r.jsonl"]] == [
        (3, "not a JSON object"),
        (4, "session_meta line: timestamp missing or not a string"),
    ]
