"""Session turns and labels at ingest: stored with their chunk's events and positions, so
ingesting again changes nothing, a file that grows adds only its new lines' turns, a
copy of a session read from a new file adds nothing, and a failure after the turns were
staged leaves neither turns nor events nor positions."""

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

import warehouse
from ingest.pipelines import session_loading
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from tests.analytics.runs.replay_world import MAIN_LINES, SESSION, SUB_LINES, write_session
from tests.conftest import FIXTURE_ROOT

pytestmark = pytest.mark.usefixtures("lake")
FIXTURES = FIXTURE_ROOT / "agent-logs"
# The hand-written session: 8 main lines give 8 turns, the subagent's 3 lines 3.
MAIN_TURNS, SUB_TURNS = len(MAIN_LINES), len(SUB_LINES)


def counts() -> tuple[int, int, int, int]:
    [row] = warehouse.fetch_all(
        "SELECT (SELECT count(*) FROM session_turns) AS turns,"
        " (SELECT count(*) FROM session_labels) AS labels,"
        " (SELECT count(*) FROM events) AS events,"
        " (SELECT count(*) FROM read_positions) AS positions"
    )
    return row["turns"], row["labels"], row["events"], row["positions"]


def test_ingesting_the_same_files_again_changes_nothing(tmp_path: Path) -> None:
    write_session(tmp_path)
    run_claude_code([str(tmp_path)])
    first = counts()
    assert first[:2] == (MAIN_TURNS + SUB_TURNS, 1)
    run_claude_code([str(tmp_path)])
    assert counts() == first


def test_a_copy_of_the_session_in_a_new_file_adds_no_turn(tmp_path: Path) -> None:
    main, _ = write_session(tmp_path / "a")
    run_claude_code([str(tmp_path / "a")])
    (tmp_path / "b").mkdir()
    shutil.copy(main, tmp_path / "b" / "copy.jsonl")
    run_claude_code([str(tmp_path / "b")])
    turns, labels, _, _ = counts()
    assert turns == MAIN_TURNS + SUB_TURNS
    assert labels == 2  # one per file that names the session; the run's is the earliest


def test_a_growing_file_adds_only_its_new_lines_turns_and_fills_its_label(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    # The first chunk has no prompt yet (a response only): the label has no first prompt.
    path.write_bytes(orjson.dumps(MAIN_LINES[2]) + b"\n")
    run_claude_code([str(tmp_path)])
    assert counts()[0] == 1
    [label] = warehouse.fetch_all("SELECT project, branch, first_prompt FROM session_labels")
    assert label == {"project": "shop", "branch": "feature/cart", "first_prompt": None}
    with path.open("ab") as grown:
        grown.write(orjson.dumps(MAIN_LINES[0]) + b"\n" + orjson.dumps(MAIN_LINES[3]) + b"\n")
    run_claude_code([str(tmp_path)])
    kinds = warehouse.fetch_all("SELECT kind, source_line FROM session_turns ORDER BY source_line")
    assert kinds == [
        {"kind": "response", "source_line": 1},
        {"kind": "prompt", "source_line": 2},
        {"kind": "tool_call", "source_line": 3},
    ]
    [label] = warehouse.fetch_all("SELECT first_prompt, first_ts FROM session_labels")
    assert label["first_prompt"] == "Fix the <script>alert(1)</script> cart total please"
    assert label["first_ts"].isoformat() == "2026-03-01T10:00:00+00:00"  # the prompt's, earlier


def test_a_failure_after_the_turns_are_staged_leaves_nothing(
    tmp_path: Path, monkeypatch: Any
) -> None:
    write_session(tmp_path)
    staged = []

    def fail_on_labels(cur: Any, name: str, *args: Any, **kwargs: Any) -> int:
        if name == "label_batch":
            staged.append(cur.execute("SELECT count(*) FROM session_turns").fetchone()[0])
            raise RuntimeError("the disk is gone")
        return real(cur, name, *args, **kwargs)

    real = session_loading._run
    monkeypatch.setattr(session_loading, "_run", fail_on_labels)
    with pytest.raises(RuntimeError, match="the disk is gone"):
        run_claude_code([str(tmp_path)])
    assert staged and staged[0] > 0  # the turns were in the transaction
    assert counts() == (0, 0, 0, 0)
    monkeypatch.setattr(session_loading, "_run", real)
    run_claude_code([str(tmp_path)])
    assert counts()[:2] == (MAIN_TURNS + SUB_TURNS, 1)


def test_codex_rollouts_are_stored_once_too() -> None:
    paths = [
        str(FIXTURES / "codex-rollout-0.135.jsonl"),
        str(FIXTURES / "codex-rollout-0.77.jsonl"),
    ]
    run_codex(paths)
    first = counts()
    # 0.135: two user messages and one assistant's; 0.77: three user messages (two of
    # them in the same millisecond, both kept).
    assert first[:2] == (6, 2)
    run_codex(paths)
    assert counts() == first
    rows = warehouse.fetch_all("SELECT run, project, first_prompt FROM session_labels ORDER BY run")
    assert [(r["project"], r["first_prompt"]) for r in rows] == [
        ("homelab-migration", "can you analyse the MD files in this directory and determine if"
         " the info we have is clear enough to start planning the migration?"),
        ("workspace", "[REDACTED_PROMPT]"),
    ]  # fmt: skip
