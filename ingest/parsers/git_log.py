"""`git log -z --raw --numstat` output (ingest/sources/git.py's format) -> commits.

Pure: bytes in, Commit values (or the reason a commit is rejected) out; no git, no
warehouse. The output is read as NUL-terminated fields, which no subject, name or path
can hold: a commit's 9 header fields, then its `--raw` entries (`:modes shas STATUS`, then
the path) and `--numstat` entries (`added<TAB>removed<TAB>path`); the next commit's sha
ends them. A commit is a task claim when every file it touches is added or removed under
the claims folder (agents that coordinate through the repository lock a task by adding
`current_tasks/<task>.txt` and release it by removing the file): such commits are
coordination, not work. A commit outside the bounds every door applies (lib/bounds.py:
times in 1970-2199, an author name of 1-200 characters without control characters,
counts below 10^18) is rejected with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from ingest.parsers.timestamps import EVENT_YEARS, from_unix_seconds
from lib.bounds import count_problem, name_problem

SOURCE_KIND = "git"
DEFAULT_CLAIMS_FOLDER = "current_tasks/"
_HEADER_FIELDS = 9
_SHA = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_TIME = re.compile(rb"^-?[0-9]{1,20}$")
_NUMSTAT = re.compile(rb"^([0-9]+|-)\t([0-9]+|-)\t(.*)$", re.DOTALL)


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
    def agent(self) -> str:
        """Who made it, as the events' agent: the author's name, or email."""
        return self.author_name or self.author_email or "unknown"

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
        author_time = from_unix_seconds(authored, EVENT_YEARS)
        committer_time = from_unix_seconds(committed, EVENT_YEARS)
        problems = [count_problem(n, "a count") for n in (files, insertions, deletions)]
        if author_time is None or committer_time is None or any(problems):
            reason = next((p for p in problems if p), f"a time is {EVENT_YEARS.reason()}")
            raise GitLogError(f"line {number} of the derived history: {reason}")
        commits.append(
            Commit(
                sha="",
                parents=1,
                author_time=author_time,
                committer_time=committer_time,
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


@dataclass(frozen=True)
class RejectedCommit:
    """A commit outside the bounds: its sha, the reason (one line), its header as text."""

    sha: str
    reason: str
    raw: str


@dataclass
class LogReader:
    """Reads `git log` output block by block, however the blocks are cut: `feed()` gives
    the commits complete so far, `finish()` the last one, in the log's order."""

    claims_folder: str = DEFAULT_CLAIMS_FOLDER
    _carry: bytes = field(default=b"", repr=False)

    def feed(self, block: bytes) -> list[Commit | RejectedCommit]:
        return self._read(self._carry + block, final=False)

    def finish(self) -> list[Commit | RejectedCommit]:
        return self._read(self._carry, final=True)

    def _read(self, data: bytes, *, final: bool) -> list[Commit | RejectedCommit]:
        folder = normalize_claims_folder(self.claims_folder)
        tokens = data.split(b"\0")
        # The last token is cut by the block's end, unless the output has ended (then it
        # is the empty token after the last NUL).
        whole = len(tokens) if final else len(tokens) - 1
        entries: list[Commit | RejectedCommit] = []
        at = 0
        while True:
            start = at
            if final and all(not token for token in tokens[at:]):
                self._carry = b""
                return entries
            if at + _HEADER_FIELDS > whole:
                break
            header = tokens[at : at + _HEADER_FIELDS]
            at += _HEADER_FIELDS
            changes: list[tuple[bytes, bytes]] = []  # (status or numstat counts, path)
            complete = False
            while at < whole:
                token = tokens[at].removeprefix(b"\n")  # git starts the changes on a line
                if token.startswith(b":"):
                    if at + 1 >= whole:
                        break
                    changes.append((token.rsplit(b" ", 1)[-1], tokens[at + 1]))
                    at += 2
                elif _NUMSTAT.match(token):
                    changes.append((b"numstat", token))
                    at += 1
                else:
                    complete = True  # the next commit's sha
                    break
            else:
                complete = final
            if not complete:
                at = start
                break
            entries.append(_commit(header, changes, folder))
        if final:
            raise GitLogError(f"unexpected end of git log output: {data[-200:]!r}")
        self._carry = b"\0".join(tokens[at:])
        return entries


def _text(value: bytes) -> str:
    return value.decode("utf-8", errors="replace")


def _commit(
    header: list[bytes], changes: list[tuple[bytes, bytes]], folder: str
) -> Commit | RejectedCommit:
    sha, parents, author_ts, committer_ts, an, ae, cn, ce, subject = header
    if not _SHA.match(sha) or not _TIME.match(author_ts) or not _TIME.match(committer_ts):
        shown = b"\\0".join(header)[:200]
        raise GitLogError(f"unexpected git log header: {shown!r}")
    raw = " ".join(_text(value) for value in (sha, author_ts, committer_ts, an, ae, subject))
    files = insertions = deletions = 0
    paths: list[str] = []
    added_or_removed: set[str] = set()
    for kind, value in changes:
        if kind != b"numstat":
            if kind in (b"A", b"D"):
                added_or_removed.add(_text(value))
            continue
        match = _NUMSTAT.match(value)
        assert match is not None  # read as numstat because it matched
        added, removed, path = match.groups()
        files += 1
        paths.append(_text(path))
        # Binary files show "-" for both counts.
        insertions += int(added) if added != b"-" else 0
        deletions += int(removed) if removed != b"-" else 0
    authored = from_unix_seconds(int(author_ts), EVENT_YEARS)
    committed = from_unix_seconds(int(committer_ts), EVENT_YEARS)
    commit_sha = _text(sha)
    if authored is None or committed is None:
        what = "committer time" if committed is None else "author time"
        return RejectedCommit(commit_sha, f"{what} is {EVENT_YEARS.reason()}", raw)
    for count, what in ((files, "files"), (insertions, "insertions"), (deletions, "deletions")):
        problem = count_problem(count, what)
        if problem is not None:
            return RejectedCommit(commit_sha, problem, raw)
    claim = bool(folder) and bool(paths)
    if claim:
        claim = all(p.startswith(folder) and p in added_or_removed for p in paths)
    commit = Commit(
        sha=commit_sha,
        parents=len(parents.split()),
        author_time=authored,
        committer_time=committed,
        author_name=_text(an),
        author_email=_text(ae),
        committer_name=_text(cn),
        committer_email=_text(ce),
        subject=_text(subject),
        files=files,
        insertions=insertions,
        deletions=deletions,
        claim=claim,
    )
    problem = name_problem(commit.agent, "author")
    return commit if problem is None else RejectedCommit(commit_sha, problem, raw)
