"""Codex rollout lines -> events: per-call usage split into uncached, cached and reasoning
parts, the model from turn_context, tool calls with exit codes, repeats and replays."""

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsers import codex as parser
from tests.conftest import FIXTURE_ROOT
from tests.ingest.parsers.bounds_cases import (
    BAD_TIMES,
    SAMPLES,
    bad_counts,
    bad_names,
    good_counts,
    good_names,
    good_times,
)

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


# --- bounds at the door (lib/bounds.py) ------------------------------------------------


def big_line(kind: str, payload: dict[str, Any], ts: str = "2026-06-05T04:58:26.707Z") -> bytes:
    """A line written with the standard library: it writes integers of any size."""
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}).encode() + b"\n"


def reasons_of(parsed: parser.ParsedRollouts) -> list[tuple[int, str]]:
    return [(line_no, reason) for line_no, _, reason, _ in parsed.rejected.get("r.jsonl", [])]


def test_a_count_beyond_the_bounds_rejects_its_line_and_the_others_load() -> None:
    good = usage(1000, 800, 50, 20)
    data = (
        meta()
        + big_line("event_msg", {"type": "token_count", "info": {"last_token_usage": good}})
        + big_line(
            "event_msg",
            {"type": "token_count", "info": {"last_token_usage": {**good, "output_tokens": 2**63}}},
        )
        + big_line(
            "event_msg",
            {"type": "token_count", "info": {"total_token_usage": {"input_tokens": -5}}},
        )
        + big_line(
            "event_msg",
            {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 2**70}}},
        )
    )
    parsed = parse(data)
    assert reasons_of(parsed) == [
        (3, "event_msg line: last_token_usage.output_tokens is 10^18 or more"),
        (4, "event_msg line: total_token_usage.input_tokens is negative"),
        (5, "event_msg line: last_token_usage.input_tokens is not an integer"),  # a float
    ]
    assert calls(parsed) == [(None, 200, 800, 50, 20)]
    parsed.run_counts.table()  # every count that passed fits its int64 column


@pytest.mark.parametrize(
    ("ts", "reason"),
    [
        ("9999-12-31T23:59:59-05:00", "timestamp is outside 1970-2199"),
        ("9999-01-01T00:00:00Z", "timestamp is outside 1970-2199"),
        ("2026-06-05T04:58:26+25:00", "timestamp has an offset beyond +-24h"),
        ("2026-06-05T04:58:26", "timestamp has no time zone"),
    ],
)
def test_a_time_beyond_the_bounds_rejects_its_line(ts: str, reason: str) -> None:
    first = usage(1000, 800, 50, 20)
    data = (
        meta()
        + line("event_msg", {"type": "error", "message": "x"}, ts)
        + token_count(first, first)
    )
    parsed = parse(data)
    assert reasons_of(parsed) == [(2, f"event_msg line: {reason}")]
    assert calls(parsed) == [(None, 200, 800, 50, 20)]


def test_a_lower_case_time_is_read_and_stored_upper_cased() -> None:
    parsed = parse(meta() + line("compacted", {}, "2026-06-05t04:58:26.707z"))
    assert reasons_of(parsed) == []
    assert [r["ts"] for r in parsed.rows.rows] == [
        "2026-06-05T04:58:26.707Z",
        "2026-06-05T04:58:26.707Z",
    ]


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it() -> None:
    state = parser.RolloutState()
    parsed = parse(parser.BOM + meta("r9"), state)
    assert reasons_of(parsed) == [] and state.run == "r9"
    assert [(r["id"], r["source_line"]) for r in parsed.rows.rows] == [("session:r9", 1)]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (meta("r\x1f1"), "session_meta line: payload.id holds a control character"),
        (meta("r" * 201), "session_meta line: payload.id is longer than 200 characters"),
        (
            meta() + line("turn_context", {"model": "gpt\n5"}),
            "turn_context line: payload.model holds a control character",
        ),
        (
            meta() + line("response_item", {"type": "function_call", "call_id": "c", "name": ""}),
            "response_item line: payload.name is empty",
        ),
    ],
)
def test_a_name_beyond_the_bounds_rejects_its_line(data: bytes, reason: str) -> None:
    state = parser.RolloutState()
    parsed = parse(data, state)
    assert [r for _, r in reasons_of(parsed)] == [reason]
    assert state.model is None and parsed.uses == {}


@st.composite
def rollout_lines(draw: st.DrawFn) -> tuple[bytes, str | None, str]:
    """One token_count or tool call line, good or with one field beyond the bounds: (the
    line, the words its reason holds or None, its timestamp as stored)."""
    when = draw(good_times())
    ts = when.text
    counts = {key: draw(good_counts) for key in ("input_tokens", "output_tokens")}
    flaw = draw(st.sampled_from(["none", "time", "count", "tool"]))
    words: str | None = None
    name = draw(good_names)
    if flaw == "time":
        ts, words = draw(st.sampled_from(BAD_TIMES))
    elif flaw == "count":
        counts["output_tokens"] = draw(bad_counts)
        words = "last_token_usage.output_tokens is"
    elif flaw == "tool":
        name, words = draw(bad_names)
        words = f"payload.name {'is' if words != 'control character' else 'holds a'} {words}"
    payload: dict[str, Any]
    if flaw == "tool" or draw(st.booleans()):
        payload = {"type": "function_call", "name": name, "arguments": "{}"}
    else:
        payload = {"type": "token_count", "info": {"last_token_usage": counts}}
    kind = "response_item" if payload["type"] == "function_call" else "event_msg"
    if flaw == "count" and kind == "response_item":
        words = None  # a tool call has no counts
    return big_line(kind, payload, ts), words, when.text.upper()


@settings(max_examples=SAMPLES, deadline=None)
@given(st.lists(rollout_lines(), min_size=1, max_size=8), st.booleans())
def test_any_mix_of_good_and_bad_lines_loads_the_good_and_rejects_the_bad_with_a_reason(
    lines: list[tuple[bytes, str | None, str]], bom: bool
) -> None:
    numbered = [
        data.replace(b'"type": "function_call"', b'"type": "function_call", "call_id": "c%d"' % n)
        for n, (data, _, _) in enumerate(lines, start=2)
    ]
    parsed = parse((parser.BOM if bom else b"") + meta() + b"".join(numbered))

    rejected = dict(reasons_of(parsed))
    events = parsed.rows.table().to_pylist() + parsed.run_counts.table().to_pylist()
    by_line = {r["source_line"]: r for r in events}
    for line_no, (_, words, ts) in enumerate(lines, start=2):
        if words is None:
            assert line_no not in rejected
            assert by_line[line_no]["ts"] == ts
        else:
            assert words in rejected[line_no]
            assert line_no not in by_line
