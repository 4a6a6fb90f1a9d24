"""`git log -z --raw --numstat` output -> commits: fields no subject, name or path can
break, blocks cut anywhere, and the bounds (times, names, counts) with their reasons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsers.git_log import Commit, GitLogError, LogReader, RejectedCommit
from tests.ingest.parsers.bounds_cases import SAMPLES

T0 = 1768380000  # 2026-01-14T08:40:00Z


@dataclass(frozen=True)
class Planned:
    """A commit as git would print it, and the figures it must read as."""

    sha: str
    subject: str = "work"
    author: str = "Worker Seven"
    authored: int = T0 - 90
    committed: int = T0
    changes: tuple[tuple[str, str, str, str], ...] = (("M", "1", "0", "src/a.c"),)

    def output(self) -> bytes:
        header = [self.sha, "", str(self.authored), str(self.committed), self.author]
        header += ["w7@fleet.invalid", "Integrator", "ci@fleet.invalid", self.subject]
        out = b"".join(field.encode() + b"\0" for field in header)
        if self.changes:
            out += b"\n"
        for status, _, _, path in self.changes:
            out += f":100644 100644 {'1' * 40} {'2' * 40} {status}\0{path}\0".encode()
        for _, added, removed, path in self.changes:
            out += f"{added}\t{removed}\t{path}\0".encode()
        return out


def sha(n: int) -> str:
    return f"{n:040x}"


def read(data: bytes, *cuts: int, claims_folder: str = "current_tasks/") -> list[object]:
    """Every entry, the output fed in blocks cut at `cuts`."""
    reader = LogReader(claims_folder)
    entries: list[object] = []
    start = 0
    for cut in (*cuts, len(data)):
        entries += reader.feed(data[start:cut])
        start = cut
    return entries + reader.finish()


def test_a_commit_keeps_its_times_identity_numstat_and_subject() -> None:
    planned = Planned(sha(1), changes=(("M", "2", "1", "src/a.c"), ("A", "-", "-", "x.bin")))
    [commit] = read(planned.output())
    assert commit == Commit(
        sha=sha(1),
        parents=0,
        author_time=datetime(2026, 1, 14, 8, 38, 30, tzinfo=UTC),
        committer_time=datetime(2026, 1, 14, 8, 40, tzinfo=UTC),
        author_name="Worker Seven",
        author_email="w7@fleet.invalid",
        committer_name="Integrator",
        committer_email="ci@fleet.invalid",
        subject="work",
        files=2,
        insertions=2,  # the binary file counts no lines
        deletions=1,
        claim=False,
    )


@pytest.mark.parametrize(
    "subject",
    [
        "a\x1eb",  # the separators the old format used
        "a\x1fb\x1fc\x1fd\x1fe\x1ff\x1fg\x1fh\x1fi",
        "\n1\t0\tfake/path",  # what looks like numstat
        ":100644 100644 x y A",  # what looks like a raw entry
        f"{'a' * 40}",  # what looks like a sha
        "",
        "tab\tand \\ backslash and é",
    ],
)
def test_no_subject_breaks_the_records(subject: str) -> None:
    data = Planned(sha(1), subject=subject).output() + Planned(sha(2)).output()
    commits = read(data)
    assert [(c.sha, c.subject) for c in commits] == [(sha(1), subject), (sha(2), "work")]  # type: ignore[attr-defined]


def test_paths_with_tabs_newlines_and_colons_are_read_whole() -> None:
    changes = (("A", "1", "0", "current_tasks/a\tb.txt"), ("D", "0", "1", "current_tasks/:\n1"))
    [commit] = read(Planned(sha(1), changes=changes).output())
    assert isinstance(commit, Commit)
    assert (commit.files, commit.insertions, commit.deletions, commit.claim) == (2, 1, 1, True)


def test_a_commit_is_a_claim_only_when_it_adds_or_removes_lock_files_alone() -> None:
    lock = ("A", "1", "0", "current_tasks/t1.txt")
    edit = ("M", "1", "1", "current_tasks/t1.txt")
    work = ("M", "1", "0", "src/a.c")
    data = b"".join(
        Planned(sha(n), changes=changes).output()
        for n, changes in enumerate([(lock,), (edit,), (lock, work), ()], start=1)
    )
    assert [c.claim for c in read(data)] == [True, False, False, False]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("planned", "reason"),
    [
        (Planned(sha(1), committed=253402300799), "committer time is outside 1970-2199"),
        (Planned(sha(1), authored=-1), "author time is outside 1970-2199"),
        (Planned(sha(1), committed=7258118400), "committer time is outside 1970-2199"),
        (Planned(sha(1), author="a" * 201), "author is longer than 200 characters"),
        (Planned(sha(1), author="Worker\x1bSeven"), "author holds a control character"),
        (
            Planned(sha(1), changes=(("M", str(10**18), "0", "a"),)),
            "insertions is 10^18 or more",
        ),
    ],
)
def test_a_commit_beyond_the_bounds_is_rejected_and_the_next_read(
    planned: Planned, reason: str
) -> None:
    rejected, kept = read(planned.output() + Planned(sha(2)).output())
    assert isinstance(rejected, RejectedCommit) and isinstance(kept, Commit)
    assert (rejected.sha, rejected.reason, kept.sha) == (sha(1), reason, sha(2))
    assert rejected.raw.startswith(f"{sha(1)} ")


def test_the_last_commit_is_kept_until_the_output_ends() -> None:
    reader = LogReader()
    data = Planned(sha(1)).output() + Planned(sha(2)).output()
    assert [c.sha for c in reader.feed(data)] == [sha(1)]
    assert [c.sha for c in reader.finish()] == [sha(2)]


def test_output_in_another_format_is_a_one_line_error() -> None:
    with pytest.raises(GitLogError, match=r"^unexpected end of git log output: "):
        read(b"commit abc\nAuthor: x\n\n    subject\n")  # git log without -z
    with pytest.raises(GitLogError, match=r"^unexpected end of git log output: "):
        read(b"\0".join([sha(1).encode(), b"", b"1"]))
    with pytest.raises(GitLogError, match=r"^unexpected git log header: "):
        read(b"abc\0" * 9)


_TEXT = st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]))


@st.composite
def planned_commits(draw: st.DrawFn, n: int) -> tuple[Planned, str | None]:
    """A commit with any subject and paths, maybe beyond the bounds: (it, its reason)."""
    committed = draw(st.integers(0, 7258118399))
    authored = draw(st.integers(0, 7258118399))
    author = draw(st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1))
    reason = None
    flaw = draw(st.sampled_from(["none", "none", "time", "author"]))
    if flaw == "time":
        committed = draw(st.sampled_from([-1, 7258118400, 253402300799, 10**15]))
        reason = "committer time is outside 1970-2199"
    elif flaw == "author":
        author = draw(st.sampled_from(["a\x00b", "a\nb", "\x1e", "x" * 201]))
        reason = "author holds a control character" if len(author) < 201 else None
        reason = reason or "author is longer than 200 characters"
        author = author.replace("\x00", "\x01")  # git cannot hold a NUL
    changes = draw(
        st.lists(
            st.tuples(
                st.sampled_from("AMD"),
                st.sampled_from(["0", "7", "-"]),
                st.sampled_from(["0", "3", "-"]),
                _TEXT.filter(bool),
            ),
            max_size=3,
        )
    )
    planned = Planned(sha(n), draw(_TEXT), author, authored, committed, tuple(changes))
    return planned, reason


@settings(max_examples=SAMPLES, deadline=None)
@given(st.data(), st.integers(1, 6), st.lists(st.integers(0, 10_000), max_size=6))
def test_any_history_cut_anywhere_reads_every_commit_or_rejects_it_with_its_reason(
    data: st.DataObject, count: int, cuts: list[int]
) -> None:
    history = [data.draw(planned_commits(n)) for n in range(1, count + 1)]
    output = b"".join(planned.output() for planned, _ in history)
    entries = read(output, *sorted(c % (len(output) + 1) for c in cuts))
    assert [e.sha for e in entries] == [p.sha for p, _ in history]  # type: ignore[attr-defined]
    for entry, (planned, reason) in zip(entries, history, strict=True):
        if reason is None:
            assert isinstance(entry, Commit)
            assert entry.subject == planned.subject and entry.author_name == planned.author
            assert entry.committer_time.timestamp() == planned.committed
            assert entry.files == len(planned.changes)
            assert entry.insertions == sum(7 for _, a, _, _ in planned.changes if a == "7")
            assert entry.deletions == sum(3 for _, _, r, _ in planned.changes if r == "3")
        else:
            assert isinstance(entry, RejectedCommit) and entry.reason == reason
