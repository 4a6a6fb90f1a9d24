"""Claude Code transcript lines -> events: one call per response, usage only from top-level
assistant lines, tool calls and results, subagent links, skipped and rejected lines."""

import json
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsers import claude_code as parser
from ingest.parsers.claude_code_subagents import SubagentCall
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
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def parse(*docs: object, raw: bytes = b"") -> parser.ParsedTranscript:
    data = b"".join(orjson.dumps(d) + b"\n" for d in docs) + raw
    return parser.parse_chunk(data, source="s.jsonl")


def assistant(
    block: dict[str, object],
    output: int,
    *,
    message_id: str = "msg_1",
    usage_extra: dict[str, object] | None = None,
    **extra: object,
) -> dict[str, object]:
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 2000,
        "cache_creation": {"ephemeral_5m_input_tokens": 60, "ephemeral_1h_input_tokens": 40},
        "output_tokens": output,
        **(usage_extra or {}),
    }
    return {
        "type": "assistant",
        "sessionId": "s1",
        "timestamp": "2026-02-12T14:12:01.177Z",
        "requestId": "req_1",
        "message": {
            "id": message_id,
            "type": "message",
            "model": "claude-opus-4-6",
            "content": [block],
            "usage": usage,
        },
        **extra,
    }


def test_a_response_split_into_blocks_is_one_call_with_its_largest_output() -> None:
    parsed = parse(
        assistant({"type": "thinking", "thinking": ""}, 9),
        assistant({"type": "text", "text": "hi"}, 9),
        assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}, 209),
    )
    calls = [r for r in parsed.rows.rows if r["event"] == "llm_call"]
    assert calls == [
        {
            "run": "s1",
            "agent": "main",
            "ts": "2026-02-12T14:12:01.177Z",
            "event": "llm_call",
            "id": "msg_1:req_1",
            "parent": None,
            "role": "main",
            "model": "claude-opus-4-6",
            "input_tokens": 3,
            "cached_input_tokens": 2000,
            "cache_write_tokens": 100,
            "cache_write_5m_tokens": 60,
            "cache_write_1h_tokens": 40,
            "output_tokens": 209,
            "source_line": 1,
            "message_id": "msg_1",
            "request_id": "req_1",  # the call's identity, shared with its OTLP api_request
            "source": "s.jsonl",
        }
    ]
    assert [r["tool"] for r in parsed.rows.rows if r["event"] == "tool_call"] == ["Read"]


def test_behind_a_gateway_without_request_ids_each_response_is_still_one_call() -> None:
    # Every response is msg_gw with no requestId; the first is written as two lines.
    def line(ts: str, output: int, session: str = "s1") -> dict[str, object]:
        doc = assistant({"type": "text", "text": "x"}, output, message_id="msg_gw")
        del doc["requestId"]
        return {**doc, "timestamp": ts, "sessionId": session}

    parsed = parse(
        line("2026-02-12T14:12:01.177Z", 5),
        line("2026-02-12T14:12:01.177Z", 50),
        line("2026-02-12T14:12:09.001Z", 7),
        line("2026-02-12T14:12:20.500Z", 9),
        line("2026-02-12T14:12:20.500Z", 11, session="s2"),  # another session, same time
    )
    calls = [(r["id"], r["output_tokens"]) for r in parsed.rows.rows if r["event"] == "llm_call"]
    assert calls == [
        ("msg_gw:s1@2026-02-12T14:12:01.177Z", 50),  # the larger of 5 and 50
        ("msg_gw:s1@2026-02-12T14:12:09.001Z", 7),
        ("msg_gw:s1@2026-02-12T14:12:20.500Z", 9),
        ("msg_gw:s2@2026-02-12T14:12:20.500Z", 11),
    ]


def test_an_advisor_iteration_is_a_call_of_its_own_model_and_own_type_ones_are_not() -> None:
    def line(advisor_output: int) -> dict[str, object]:
        iterations = [
            {"type": "message", "input_tokens": 3, "output_tokens": 20},
            {
                "type": "advisor_message",
                "model": "claude-opus-4-7",
                "input_tokens": 5_000,
                "cache_read_input_tokens": 700,
                "cache_creation_input_tokens": 0,
                "output_tokens": advisor_output,
            },
            {"type": "message", "input_tokens": 0, "output_tokens": 189},
        ]
        return assistant({"type": "text", "text": "x"}, 209, usage_extra={"iterations": iterations})

    # The response streamed as two lines; the advisor's output grew from 100 to 600.
    parsed = parse(line(100), line(600))
    calls = [
        (r["id"], r["model"], r["input_tokens"], r["cached_input_tokens"], r["output_tokens"])
        for r in parsed.rows.rows
    ]
    assert calls == [
        # The top-level usage: its own type's entries (3 + 0 input, 20 + 189 output) are in it.
        ("msg_1:req_1", "claude-opus-4-6", 3, 2000, 209),
        ("msg_1:req_1:advisor_message-1", "claude-opus-4-7", 5_000, 700, 600),
    ]


