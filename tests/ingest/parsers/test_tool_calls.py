"""Pairing tool results with their calls, and commits read from `git commit` output."""

import pytest

from ingest.parsers.event_rows import EventRows
from ingest.parsers.tool_calls import (
    GIT_COMMIT_COMMAND,
    CommitHeader,
    ToolResult,
    ToolUse,
    read_commit_header,
    resolve_results,
)


@pytest.mark.parametrize(
    ("command", "commits"),
    [
        ('git commit -m "x"', True),
        ("git add -A && git commit -m 'feat: y'", True),
        ("git -C repo commit --amend --no-edit", True),
        ("git -c user.name=bot --no-pager commit -q -m z", True),
        ("git commit-tree HEAD^{tree}", False),
        ("git log --grep commit", False),
        ("echo commit", False),
    ],
)
def test_it_knows_a_git_commit_command(command: str, commits: bool) -> None:
    assert (GIT_COMMIT_COMMAND.search(command) is not None) is commits


def test_it_reads_the_commit_header_and_its_stats() -> None:
    text = (
        "[spotter-4te 12e2d10] feat: add OTEL dependencies\n"
        " 8 files changed, 118 insertions(+), 1 deletion(-)\n create mode 100644 a.ex"
    )
    assert read_commit_header(text) == CommitHeader(
        sha="12e2d10",
        subject="feat: add OTEL dependencies",
        branch="spotter-4te",
        files=8,
        insertions=118,
        deletions=1,
    )


def test_a_root_commit_with_insertions_only() -> None:
    header = read_commit_header(
        "[main (root-commit) 1a2b3c4] init\n 1 file changed, 3 insertions(+)"
    )
    assert header == CommitHeader("1a2b3c4", "init", "main", 1, 3, 0)


def test_codex_output_has_the_header_on_a_later_line() -> None:
    text = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n[main 9f2c1e0] css: parse @layer\n"
    assert read_commit_header(text) is None
    header = read_commit_header(text, anywhere=True)
    assert header is not None and (header.sha, header.files) == ("9f2c1e0", None)
    # Only at the start of a line: a mention inside other output is not a commit.
    assert read_commit_header("Output:\nsee [main 9f2c1e0] css\n", anywhere=True) is None


def test_results_set_ok_and_duration_and_make_commits() -> None:
    rows = EventRows()
    first = rows.add(run="r", agent="main", ts="2026-01-01T00:00:00Z", event="tool_call", id="t1")
    uses = {
        "t1": ToolUse("t1", "r", "main", 1_000.0, "Bash", git_commit=True, row=first),
        "t2": ToolUse("t2", "r", "main", 2_000.0, "Read"),  # stored earlier
    }
    commit = CommitHeader("abc1234", "x", "main", 1, 2, 3)
    results = [
        ToolResult("t1", "2026-01-01T00:00:05Z", 5_500.0, True, 7, commit),
        ToolResult("t2", "2026-01-01T00:00:06Z", 2_250.0, False, 8),
        ToolResult("never-seen", "2026-01-01T00:00:07Z", 9_000.0, True, 9),
    ]
    resolution = resolve_results(rows, results, uses)
    assert (rows.get(first, "ok"), rows.get(first, "duration_ms")) == (True, 4_500.0)
    assert resolution.stored_outcomes == [("t2", False, 250.0)]
    assert resolution.unmatched == 1
    assert resolution.commits.column("commit_sha") == ["abc1234"]
    assert resolution.commits.column("id") == ["t1:commit"]
    assert resolution.commits.column("source_line") == [7]


def test_a_failed_commit_call_makes_no_commit() -> None:
    rows = EventRows()
    uses = {"t1": ToolUse("t1", "r", "main", 0.0, "Bash", git_commit=True)}
    commit = CommitHeader("abc1234", "x", "main", 1, 2, 3)
    resolution = resolve_results(rows, [ToolResult("t1", "x", 1.0, False, 2, commit)], uses)
    assert len(resolution.commits) == 0
