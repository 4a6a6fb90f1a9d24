"""Claude Code ingest end to end on the real fixture session: tokens per model after
deduplication, tool calls and errors, the commit and the subagent tree, however the
files are read (together, out of order, in pieces while being written, resumed copies).

The expected figures were computed independently from the fixture files with the json
module: one usage per (message.id, requestId) keeping the largest output_tokens, tool_use
blocks counted by name, tool_result blocks with is_error true.
"""

import io
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from django.core.management import CommandError, call_command

import warehouse
from analytics.runs import queries as runs
from ingest.pipelines import claude_code
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.loading import IngestSummary
from tests.conftest import FIXTURE_ROOT

pytestmark = pytest.mark.usefixtures("lake")

FIXTURES = FIXTURE_ROOT / "agent-logs"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
START = FIXTURES / "claude-code-session-start-and-subagent-call.jsonl"
COMMIT = FIXTURES / "claude-code-commit-and-tool-error.jsonl"
SUBAGENT = FIXTURES / "claude-code-subagent-agent-aac57f5.jsonl"

# model: (calls, input, cache reads, cache writes, 5-minute writes, 1-hour writes, output)
TOKENS_BY_MODEL = {
    "claude-haiku-4-5-20251001": (7, 11, 384921, 41517, 41517, 0, 608),
    "claude-opus-4-6": (5, 7, 128728, 14617, 14617, 0, 639),
    # The subagent's transcript says 3 + 3 + 1 output tokens; its last response really
    # had 938 (the Task result's usage for that same response), so 3 + 3 + 938.
    "claude-sonnet-4-5-20250929": (3, 2408, 29274, 18814, 18814, 0, 944),
}
TOOLS = {"Bash": 11, "Read": 6, "WebFetch": 6, "WebSearch": 6, "Skill": 1, "Task": 1}


def tokens_by_model() -> dict[str, tuple[int, ...]]:
    rows = warehouse.fetch_all(
        "SELECT model, count(*) AS calls, sum(input_tokens) AS i, sum(cached_input_tokens) AS c,"
        " sum(cache_write_tokens) AS w, sum(cache_write_5m_tokens) AS w5,"
        " sum(cache_write_1h_tokens) AS w1, sum(output_tokens) AS o"
        " FROM events WHERE event = 'llm_call' GROUP BY model"
    )
    return {r.pop("model"): tuple(int(v) for v in r.values()) for r in rows}


def tools() -> dict[str, int]:
    rows = warehouse.fetch_all(
        "SELECT tool, count(*) AS n FROM events WHERE event = 'tool_call' GROUP BY tool"
    )
    return {r["tool"]: int(r["n"]) for r in rows}


def tool_outcomes() -> tuple[int, int]:
    row = warehouse.fetch_one(
        "SELECT count(*) FILTER (WHERE ok = false) AS failed, count(ok) AS answered"
        " FROM events WHERE event = 'tool_call'"
    )
    assert row is not None
    return int(row["failed"]), int(row["answered"])


def assert_the_whole_session() -> None:
    assert tokens_by_model() == TOKENS_BY_MODEL
    assert tools() == TOOLS
    # 31 calls, 29 answered in these excerpts, 1 failed (the pre-commit hook).
    assert tool_outcomes() == (1, 29)
    commits = warehouse.fetch_all(
        "SELECT agent, commit_sha, commit_files, commit_insertions, commit_deletions,"
        " commit_message FROM events WHERE event = 'commit'"
    )
    assert commits == [
        {
            "agent": "main",
            "commit_sha": "12e2d10",
            "commit_files": 8,
            "commit_insertions": 118,
            "commit_deletions": 1,
            "commit_message": "feat: add OTEL dependencies, bootstrap, and safe runtime defaults",
        }
    ]
    tree = {(a.agent, a.parent, a.role) for a in runs.agents(SESSION)}
    assert tree == {("main", None, "main"), ("agent-aac57f5", "main", "general-purpose")}


def test_the_fixture_session_matches_the_independent_figures() -> None:
    summary = run_claude_code([str(START), str(COMMIT), str(SUBAGENT)])
    assert (summary.accepted, summary.quarantined, summary.duplicates) == (49, 0, 0)
    assert_the_whole_session()
    assert [r.run for r in runs.list_runs()] == [SESSION]