def test_the_speed_a_response_was_served_at_is_kept() -> None:
    parsed = parse(
        assistant({"type": "text", "text": "x"}, 5, usage_extra={"speed": "fast"}),
        assistant({"type": "text", "text": "y"}, 5, message_id="msg_2", requestId="req_2"),
    )
    assert [(r["id"], r.get("speed")) for r in parsed.rows.rows] == [
        ("msg_1:req_1", "fast"),
        ("msg_2:req_2", None),
    ]


def test_a_subagent_line_belongs_to_its_agent_under_main() -> None:
    parsed = parse(assistant({"type": "text", "text": "x"}, 5, isSidechain=True, agentId="ab12"))
    row = parsed.rows.rows[0]
    assert (row["agent"], row["parent"], row["role"]) == ("agent-ab12", "main", None)


def test_usage_is_never_read_from_progress_copies() -> None:
    parsed = parser.parse_chunk(
        (FIXTURES / "claude-code-session-start-and-subagent-call.jsonl").read_bytes()
    )
    models = {r["model"] for r in parsed.rows.rows if r["event"] == "llm_call"}
    # The sonnet subagent's messages appear here only inside agent_progress lines.
    assert models == {"claude-opus-4-6", "claude-haiku-4-5-20251001"}
    assert [(link.agent_id, link.tool_use_id) for link in parsed.links] == [
        ("aac57f5", "toolu_01Hf8v1Za7y4af8VUwSR4CXU")
    ]
    assert parsed.subagent_calls["toolu_01Hf8v1Za7y4af8VUwSR4CXU"] == SubagentCall(
        "2026-02-12T14:12:32.519Z", "general-purpose", "Check OTEL hex package versions"
    )
    assert parsed.final_usages == {
        (SESSION, "agent-aac57f5"): {
            "input_tokens": 79,
            "cached_input_tokens": 15436,
            "cache_write_tokens": 3378,
            "output_tokens": 938,
        }
    }
    assert parsed.skipped == {
        "file-history-snapshot": 2,
        "progress (other)": 48,
        "progress (agent_progress)": 25,
        "user (prompt)": 2,
    }


def test_tool_results_carry_errors_and_commit_headers() -> None:
    data = (FIXTURES / "claude-code-commit-and-tool-error.jsonl").read_bytes()
    parsed = parser.parse_chunk(data)
    outcomes = [(r.tool_use_id, r.ok, r.commit.sha if r.commit else None) for r in parsed.results]
    assert outcomes == [
        ("toolu_01GfT3ebi9Y3xXRTxD3B8akb", True, None),
        ("toolu_01LbtdVUWbsLDTFPcZ2ShTTy", False, None),  # the pre-commit hook failed
        ("toolu_01NkwToLn1h4YRkGeyD7SeEE", True, None),
        ("toolu_015VACgb3qeqk98siPDUXv3X", True, "12e2d10"),
        ("toolu_01LZ6xfCWYPj1ybeh9u5PuFt", True, None),
    ]
    commits = {u.id for u in parsed.uses.values() if u.git_commit}
    assert commits == {"toolu_01LbtdVUWbsLDTFPcZ2ShTTy", "toolu_015VACgb3qeqk98siPDUXv3X"}


def test_unknown_types_are_skipped_and_bad_lines_rejected_with_a_reason() -> None:
    parsed = parse(
        {"type": "queue-operation", "operation": "enqueue"},
        {"type": "custom-title", "title": "x"},
        {"type": "assistant", "timestamp": "2026-02-12T14:12:01Z", "message": {"id": "m"}},
        {
            "type": "user",
            "sessionId": "s1",
            "timestamp": "yesterday",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t"}]},
        },
        [1, 2],
        raw=b"{not json\n\n",
    )
    assert parsed.skipped == {"queue-operation": 1, "custom-title": 1}
    assert [(line, reason) for line, _, reason, _ in parsed.rejected["s.jsonl"]] == [
        (3, "assistant line: sessionId missing or not a string"),
        (4, "user line: timestamp is not an RFC 3339 time"),
        (5, "not a JSON object"),
        (6, "not valid JSON"),
    ]
    assert parsed.lines == 7 and len(parsed.rows) == 0


