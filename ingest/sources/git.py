"""A git repository's history, read with the `git` command (one `git log` process for the
whole range). Reads and nothing else: the parser turns the output into commits.

Every call runs `git` with a fixed argument list (no shell); a path that is not a
repository, or a revision that does not exist, raises SourceError with one line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

from ingest.sources.files import SourceError

# Every field NUL-terminated (-z), as no subject, name or path can hold a NUL: per commit
# the 9 header fields, then its --raw entries (":modes shas STATUS", path) and --numstat
# entries ("added<TAB>removed<TAB>path"); ingest/parsers/git_log.py reads them.
LOG_FORMAT = "%H%x00%P%x00%at%x00%ct%x00%an%x00%ae%x00%cn%x00%ce%x00%s"
READ_BYTES = 4 * 1024 * 1024

# Stable, parseable output whatever the user's configuration: no pager, no colour,
# untouched paths, UTF-8.
_CONFIG = (
    "-c",
    "core.quotepath=off",
    "-c",
    "i18n.logOutputEncoding=UTF-8",
    "-c",
    "color.ui=never",
    "-c",
    "diff.renames=false",
)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(  # noqa: S603 - fixed argument list, no shell
            ["git", *_CONFIG, "-C", str(repo), *args],  # noqa: S607 - git from PATH is the point
            capture_output=True,
            check=False,
        )
    except FileNotFoundError as exc:
        raise SourceError("git is not installed (needed to read a repository)") from exc


def open_repository(path: str) -> Path:
    """The repository's top folder; SourceError when `path` is not a git repository."""
    repo = Path(path).expanduser()
    if not repo.exists():
        raise SourceError(f"no such folder: {path}")
    if not repo.is_dir():
        raise SourceError(f"not a git repository (not a folder): {path}")
    done = _git(repo, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        bare = _git(repo, "rev-parse", "--is-bare-repository")
        if bare.returncode == 0 and bare.stdout.strip() == b"true":
            return repo.resolve()
        raise SourceError(f"not a git repository: {path}")
    return Path(done.stdout.decode().strip()).resolve()


def resolve(repo: Path, ref: str) -> str | None:
    """The commit `ref` names, or None in a repository without commits."""
    done = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0:
        head = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD")
        if ref == "HEAD" and head.returncode != 0:
            return None  # an empty repository: nothing to read yet
        raise SourceError(f"no such revision in {repo}: {ref}")
    return done.stdout.decode().strip()


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """True when `older` is in `newer`'s history (history was not rewritten since)."""
    return _git(repo, "merge-base", "--is-ancestor", older, newer).returncode == 0


def read_log(repo: Path, tip: str, since: str | None = None) -> Iterator[bytes]:
    """`git log` output from the oldest commit to `tip` (only those after `since` when
    given), in blocks cut anywhere (git_log.LogReader joins them)."""
    revisions = f"{since}..{tip}" if since else tip
    command = [
        "git",
        *_CONFIG,
        "-C",
        str(repo),
        "log",
        "-z",
        "--reverse",
        "--raw",
        "--numstat",
        "--no-renames",
        f"--format={LOG_FORMAT}",
        revisions,
        "--",
    ]
    process = subprocess.Popen(  # noqa: S603 - fixed argument list, no shell
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        while block := process.stdout.read(READ_BYTES):
            yield block
    finally:
        process.stdout.close()
        errors = process.stderr.read()
        process.stderr.close()
        status = process.wait()
    if status != 0:
        message = errors.decode(errors="replace").strip().splitlines()
        raise SourceError(f"git log failed in {repo}: {message[0] if message else status}")
