"""Tool calls and their results in agent transcripts (Claude Code, Codex): pairing a result
with its call, and commits read from `git commit` output.

Pure: no files, no warehouse queries. A result usually arrives a few lines after its
call, but a chunk boundary or a live session can put them in different reads; the pipeline
then looks the call up among stored events and hands it here as a ToolUse without a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson

from ingest.parsers.event_rows import EventRows
from warehouse.schema.events import EventKind

# `git commit`, also as `git -C dir commit`, `git -c k=v commit`, `git --no-pager commit`.
GIT_COMMIT_COMMAND = re.compile(r"\bgit(?:\s+(?:-[Cc]\s+\S+|--[\w-]+(?:=\S+)?))*\s+commit(?![\w-])")
# What `git commit` prints first: "[branch sha] subject" ("[main (root-commit) 1a2b3c4] x",
# "[detached HEAD 1a2b3c4] x").
COMMIT_HEADER = re.compile(
    r"^\[(?P<branch>[^\]\n]+?) (?P<sha>[0-9a-f]{7,40})\] (?P<subject>[^\n]*)"
)
COMMIT_HEADER_ANYWHERE = re.compile(COMMIT_HEADER.pattern, re.MULTILINE)  # at any line start
# At most 18 digits: a count stays below 10^18 (lib.bounds.COUNT_LIMIT); a longer number
# is not git's, and the commit is kept without its figures.
COMMIT_STATS = re.compile(
    r"(?<!\d)(\d{1,18}) files? changed(?:, (\d{1,18}) insertions?\(\+\))?"
    r"(?:, (\d{1,18}) deletions?\(-\))?"
)
RESULT_TEXT_LIMIT = 2048  # enough of a result to read a commit header and its stats line


@dataclass(frozen=True)
class CommitHeader:
    sha: str
    subject: str
    branch: str
    files: int | None
    insertions: int | None
    deletions: int | None


def read_commit_header(text: str, *, anywhere: bool = False) -> CommitHeader | None:
    """The commit `git commit` reported at the start of `text` (Claude Code's Bash result)
    or on any line (Codex wraps output in "Exit code: 0 ... Output:")."""
    head = text[:RESULT_TEXT_LIMIT]
    match = (COMMIT_HEADER_ANYWHERE.search if anywhere else COMMIT_HEADER.match)(head)
    if match is None:
        return None
    stats = COMMIT_STATS.search(head, match.end())
    return CommitHeader(
        sha=match["sha"],
        subject=match["subject"],
        branch=match["branch"].removesuffix(" (root-commit)"),
        files=int(stats[1]) if stats else None,
        insertions=int(stats[2] or 0) if stats else None,
        deletions=int(stats[3] or 0) if stats else None,
    )


@dataclass
class ToolUse:
    """A tool call: from this chunk (`row` is its index in the chunk's rows) or stored."""

    id: str
    run: str
    agent: str
    ts_ms: float
    tool: str
    git_commit: bool = False
    row: int | None = None


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    ts: str
    ts_ms: float
    ok: bool
    line_no: int
    commit: CommitHeader | None = None
    source: str | None = None  # the file, when a batch spans several


@dataclass
class Resolution:
    stored_outcomes: list[tuple[str, bool, float | None]] = field(default_factory=list)
    commits: EventRows = field(default_factory=EventRows)
    unmatched: int = 0


def resolve_results(
    rows: EventRows, results: list[ToolResult], uses: dict[str, ToolUse]
) -> Resolution:
    """Set ok and duration on the calls in `rows`, list the outcomes of stored calls, and
    make a commit event for each successful `git commit` call. Setting the same values
    again is harmless, so a retried transaction may call this twice."""
    resolution = Resolution()
    for result in results:
        use = uses.get(result.tool_use_id)
        if use is None:
            resolution.unmatched += 1  # its call is in a part of the log never read
            continue
        duration = max(result.ts_ms - use.ts_ms, 0.0)
        if use.row is not None:
            rows.set(use.row, ok=result.ok, duration_ms=duration)
        else:
            resolution.stored_outcomes.append((use.id, result.ok, duration))
        if result.ok and use.git_commit and result.commit is not None:
            header = result.commit
            resolution.commits.add(
                run=use.run,
                agent=use.agent,
                ts=result.ts,
                event=EventKind.COMMIT,
                id=f"{use.id}:commit",
                commit_sha=header.sha,
                commit_files=header.files,
                commit_insertions=header.insertions,
                commit_deletions=header.deletions,
                commit_message=header.subject,
                attrs=orjson.dumps({"branch": header.branch}).decode(),
                source_line=result.line_no,
                source=result.source,
            )
    return resolution