def test_a_compaction_is_a_summary_and_an_api_error_an_error() -> None:
    parsed = parse(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "sessionId": "s1",
            "timestamp": "2026-02-12T15:00:00Z",
            "uuid": "u1",
            "compactMetadata": {"trigger": "auto", "preTokens": 155000},
        },
        {
            "type": "assistant",
            "sessionId": "s1",
            "timestamp": "2026-02-12T15:01:00Z",
            "uuid": "u2",
            "isApiErrorMessage": True,
            "message": {
                "id": "x",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "API Error: 529 overloaded"}],
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        },
    )
    assert [(r["event"], r["id"], r.get("error_message")) for r in parsed.rows.rows] == [
        ("summary", "compact:u1", None),
        ("error", "u2:api-error", "API Error: 529 overloaded"),
    ]


# The parser skips most progress lines by their leading bytes, without decoding them. These
# check that fast path against decoding every line, on every Claude Code fixture, read
# whole, together, and a line per chunk (each chunk continuing a file).
def parse_everything(*files: Path, per_line: bool = False) -> dict[str, object]:
    parsed = parser.ParsedTranscript()
    for path in files:
        data = path.read_bytes()
        if not per_line:
            parser.parse_chunk(data, source=path.name, into=parsed)
            continue
        offset = 0
        for line_no, line in enumerate(data.splitlines(keepends=True), start=1):
            parser.parse_chunk(
                line, source=path.name, first_line_no=line_no, base_offset=offset, into=parsed
            )
            offset += len(line)
    return {
        "rows": parsed.rows.rows,
        "uses": parsed.uses,
        "subagent_calls": parsed.subagent_calls,
        "results": parsed.results,
        "links": parsed.links,
        "final_usages": parsed.final_usages,
        "continued_calls": parsed.continued_calls,
        "recognized": parsed.recognized,
        "rejected": parsed.rejected,
        "skipped_lines": sum(parsed.skipped.values()),  # named by type when decoded
        "lines": parsed.lines,
    }


CLAUDE_FIXTURES = sorted(FIXTURES.glob("claude-code-*.jsonl"))


@pytest.mark.parametrize("per_line", [False, True])
@pytest.mark.parametrize(
    "files",
    [pytest.param([f], id=f.stem) for f in CLAUDE_FIXTURES]
    + [pytest.param(CLAUDE_FIXTURES, id="together")],
)
def test_skipping_lines_by_their_leading_type_changes_nothing_decoding_them_would_find(
    monkeypatch: pytest.MonkeyPatch, files: list[Path], per_line: bool
) -> None:
    fast = parse_everything(*files, per_line=per_line)
    monkeypatch.setattr(parser, "_skip_unparsed", lambda *args: False)
    assert parse_everything(*files, per_line=per_line) == fast
    assert fast["rows"]


def test_lines_are_cut_in_place_with_their_numbers_and_byte_offsets() -> None:
    data = b'\n  \n{"type":"progress","data":{"type":"hook_progress"}}\r\n[1]\n{bad'
    parsed = parser.parse_chunk(data, source="s.jsonl", first_line_no=10, base_offset=100)
    assert parsed.lines == 5
    assert parsed.skipped == {"progress (other)": 1}
    assert parsed.rejected == {
        "s.jsonl": [
            (13, 157, "not a JSON object", "[1]"),
            (14, 161, "not valid JSON", "{bad"),
        ]
    }


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"progress","parentToolUseID":"toolu_1","x":1}',
        b'{"parentToolUseID":"","parentToolUseID":"toolu_2"}',
        b'{"parentToolUseID":"a\\"b","parentToolUseID":"toolu_3"}',
        b'{"parentToolUseID":"toolu_4',
        b'{"parentToolUseID":5}',
        b'{"data":{"parentToolUseID":"inner"},"parentToolUseID":"outer"}',
        b"{}",
    ],
)
def test_the_parent_tool_use_is_read_as_the_pattern_reads_it(line: bytes) -> None:
    match = re.search(rb'"parentToolUseID":"([^"\\]+)"', line)
    expected = match[1] if match else None
    assert parser._parent_tool_use(b"xx" + line + b"yy", 2, len(line) + 2) == expected


