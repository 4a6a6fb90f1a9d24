"""Codex ingest end to end: the real rollouts, a forked rollout replaying its parent,
a rollout read while it grows (run and model carried in the saved state)."""

import io
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.core.management import CommandError, call_command

import warehouse
from ingest.pipelines.codex import run_codex
from tests.conftest import FIXTURE_ROOT

pytestmark = pytest.mark.usefixtures("lake")

FIXTURES = FIXTURE_ROOT / "agent-logs"


def line(kind: str, payload: dict[str, Any], second: int = 0) -> bytes:
    ts = f"2026-06-05T05:00:{second:02d}Z"
    return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload}) + b"\n"


def count(total: tuple[int, int, int], last: tuple[int, int, int], second: int) -> bytes:
    def usage(figures: tuple[int, int, int]) -> dict[str, int]:
        inp, cached, out = figures
        return {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": 0,
        }

    info = {"total_token_usage": usage(total), "last_token_usage": usage(last)}
    return line("event_msg", {"type": "token_count", "info": info}, second)


def totals() -> dict[str, tuple[int, int, int, int]]:
    rows = warehouse.fetch_all(
        "SELECT run, count(*) AS n, sum(input_tokens) AS i, sum(cached_input_tokens) AS c,"
        " sum(output_tokens) AS o FROM events WHERE event = 'llm_call' GROUP BY run"
    )
    return {r["run"]: (int(r["n"]), int(r["i"]), int(r["c"]), int(r["o"])) for r in rows}


def test_the_real_rollouts() -> None:
    summary = run_codex(
        [str(FIXTURES / "codex-rollout-0.135.jsonl"), str(FIXTURES / "codex-rollout-0.77.jsonl")]
    )
    assert (summary.accepted, summary.quarantined) == (3, 0)
    assert totals() == {"019e9625-802f-7e91-840a-cfe88d14117a": (1, 1675, 20864, 10)}
    row = warehouse.fetch_one("SELECT model FROM events WHERE event = 'llm_call'")
    assert row == {"model": "gpt-5.5"}
    runs = warehouse.fetch_all("SELECT run FROM events WHERE event = 'spawn' ORDER BY run")
    assert [r["run"] for r in runs] == [
        "019b64e5-57fa-7463-b644-fba7e456f905",
        "019e9625-802f-7e91-840a-cfe88d14117a",
    ]


def parent_rollout() -> bytes:
    return (
        line("session_meta", {"id": "parent", "cwd": "/w"})
        + line("turn_context", {"model": "gpt-5.5"})
        + count((1000, 800, 10), (1000, 800, 10), 1)
        + count((2200, 1800, 30), (1200, 1000, 20), 2)
    )


def test_a_forked_rollout_does_not_count_its_parents_calls_again(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions" / "2026" / "06" / "05"
    sessions.mkdir(parents=True)
    (sessions / "rollout-2026-06-05T05-00-00-parent.jsonl").write_bytes(parent_rollout())
    child = (
        line("session_meta", {"id": "child", "forked_from_id": "parent"}, 10)
        # the parent's history, replayed (Codex re-stamps it with the fork's time)
        + parent_rollout().replace(b"05:00:0", b"05:00:1")
        + line("turn_context", {"model": "gpt-5.5"}, 11)
        + count((3700, 3000, 45), (1500, 1200, 15), 12)
    )
    (sessions / "rollout-2026-06-05T05-00-10-child.jsonl").write_bytes(child)
    run_codex([str(tmp_path / "sessions")])
    # Independently: the parent made two calls (1000/800/10 and 1200/1000/20), the child
    # one of its own (1500/1200/15).
    assert totals() == {"parent": (2, 400, 1800, 30), "child": (1, 300, 1200, 15)}


def test_a_growing_rollout_keeps_its_run_and_model(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    whole = parent_rollout()
    cut = whole.index(b'{"timestamp":"2026-06-05T05:00:02Z"') + 40
    rollout.write_bytes(whole[:cut])
    first = run_codex([str(rollout)])
    assert first.pending_bytes == 40
    assert totals() == {"parent": (1, 200, 800, 10)}
    rollout.write_bytes(whole)
    run_codex([str(rollout)])
    assert totals() == {"parent": (2, 400, 1800, 30)}
    models = warehouse.fetch_all("SELECT DISTINCT model FROM events WHERE event = 'llm_call'")
    assert models == [{"model": "gpt-5.5"}]


def test_a_result_read_in_a_later_pass_updates_its_call(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    call = {
        "type": "function_call",
        "name": "shell",
        "call_id": "c1",
        "arguments": '{"command":["git","commit","-m","x"]}',
    }
    rollout.write_bytes(line("session_meta", {"id": "r"}) + line("response_item", call, 1))
    run_codex([str(rollout)])
    with open(rollout, "ab") as handle:
        output = "Exit code: 0\nOutput:\n[main 1234abc] x\n 2 files changed, 5 insertions(+), 1 deletion(-)"
        handle.write(
            line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": output},
                4,
            )
        )
    run_codex([str(rollout)])
    row = warehouse.fetch_one("SELECT ok, duration_ms FROM events WHERE event = 'tool_call'")
    assert row == {"ok": True, "duration_ms": 3000.0}
    commit = warehouse.fetch_one(
        "SELECT run, commit_sha, commit_files, commit_insertions, commit_deletions FROM events"
        " WHERE event = 'commit'"
    )
    assert commit == {
        "run": "r",
        "commit_sha": "1234abc",
        "commit_files": 2,
        "commit_insertions": 5,
        "commit_deletions": 1,
    }


def test_a_folder_without_rollouts_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"^not a Codex log folder"):
        call_command("ingest", "codex", str(tmp_path), stdout=io.StringIO())


def test_a_folder_of_claude_code_transcripts_is_not_a_codex_folder(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "claude-code-commit-and-tool-error.jsonl", tmp_path)
    with pytest.raises(CommandError, match=r"^not a Codex log folder \(no Codex lines"):
        call_command("ingest", "codex", str(tmp_path), stdout=io.StringIO())
