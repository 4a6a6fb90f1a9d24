"""git history -> `commit` events of one run, incrementally.

Owns the run's read position: the newest commit loaded (`file_key`) and how many commits
were read, committed with each batch. A re-run reads only `<last>..<tip>`; when history
was rewritten (the last commit is no longer an ancestor) it reads everything again and
the shas already stored are skipped. ts is the committer time (when the commit landed:
agents rebase before pushing, so author time can be minutes earlier). A commit outside
the bounds (git_log.py) goes to quarantine, numbered as read, and the rest load; `--run`
is a name within lib.bounds.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import IO

import orjson
import pyarrow as pa

import warehouse
from ingest.parsers import git_log
from ingest.parsers.event_rows import EventRows
from ingest.parsers.git_log import Commit, RejectedCommit
from ingest.pipelines.adapter_loading import Dedup, insert_new
from ingest.pipelines.loading import (
    IngestSummary,
    Position,
    PositionMoved,
    advance_position,
    insert_quarantine,
    read_position,
)
from ingest.sources import git
from lib.bounds import name_problem

SOURCE_KIND = git_log.SOURCE_KIND


def position_source(repo: str, run: str) -> str:
    """A run's position is its own: one repository may feed several runs."""
    return f"{repo}#run={run}"


def commit_rows(commits: list[tuple[int, Commit]], run: str) -> EventRows:
    """The events of `commits`, each with its number in the read (its source_line)."""
    rows = EventRows()
    for number, commit in commits:
        rows.add(
            run=run,
            agent=commit.agent,
            ts=commit.committer_time.isoformat(),
            event="commit",
            id=commit.sha,
            commit_sha=commit.sha,
            commit_files=commit.files,
            commit_insertions=commit.insertions,
            commit_deletions=commit.deletions,
            commit_message=commit.subject,
            author_ts=commit.author_time.isoformat(),
            commit_author=commit.author,
            commit_claim=commit.claim,
            attrs=orjson.dumps({"committer": commit.committer, "parents": commit.parents}).decode(),
            source_line=number,
        )
    return rows


def quarantine_rows(rejected: list[tuple[int, RejectedCommit]]) -> pa.Table:
    """Rejected commits as quarantine rows: the commit's number in the read for its line."""
    return pa.table(
        {
            "line_no": pa.array([number for number, _ in rejected], pa.int64()),
            "byte_offset": pa.nulls(len(rejected), pa.int64()),
            "reason": pa.array([f"commit {c.sha}: {c.reason}" for _, c in rejected], pa.string()),
            "raw_text": pa.array([c.raw for _, c in rejected], pa.string()),
        }
    )


def run_git(
    repo_path: str,
    run: str,
    *,
    claims_folder: str = git_log.DEFAULT_CLAIMS_FOLDER,
    ref: str = "HEAD",
    progress: IO[str] | None = None,
) -> IngestSummary:
    """Load the history of `ref` in `repo_path` as commit events of `run`."""
    problem = name_problem(run, "--run")
    if problem is not None:
        raise ValueError(problem)
    repo = git.open_repository(repo_path)
    summary = IngestSummary(files=1)
    while True:
        try:
            _ingest(repo, run, claims_folder, ref, summary, progress)
            return summary
        except PositionMoved:
            continue  # another process loaded these commits first; go on from there


def _ingest(
    repo: Path,
    run: str,
    claims_folder: str,
    ref: str,
    summary: IngestSummary,
    progress: IO[str] | None,
) -> None:
    source = str(repo)
    position_key = position_source(source, run)
    stored = read_position(SOURCE_KIND, position_key)
    tip = git.resolve(repo, ref)
    if tip is None or (stored is not None and stored.file_key == tip):
        return
    since = None
    read_so_far = 0
    if stored is not None and git.is_ancestor(repo, stored.file_key, tip):
        since, read_so_far = stored.file_key, stored.line_no
    reader = git_log.LogReader(claims_folder)
    pending_bytes = 0
    for block in chain(git.read_log(repo, tip, since), [None]):  # None: the output ended
        if block is None:
            entries = reader.finish()
        else:
            pending_bytes += len(block)
            entries = reader.feed(block)
        if not entries:
            continue
        numbered = list(enumerate(entries, start=read_so_far + 1))
        commits = [(n, e) for n, e in numbered if isinstance(e, Commit)]
        rejected = [(n, e) for n, e in numbered if isinstance(e, RejectedCommit)]
        count = read_so_far + len(entries)
        reached = Position(entries[-1].sha, count, count)
        load = _loader(commit_rows(commits, run), rejected, source, position_key, stored, reached)
        accepted = warehouse.write(load)
        summary.accepted += accepted
        summary.duplicates += len(commits) - accepted
        summary.quarantined += len(rejected)
        summary.bytes += pending_bytes
        pending_bytes = 0
        stored, read_so_far = reached, reached.line_no
        if progress is not None:
            progress.write(f"{source}: {read_so_far} commits read, {summary.accepted} new\n")


def _loader(
    rows: EventRows,
    rejected: list[tuple[int, RejectedCommit]],
    source: str,
    position_key: str,
    expected: Position | None,
    new: Position,
) -> Callable[[warehouse.Cursor], int]:
    table = rows.table()
    quarantined = quarantine_rows(rejected)

    def load(cur: warehouse.Cursor) -> int:
        advance_position(cur, SOURCE_KIND, position_key, expected, new)
        insert_quarantine(cur, SOURCE_KIND, source, quarantined)
        return insert_new(cur, table, source_kind=SOURCE_KIND, source=source, dedup=Dedup.RUN)

    return load


def run_history_csv(path: Path, run: str, *, agent: str = "fleet") -> IngestSummary:
    """Load a derived history (times and numstat only, gzip CSV) as the commits of `run`,
    each under `agent` (the identities were dropped); idempotent: row n is `<run>:n`."""
    for name, what in ((run, "run"), (agent, "agent")):
        problem = name_problem(name, what)
        if problem is not None:
            raise ValueError(problem)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        commits = git_log.parse_history_csv(handle.read())
    rows = EventRows()
    for number, commit in enumerate(commits, start=1):
        rows.add(
            run=run,
            agent=agent,
            ts=commit.committer_time.isoformat(),
            event="commit",
            id=f"{run}:{number}",
            commit_files=commit.files,
            commit_insertions=commit.insertions,
            commit_deletions=commit.deletions,
            author_ts=commit.author_time.isoformat(),
            source_line=number + 1,
        )
    table = rows.table()

    def load(cur: warehouse.Cursor) -> int:
        return insert_new(cur, table, source_kind=SOURCE_KIND, source=str(path), dedup=Dedup.RUN)

    accepted = warehouse.write(load)
    return IngestSummary(
        accepted=accepted, duplicates=len(commits) - accepted, files=1, bytes=path.stat().st_size
    )