# --- bounds at the door (lib/bounds.py) ------------------------------------------------


def reasons_of(parsed: parser.ParsedTranscript) -> list[tuple[int, str]]:
    return [(line, reason) for line, _, reason, _ in parsed.rejected.get("s.jsonl", [])]


def encode(*docs: object) -> bytes:
    """The lines as JSON, with the standard library: it writes integers of any size."""
    return b"".join(json.dumps(d).encode() + b"\n" for d in docs)


def test_a_count_beyond_the_bounds_rejects_its_line_and_the_others_load() -> None:
    good = assistant({"type": "text", "text": "x"}, 5)
    data = encode(
        good,
        assistant({"type": "text", "text": "x"}, 2**63, message_id="msg_2"),
        assistant({"type": "text", "text": "x"}, -1, message_id="msg_3"),
        assistant(
            {"type": "text", "text": "x"},
            1,
            message_id="msg_4",
            usage_extra={"iterations": [{"type": "advisor_message", "input_tokens": 10**18}]},
        ),
        assistant(
            {"type": "text", "text": "x"},
            1,
            message_id="msg_5",
            usage_extra={"cache_creation": {"ephemeral_1h_input_tokens": 2**64 - 1}},
        ),
        assistant({"type": "text", "text": "x"}, 2**70, message_id="msg_6"),  # read as a float
    )
    parsed = parser.parse_chunk(data, source="s.jsonl")
    assert reasons_of(parsed) == [
        (2, "assistant line: usage.output_tokens is 10^18 or more"),
        (3, "assistant line: usage.output_tokens is negative"),
        (4, "assistant line: usage.input_tokens is 10^18 or more"),
        (5, "assistant line: usage.ephemeral_1h_input_tokens is 10^18 or more"),
        (6, "assistant line: usage.output_tokens is not an integer"),
    ]
    table = parsed.rows.table()  # an int64 column holds every count that passed
    assert table.column("id").to_pylist() == ["msg_1:req_1"]
    assert table.column("output_tokens").to_pylist() == [5]


def test_a_subagent_result_reporting_a_count_beyond_the_bounds_is_rejected_whole() -> None:
    result = {
        "type": "user",
        "sessionId": "s1",
        "timestamp": "2026-02-12T14:13:00Z",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_9"}]},
        "toolUseResult": {"agentId": "ab12", "usage": {"output_tokens": 2**63}},
    }
    parsed = parser.parse_chunk(encode(result), source="s.jsonl")
    assert reasons_of(parsed) == [(1, "user line: usage.output_tokens is 10^18 or more")]
    assert parsed.results == [] and parsed.links == [] and len(parsed.rows) == 0


@pytest.mark.parametrize(
    ("timestamp", "reason"),
    [
        ("9999-12-31T23:59:59-05:00", "timestamp is outside 1970-2199"),
        ("9999-01-01T00:00:00Z", "timestamp is outside 1970-2199"),
        ("2026-02-12T14:12:01+25:00", "timestamp has an offset beyond +-24h"),
        ("2026-02-12T14:12:01", "timestamp has no time zone"),
    ],
)
def test_a_time_beyond_the_bounds_rejects_its_line(timestamp: str, reason: str) -> None:
    parsed = parse(
        assistant({"type": "text", "text": "x"}, 5, timestamp=timestamp),
        assistant({"type": "text", "text": "x"}, 7, message_id="msg_2"),
    )
    assert reasons_of(parsed) == [(1, f"assistant line: {reason}")]
    assert [r["output_tokens"] for r in parsed.rows.rows] == [7]


