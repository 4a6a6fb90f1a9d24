"""`git log --numstat --summary` output (ingest/sources/git.py's format) -> commits.

Pure: bytes in, Commit values out; no git, no warehouse. A commit is a task claim when
every file it touches is added or removed under the claims folder (agents that coordinate
through the repository lock a task by adding `current_tasks/<task>.txt` and release it by
removing the file): such commits are coordination, not work.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

SOURCE_KIND = "git"
DEFAULT_CLAIMS_FOLDER = "current_tasks/"
_HEADER_FIELDS = 9


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: int
    author_time: datetime
    committer_time: datetime
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    subject: str
    files: int
    insertions: int
    deletions: int
    claim: bool

    @property
    def author(self) -> str:
        return f"{self.author_name} <{self.author_email}>"

    @property
    def committer(self) -> str:
        return f"{self.committer_name} <{self.committer_email}>"


HISTORY_CSV_COLUMNS = ("committer_time", "author_time", "files", "insertions", "deletions")


def parse_history_csv(text: str) -> list[Commit]:
    """A derived history (ingest/demo_data/NOTICE.md): Unix times and numstat figures
    only, one commit a row; the commits have no sha, name or subject."""
    lines = text.splitlines()
    if not lines or tuple(lines[0].split(",")) != HISTORY_CSV_COLUMNS:
        raise GitLogError(
            f"a derived history starts with the header {','.join(HISTORY_CSV_COLUMNS)}"
        )
    commits = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            committed, authored, files, insertions, deletions = (int(v) for v in line.split(","))
        except ValueError as exc:
            raise GitLogError(f"line {number} of the derived history: {line[:80]!r}") from exc
        commits.append(
            Commit(
                sha="",
                parents=1,
                author_time=datetime.fromtimestamp(authored, UTC),
                committer_time=datetime.fromtimestamp(committed, UTC),
                author_name="",
                author_email="",
                committer_name="",
                committer_email="",
                subject="",
                files=files,
                insertions=insertions,
                deletions=deletions,
                claim=False,
            )
        )
    return commits


class GitLogError(ValueError):
    """Output that is not in the expected format (a git too old or too new)."""


def normalize_claims_folder(folder: str) -> str:
    """`current_tasks`, `./current_tasks/` -> `current_tasks/` (empty: claims not marked)."""
    cleaned = folder.strip().removeprefix("./").strip("/")
    return f"{cleaned}/" if cleaned else ""


def parse_log(data: bytes, claims_folder: str = DEFAULT_CLAIMS_FOLDER) -> list[Commit]:
    """Every commit record in `data` (whole records, as read_log yields them)."""
    folder = normalize_claims_folder(claims_folder)
    commits = []
    for record in data.decode("utf-8", errors="replace").split("\x1e"):
        if record.strip():
            commits.append(_parse_record(record, folder))
    return commits


def _parse_record(record: str, folder: str) -> Commit:
    header, _, body = record.partition("\n")
    fields = header.split("\x1f")
    if len(fields) != _HEADER_FIELDS:
        raise GitLogError(f"unexpected git log header: {header[:200]!r}")
    sha, parents, author_ts, committer_ts, an, ae, cn, ce, subject = fields
    files = insertions = deletions = 0
    paths: list[str] = []
    added_or_removed: set[str] = set()
    for line in body.splitlines():
        if not line:
            continue
        if line.startswith(" "):
            # --summary: " create mode 100644 path", " delete mode 100644 path"
            words = line.split(" ", 4)
            if len(words) == 5 and words[1] in ("create", "delete") and words[2] == "mode":
                added_or_removed.add(words[4])
            continue
        added, removed, path = line.split("\t", 2)
        files += 1
        paths.append(path)
        # Binary files show "-" for both counts.
        insertions += int(added) if added != "-" else 0
        deletions += int(removed) if removed != "-" else 0
    claim = bool(folder) and bool(paths)
    if claim:
        claim = all(p.startswith(folder) and p in added_or_removed for p in paths)
    return Commit(
        sha=sha,
        parents=len(parents.split()),
        author_time=datetime.fromtimestamp(int(author_ts), UTC),
        committer_time=datetime.fromtimestamp(int(committer_ts), UTC),
        author_name=an,
        author_email=ae,
        committer_name=cn,
        committer_email=ce,
        subject=subject,
        files=files,
        insertions=insertions,
        deletions=deletions,
        claim=claim,
    )
