"""Rebuild a git repository from commit timestamps with `git fast-import` (one process),
so a fleet's published history can be replayed through `ingest git`: the demo, the
benchmark and the tests use it. Each commit changes one work file, or, for task claims,
adds or removes a file under the claims folder; author and committer times are kept.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PlannedCommit:
    author_epoch: int
    committer_epoch: int
    subject: str = "work"
    claim_add: tuple[str, ...] = ()  # files to add under the claims folder
    claim_remove: tuple[str, ...] = ()
    work: bool = True  # also change the work file


class RebuildError(RuntimeError):
    pass


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def fast_import_stream(commits: Iterable[PlannedCommit], branch: str = "main") -> bytes:
    parts: list[bytes] = []
    for mark, commit in enumerate(commits, start=1):
        parts.append(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark))
        parts.append(b"author Agent <agent@fleet.invalid> %d +0000\n" % commit.author_epoch)
        parts.append(b"committer Agent <agent@fleet.invalid> %d +0000\n" % commit.committer_epoch)
        parts.append(_data(commit.subject))
        if mark > 1:
            parts.append(b"from :%d\n" % (mark - 1))
        if commit.work or not (commit.claim_add or commit.claim_remove):
            parts.append(b"M 100644 inline work.txt\n" + _data(f"change {mark}"))
        for path in commit.claim_add:
            parts.append(b"M 100644 inline %s\n" % path.encode() + _data(f"claimed at {mark}"))
        for path in commit.claim_remove:
            parts.append(b"D %s\n" % path.encode())
        parts.append(b"\n")
    return b"".join(parts)


def rebuild(repo: Path, commits: Iterable[PlannedCommit], branch: str = "main") -> None:
    """Create `repo` (a new folder) holding `commits` in order on `branch`."""
    repo.mkdir(parents=True, exist_ok=False)
    git = ["git", "-C", str(repo)]
    steps: list[tuple[list[str], bytes | None]] = [
        ([*git, "init", "--quiet", f"--initial-branch={branch}"], None),
        ([*git, "fast-import", "--quiet"], fast_import_stream(commits, branch)),
        ([*git, "reset", "--quiet", "--hard", branch], None),
    ]
    for command, stdin in steps:
        done = subprocess.run(command, input=stdin, capture_output=True, check=False)  # noqa: S603
        if done.returncode != 0:
            raise RebuildError(f"{' '.join(command[3:5])} failed: {done.stderr.decode()[:300]}")