def test_reading_again_adds_nothing() -> None:
    run_claude_code([str(START), str(COMMIT), str(SUBAGENT)])
    again = run_claude_code([str(START), str(COMMIT), str(SUBAGENT)])
    assert (again.accepted, again.bytes) == (0, 0)
    assert_the_whole_session()


def test_the_subagent_file_read_before_its_parent_gives_the_same_figures() -> None:
    run_claude_code([str(SUBAGENT)])
    run_claude_code([str(COMMIT)])
    run_claude_code([str(START)])
    assert_the_whole_session()


def test_tiny_batches_settle_results_and_outputs_across_transactions() -> None:
    run_claude_code([str(START), str(COMMIT), str(SUBAGENT)], batch_bytes=20_000)
    assert_the_whole_session()


def test_batches_are_written_on_one_duckdb_thread_and_the_setting_comes_back(
    settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse.close()
    settings.FLEETSCOPE_DUCKDB_THREADS = 2  # type: ignore[attr-defined]
    threads_seen = []
    load_as_usual = claude_code.load_parsed

    def load_parsed(cur: duckdb.DuckDBPyConnection, *args: Any) -> IngestSummary:
        row = cur.execute("SELECT current_setting('threads')").fetchone()
        threads_seen.append(row[0] if row else None)
        return load_as_usual(cur, *args)

    monkeypatch.setattr(claude_code, "load_parsed", load_parsed)
    try:
        run_claude_code([str(START), str(COMMIT), str(SUBAGENT)], batch_bytes=100_000)
        assert threads_seen == [1, 1]
        row = warehouse.fetch_one("SELECT current_setting('threads') AS n")
        assert row == {"n": 2}
        assert_the_whole_session()
    finally:
        warehouse.close()


def test_a_live_session_is_picked_up_as_it_is_written(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-user-spotter"
    (project / SESSION / "subagents").mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    side = project / SESSION / "subagents" / "agent-aac57f5.jsonl"
    whole_main = START.read_bytes() + COMMIT.read_bytes()
    whole_side = SUBAGENT.read_bytes()
    cuts = [0, 20_000, 61_111, 99_999, 150_000, len(whole_main)]
    side_cuts = [0, 7_000, 20_001, 33_333, 40_000, len(whole_side)]
    pending = []
    pieces = zip(pairwise(cuts), pairwise(side_cuts), strict=True)
    for (a, b), (c, d) in pieces:
        with open(main, "ab") as handle:
            handle.write(whole_main[a:b])
        with open(side, "ab") as handle:
            handle.write(whole_side[c:d])
        pending.append(run_claude_code([str(tmp_path / "projects")]).pending_bytes)
    assert pending[-1] == 0 and any(p > 0 for p in pending[:-1])
    assert_the_whole_session()


def test_a_resumed_session_copying_its_parent_adds_nothing_twice(tmp_path: Path) -> None:
    run_claude_code([str(START), str(COMMIT), str(SUBAGENT)])
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_bytes(
        START.read_bytes().replace(SESSION.encode(), b"11111111-2222-3333-4444-555555555555")
    )
    summary = run_claude_code([str(resumed)])
    assert summary.accepted == 0
    assert tokens_by_model() == TOKENS_BY_MODEL


def test_bad_and_unfinished_lines(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    lines = START.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:50]) + b"garbage\n" + lines[50][:300])
    summary = run_claude_code([str(log)])
    assert (summary.quarantined, summary.pending_bytes) == (1, 300)
    row = warehouse.fetch_one("SELECT line_no, reason FROM quarantine")
    assert row == {"line_no": 51, "reason": "not valid JSON"}


def test_a_folder_without_transcripts_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(CommandError, match=r"^not a Claude Code log folder \(no \*\.jsonl files\)"):
        call_command("ingest", "claude-code", str(tmp_path), stdout=io.StringIO())
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("ingest", "claude-code", str(tmp_path / "nope"), stdout=io.StringIO())