def test_a_lower_case_time_is_read_and_stored_upper_cased() -> None:
    parsed = parse(
        assistant({"type": "text", "text": "x"}, 5, timestamp="2026-02-12t14:12:01.177z")
    )
    assert reasons_of(parsed) == []
    assert [r["ts"] for r in parsed.rows.rows] == ["2026-02-12T14:12:01.177Z"]


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it() -> None:
    data = parser.BOM + encode(assistant({"type": "text", "text": "x"}, 5))
    parsed = parser.parse_chunk(data, source="s.jsonl")
    assert reasons_of(parsed) == []
    assert [(r["id"], r["source_line"]) for r in parsed.rows.rows] == [("msg_1:req_1", 1)]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"sessionId": "s\x1e1"}, "sessionId holds a control character"),
        ({"sessionId": "s" * 201}, "sessionId is longer than 200 characters"),
        ({"isSidechain": True, "agentId": "a" * 195}, "agent is longer than 200 characters"),
        ({"isSidechain": True, "agentId": "a\nb"}, "agent holds a control character"),
    ],
)
def test_a_name_beyond_the_bounds_rejects_its_line(change: dict[str, object], reason: str) -> None:
    parsed = parse(assistant({"type": "text", "text": "x"}, 5) | change)
    assert reasons_of(parsed) == [(1, f"assistant line: {reason}")]
    assert len(parsed.rows) == 0


def test_a_model_or_tool_name_beyond_the_bounds_rejects_its_line_whole() -> None:
    bad_model = assistant({"type": "text", "text": "x"}, 5)
    bad_model["message"]["model"] = "claude\x00"  # type: ignore[index]
    bad_tool = assistant({"type": "tool_use", "id": "toolu_1", "name": "B" * 201, "input": {}}, 5)
    parsed = parse(bad_model, bad_tool)
    assert reasons_of(parsed) == [
        (1, "assistant line: model holds a control character"),
        (2, "assistant line: tool is longer than 200 characters"),
    ]
    assert len(parsed.rows) == 0 and parsed.uses == {}  # not its llm_call either


@st.composite
def transcript_lines(draw: st.DrawFn) -> tuple[dict[str, object], str | None, str]:
    """One assistant line, good or with one field beyond the bounds: (doc, the words its
    reason holds or None, its timestamp as stored)."""
    when = draw(good_times())
    doc = assistant(
        {"type": "tool_use", "id": "toolu", "name": draw(good_names), "input": {}},
        draw(good_counts),
        timestamp=when.text,
        sessionId=draw(good_names),
    )
    doc["message"]["model"] = draw(good_names)  # type: ignore[index]
    flaw = draw(st.sampled_from(["none", "time", "count", "session", "model", "tool"]))
    words: str | None = None
    if flaw == "time":
        doc["timestamp"], words = draw(st.sampled_from(BAD_TIMES))
    elif flaw == "count":
        doc["message"]["usage"]["input_tokens"] = draw(bad_counts)  # type: ignore[index]
        words = "usage.input_tokens is"
    elif flaw in ("session", "model", "tool"):
        name, words = draw(bad_names)
        if flaw == "session":
            doc["sessionId"] = name
        elif flaw == "model":
            doc["message"]["model"] = name  # type: ignore[index]
        else:
            doc["message"]["content"][0]["name"] = name  # type: ignore[index]
    return doc, words, when.text.upper()


@settings(max_examples=SAMPLES, deadline=None)
@given(st.lists(transcript_lines(), min_size=1, max_size=8), st.booleans())
def test_any_mix_of_good_and_bad_lines_loads_the_good_and_rejects_the_bad_with_a_reason(
    lines: list[tuple[dict[str, object], str | None, str]], bom: bool
) -> None:
    for number, (doc, _, _) in enumerate(lines, start=1):
        doc["requestId"] = f"req_{number}"
        doc["message"]["content"][0]["id"] = f"toolu_{number}"  # type: ignore[index]
    data = b"".join(json.dumps(doc, separators=(",", ":")).encode() + b"\n" for doc, _, _ in lines)
    parsed = parser.parse_chunk((parser.BOM if bom else b"") + data, source="s.jsonl")

    rejected = dict(reasons_of(parsed))
    table = parsed.rows.table()  # every value that passed fits its column
    calls = {r["id"]: r for r in table.to_pylist() if r["event"] == "llm_call"}
    tools = {r["id"] for r in table.to_pylist() if r["event"] == "tool_call"}
    for number, (doc, words, ts) in enumerate(lines, start=1):
        if words is None:
            assert number not in rejected
            call = calls[f"msg_1:req_{number}"]
            assert (call["ts"], call["run"]) == (ts, doc["sessionId"])
            assert call["output_tokens"] == doc["message"]["usage"]["output_tokens"]  # type: ignore[index]
            assert f"toolu_{number}" in tools
        else:
            assert words in rejected[number] and rejected[number].startswith("assistant line: ")
            assert f"msg_1:req_{number}" not in calls and f"toolu_{number}" not in tools