def test_the_command_prints_its_summary(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for path in (START, COMMIT, SUBAGENT):
        shutil.copy(path, folder)
    out = io.StringIO()
    call_command("ingest", "claude-code", str(folder), stdout=out, stderr=io.StringIO())
    assert out.getvalue().startswith('{"accepted":49,"quarantined":0,"duplicates":0,')


def test_files_in_another_format_are_named_and_a_folder_of_them_refused(tmp_path: Path) -> None:
    mixed = run_claude_code([str(FIXTURES)])
    assert mixed.accepted == 49
    assert mixed.errors == [
        f"not a Claude Code log: {FIXTURES / 'codex-rollout-0.135.jsonl'}",
        f"not a Claude Code log: {FIXTURES / 'codex-rollout-0.77.jsonl'}",
    ]
    codex_only = tmp_path / "sessions"
    codex_only.mkdir()
    shutil.copy(FIXTURES / "codex-rollout-0.135.jsonl", codex_only)
    with pytest.raises(CommandError, match=r"^not a Claude Code log folder \(no Claude Code lines"):
        call_command("ingest", "claude-code", str(codex_only), stdout=io.StringIO())


def response_line(
    message_id: str,
    ts: str,
    output: int,
    *,
    usage_extra: dict[str, object] | None = None,
    **extra: object,
) -> bytes:
    """One line of a Claude Code response (10 input, 1,000 cache-read tokens) in session s1."""
    usage: dict[str, object] = {
        "input_tokens": 10,
        "cache_read_input_tokens": 1_000,
        "output_tokens": output,
        **(usage_extra or {}),
    }
    doc = {
        "type": "assistant",
        "sessionId": "s1",
        "timestamp": ts,
        "message": {
            "id": message_id,
            "type": "message",
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        },
        **extra,
    }
    return orjson.dumps(doc) + b"\n"


def llm_calls() -> list[tuple[Any, ...]]:
    rows = warehouse.fetch_all(
        "SELECT id, agent, input_tokens, cached_input_tokens, output_tokens FROM events"
        " WHERE event = 'llm_call' ORDER BY ts, id"
    )
    return [tuple(r.values()) for r in rows]


def test_behind_a_gateway_each_response_counts_once_and_reading_again_changes_nothing(
    tmp_path: Path,
) -> None:
    # A relay gives every response the id msg_gw and no requestId; the first response is
    # two lines (written as it streamed), the second arrives after the first read.
    log = tmp_path / "s1.jsonl"
    log.write_bytes(
        response_line("msg_gw", "2026-02-12T14:12:01.177Z", 5)
        + response_line("msg_gw", "2026-02-12T14:12:01.177Z", 40)
    )
    run_claude_code([str(log)])
    with open(log, "ab") as handle:
        handle.write(response_line("msg_gw", "2026-02-12T14:12:09.001Z", 7))
    run_claude_code([str(log)])
    again = run_claude_code([str(log)])
    assert again.accepted == 0
    # Two calls of 10 input and 1,000 cache-read tokens each; outputs 40 (not 5) and 7.
    assert llm_calls() == [
        ("msg_gw:s1@2026-02-12T14:12:01.177Z", "main", 10, 1_000, 40),
        ("msg_gw:s1@2026-02-12T14:12:09.001Z", "main", 10, 1_000, 7),
    ]
    [run] = runs.list_runs()
    assert (run.input_tokens, run.output_tokens) == (20, 47)


def test_an_advisor_iteration_read_again_with_more_output_raises_its_stored_count(
    tmp_path: Path,
) -> None:
    def advised(advisor_output: int) -> bytes:
        advisor = {
            "type": "advisor_message",
            "model": "claude-opus-4-7",
            "input_tokens": 5_000,
            "output_tokens": advisor_output,
        }
        own = {"type": "message", "input_tokens": 10, "output_tokens": 9}
        return response_line(
            "msg_1",
            "2026-02-12T14:12:01.177Z",
            9,
            usage_extra={"iterations": [own, advisor]},
            requestId="req_1",
        )

    # The response streams: its first line is read alone, the second (the advisor done,
    # 600 output tokens against 100) by the next pass.
    log = tmp_path / "s1.jsonl"
    log.write_bytes(advised(100))
    run_claude_code([str(log)])
    with open(log, "ab") as handle:
        handle.write(advised(600))
    run_claude_code([str(log)])
    assert llm_calls() == [
        ("msg_1:req_1", "main", 10, 1_000, 9),
        ("msg_1:req_1:advisor_message-1", "main", 5_000, None, 600),
    ]
    [run] = runs.list_runs()
    assert (run.input_tokens, run.output_tokens) == (5_010, 609)


def write_session_with_a_side_question(project: Path, *, side_answers: bool = True) -> list[Path]:
    """Session s1: the main agent's responses msg_a and msg_b, and a /btw side question's
    sidechain file replaying msg_a under a new requestId (with the parent's context
    re-read: 50,000 cache-read tokens) and, when `side_answers`, answering in msg_c."""
    main = project / "s1.jsonl"
    side = project / "s1" / "subagents" / "agent-aside1.jsonl"
    side.parent.mkdir(parents=True)
    main.write_bytes(
        response_line("msg_a", "2026-02-12T14:00:00.000Z", 40, requestId="req_a1")
        + response_line("msg_b", "2026-02-12T14:01:00.000Z", 7, requestId="req_b1")
    )
    replay = response_line(
        "msg_a",
        "2026-02-12T14:05:00.000Z",
        40,
        usage_extra={"cache_read_input_tokens": 50_000},
        requestId="req_a2",
        isSidechain=True,
        agentId="aside1",
    )
    answer = response_line(
        "msg_c",
        "2026-02-12T14:05:30.000Z",
        30,
        requestId="req_c1",
        isSidechain=True,
        agentId="aside1",
    )
    side.write_bytes(replay + (answer if side_answers else b""))
    return [main, side]


@pytest.mark.parametrize(
    "order", ["together", "parent first", "side question first", "a line per batch"]
)
def test_a_side_question_replaying_its_parents_response_counts_it_once(
    tmp_path: Path, order: str
) -> None:
    main, side = write_session_with_a_side_question(tmp_path / "project")
    if order == "together":
        run_claude_code([str(main), str(side)])
    elif order == "a line per batch":
        run_claude_code([str(side), str(main)], batch_bytes=1)
    else:
        for path in [main, side] if order == "parent first" else [side, main]:
            run_claude_code([str(path)])
    again = run_claude_code([str(main), str(side)])
    assert again.accepted == 0
    # msg_a once, the main agent's (1,000 cache reads, not the replay's 50,000); the side
    # question's own answer msg_c counts.
    assert llm_calls() == [
        ("msg_a:req_a1", "main", 10, 1_000, 40),
        ("msg_b:req_b1", "main", 10, 1_000, 7),
        ("msg_c:req_c1", "agent-aside1", 10, 1_000, 30),
    ]
    [run] = runs.list_runs()
    # 3 calls of 10 input tokens; 40 + 7 + 30 output; ends at the answer, 14:05:30.
    assert {k: getattr(run, k) for k in ("agents", "events", "input_tokens", "output_tokens")} == {
        "agents": 2,
        "events": 3,
        "input_tokens": 30,
        "output_tokens": 77,
    }
    assert run.last_ts.isoformat() == "2026-02-12T14:05:30+00:00"


def test_a_replay_read_before_its_parent_leaves_nothing_of_it_in_the_run_totals(
    tmp_path: Path,
) -> None:
    main, side = write_session_with_a_side_question(tmp_path / "project", side_answers=False)
    run_claude_code([str(side)])
    [alone] = runs.list_runs()
    assert (alone.agents, alone.input_tokens) == (1, 10)  # counted until its parent
    run_claude_code([str(main)])
    assert [c[0] for c in llm_calls()] == ["msg_a:req_a1", "msg_b:req_b1"]
    [run] = runs.list_runs()
    # The main agent's two calls only: 20 input and 40 + 7 output tokens, from 14:00 to
    # 14:01 (the replay at 14:05 is gone, and its agent with it).
    assert {k: getattr(run, k) for k in ("agents", "events", "input_tokens", "output_tokens")} == {
        "agents": 1,
        "events": 2,
        "input_tokens": 20,
        "output_tokens": 47,
    }
    assert run.last_ts.isoformat() == "2026-02-12T14:01:00+00:00"


def test_a_parent_stored_before_message_ids_were_kept_still_answers_its_replay(
    tmp_path: Path,
) -> None:
    main, side = write_session_with_a_side_question(tmp_path / "project")
    run_claude_code([str(main)])

    def as_stored_before(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute("UPDATE events SET message_id = NULL")
        cur.execute("DELETE FROM schema_versions WHERE version = 302")

    warehouse.write(as_stored_before)
    assert warehouse.migrate() == [302]  # message_id read back from `<message.id>:<requestId>`
    run_claude_code([str(side)])
    assert [c[0] for c in llm_calls()] == ["msg_a:req_a1", "msg_b:req_b1", "msg_c:req_c1"]
