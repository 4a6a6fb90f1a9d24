"""git history ingest: a real fleet's history rebuilt from its commit timestamps, claims,
incremental re-runs and bad repositories."""

import csv
import io
import shutil
import subprocess
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from django.core.management import CommandError, call_command

import warehouse
from analytics.runs import queries as runs
from ingest.git_rebuild import PlannedCommit, rebuild
from ingest.pipelines.git import run_git
from ingest.sources.files import SourceError
from tests.conftest import FIXTURE_ROOT

pytestmark = pytest.mark.usefixtures("lake")

COMPILER_CSV = FIXTURE_ROOT / "datasets" / "commits_claudes-c-compiler.csv"


def epoch(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


def compiler_history() -> list[dict[str, str]]:
    with open(COMPILER_CSV, newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows.reverse()  # the CSV lists newest first
    return rows


def ingest(repo: Path, run: str, *extra: str) -> dict[str, int]:
    out = io.StringIO()
    call_command("ingest", "git", str(repo), "--run", run, *extra, stdout=out, stderr=io.StringIO())
    return orjson.loads(out.getvalue())


def test_the_compilers_rebuilt_history_has_its_total_and_busiest_hour(tmp_path: Path) -> None:
    history = compiler_history()
    repo = tmp_path / "compiler"
    rebuild(
        repo,
        (
            PlannedCommit(epoch(r["author_time_utc"]), epoch(r["committer_time_utc"]))
            for r in history
        ),
    )
    summary = ingest(repo, "compiler")
    # Independently: count the CSV's committer times by clock hour.
    by_hour = Counter(r["committer_time_utc"][:13] for r in history)
    hour, busiest = max(by_hour.items(), key=lambda item: (item[1], item[0]))
    assert summary["accepted"] == 3982 == len(history)
    rate = runs.commit_rate("compiler", 3600)
    assert rate.total == 3982
    assert rate.peak is not None
    assert rate.peak.commits == busiest == 73  # the dataset README's figure
    assert rate.peak.t == datetime.strptime(hour, "%Y-%m-%dT%H").replace(tzinfo=UTC)


def git(repo: Path, *args: str, when: int = 1768380000) -> None:
    env = {
        "GIT_AUTHOR_NAME": "Worker Seven",
        "GIT_AUTHOR_EMAIL": "w7@fleet.invalid",
        "GIT_COMMITTER_NAME": "Integrator",
        "GIT_COMMITTER_EMAIL": "ci@fleet.invalid",
        "GIT_AUTHOR_DATE": f"@{when - 90} +0000",
        "GIT_COMMITTER_DATE": f"@{when} +0000",
        "HOME": str(repo.parent),
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def commit(repo: Path, message: str, when: int) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message, when=when)


@pytest.fixture(scope="module")
def claims_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("template") / "fleet"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "src").mkdir()
    (repo / "src" / "a.c").write_text("int a;\nint b;\n")
    commit(repo, "add a.c", 1768380000)
    (repo / "current_tasks").mkdir()
    (repo / "current_tasks" / "t1.txt").write_text("worker 7\n")
    (repo / "current_tasks" / "t2.txt").write_text("worker 8\n")
    commit(repo, "Lock tasks t1 t2", 1768380060)
    (repo / "src" / "a.c").write_text("int a;\nint c;\nint d;\n")
    commit(repo, "work on a.c", 1768380120)
    (repo / "current_tasks" / "t1.txt").unlink()
    commit(repo, "Unlock t1", 1768380180)
    (repo / "current_tasks" / "t2.txt").write_text("worker 9\n")
    commit(repo, "Hand t2 over", 1768380240)
    (repo / "current_tasks" / "t2.txt").unlink()
    (repo / "src" / "b.c").write_text("int e;\n")
    commit(repo, "finish t2 and unlock", 1768380300)
    return repo


@pytest.fixture
def claims_repo(claims_template: Path, tmp_path: Path) -> Path:
    """A fresh copy per test: some tests add commits or rewrite history."""
    return Path(shutil.copytree(claims_template, tmp_path / "fleet"))


def stored_commits(run: str) -> list[dict[str, object]]:
    return warehouse.fetch_all(
        "SELECT commit_message, commit_claim, commit_files, commit_insertions, "
        "commit_deletions, agent, commit_author, epoch(ts)::BIGINT AS ts, "
        "epoch(author_ts)::BIGINT AS author_ts, source_kind FROM events "
        "WHERE run = ? ORDER BY ts",
        [run],
    )


def test_only_commits_that_add_or_remove_lock_files_are_claims(claims_repo: Path) -> None:
    assert ingest(claims_repo, "fleet")["accepted"] == 6
    marked = [(c["commit_message"], c["commit_claim"]) for c in stored_commits("fleet")]
    assert marked == [
        ("add a.c", False),
        ("Lock tasks t1 t2", True),
        ("work on a.c", False),
        ("Unlock t1", True),
        ("Hand t2 over", False),  # a lock file edited, not added or removed
        ("finish t2 and unlock", False),  # work in the same commit
    ]


def test_it_keeps_times_identity_numstat_and_subject(claims_repo: Path) -> None:
    ingest(claims_repo, "fleet")
    third = stored_commits("fleet")[2]
    assert third == {
        "commit_message": "work on a.c",
        "commit_claim": False,
        "commit_files": 1,
        "commit_insertions": 2,
        "commit_deletions": 1,
        "agent": "Worker Seven",
        "commit_author": "Worker Seven <w7@fleet.invalid>",
        "ts": 1768380120,
        "author_ts": 1768380120 - 90,
        "source_kind": "git",
    }


def test_a_custom_claims_folder_or_none(claims_repo: Path) -> None:
    ingest(claims_repo, "none", "--claims-folder", "")
    assert [c["commit_claim"] for c in stored_commits("none")] == [False] * 6
    ingest(claims_repo, "src-claims", "--claims-folder", "./src")
    assert [c["commit_claim"] for c in stored_commits("src-claims")] == [
        True,
        False,
        False,
        False,
        False,
        False,
    ]


def test_a_rerun_reads_only_new_commits(claims_repo: Path) -> None:
    assert ingest(claims_repo, "fleet")["accepted"] == 6
    repeat = ingest(claims_repo, "fleet")
    assert (repeat["accepted"], repeat["duplicates"], repeat["bytes"]) == (0, 0, 0)
    (claims_repo / "src" / "c.c").write_text("int f;\n")
    commit(claims_repo, "add c.c", 1768380360)
    again = ingest(claims_repo, "fleet")
    assert (again["accepted"], again["duplicates"]) == (1, 0)
    assert len(stored_commits("fleet")) == 7


def test_rewritten_history_is_read_again_without_duplicates(claims_repo: Path) -> None:
    ingest(claims_repo, "fleet")
    git(claims_repo, "reset", "--quiet", "--hard", "HEAD~2")
    (claims_repo / "src" / "d.c").write_text("int g;\n")
    commit(claims_repo, "rewritten tip", 1768380400)
    again = ingest(claims_repo, "fleet")
    assert (again["accepted"], again["duplicates"]) == (1, 4)
    assert len(stored_commits("fleet")) == 7  # the two dropped commits stay recorded


def test_a_folder_that_is_not_a_repository_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(CommandError, match=r"^not a git repository: .*plain$"):
        call_command("ingest", "git", str(tmp_path / "plain"), "--run", "x")


def test_a_missing_folder_and_an_unknown_ref_are_one_line_errors(
    tmp_path: Path, claims_repo: Path
) -> None:
    with pytest.raises(CommandError, match="no such folder"):
        call_command("ingest", "git", str(tmp_path / "nope"), "--run", "x")
    with pytest.raises(SourceError, match="no such revision"):
        run_git(str(claims_repo), "x", ref="no-such-branch")


def test_an_empty_repository_loads_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "--quiet")
    assert run_git(str(repo), "empty").accepted == 0


def quarantined(source_kind: str = "git") -> list[tuple[object, ...]]:
    return [
        (row["line_no"], row["reason"])
        for row in warehouse.fetch_all(
            "SELECT line_no, reason FROM quarantine WHERE source_kind = ? ORDER BY line_no",
            [source_kind],
        )
    ]


def test_no_subject_body_or_path_breaks_the_history(tmp_path: Path) -> None:
    repo = tmp_path / "odd"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    subjects = ["a\x1eb", "c\x1fd\x1fe", "tab\there", ":100644 x A", "1\t2\tfake"]
    for number, subject in enumerate(subjects):
        name = ["x\x1ey.txt", "tab\tname.txt", "new\nline.txt", ":colon", "plain"][number]
        (repo / name).write_text(f"{number}\n")
        commit(repo, f"{subject}\n\nbody\x1e line\n1\t0\tnot/numstat\n", 1768380000 + number)
    summary = ingest(repo, "odd")
    assert (summary["accepted"], summary["quarantined"]) == (5, 0)
    stored = stored_commits("odd")
    assert [c["commit_message"] for c in stored] == subjects
    assert [(c["commit_files"], c["commit_insertions"]) for c in stored] == [(1, 1)] * 5


def test_a_commit_dated_past_the_years_is_quarantined_and_the_rest_load(tmp_path: Path) -> None:
    repo = tmp_path / "future"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "a.txt").write_text("1\n")
    commit(repo, "first", 1768380000)
    (repo / "a.txt").write_text("2\n")
    commit(repo, "from 9999", 253402300799)  # 9999-12-31T23:59:59Z
    (repo / "a.txt").write_text("3\n")
    commit(repo, "third", 1768380120)
    summary = ingest(repo, "future")
    assert (summary["accepted"], summary["quarantined"]) == (2, 1)
    assert [c["commit_message"] for c in stored_commits("future")] == ["first", "third"]
    [(line_no, reason)] = quarantined()
    assert line_no == 2 and str(reason).endswith(": committer time is outside 1970-2199")
    # The /overview/ page reads the run's commits: none past 2199 reached it.
    assert runs.commit_rate("future", 3600).total == 2
    again = ingest(repo, "future")  # a re-run changes nothing
    assert (again["accepted"], again["quarantined"]) == (0, 0)
    assert len(quarantined()) == 1 and len(stored_commits("future")) == 2


def test_an_author_name_beyond_the_bounds_is_quarantined(tmp_path: Path) -> None:
    repo = tmp_path / "names"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "a.txt").write_text("1\n")
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=" + "n" * 201,
        "commit",
        "--quiet",
        "--author",
        "n" * 201 + " <n@x>",
        "-m",
        "long",
    )
    summary = ingest(repo, "names")
    assert (summary["accepted"], summary["quarantined"]) == (0, 1)
    assert [reason for _, reason in quarantined()] == [
        f"commit {_head(repo)}: author is longer than 200 characters"
    ]


def _head(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True)
    return done.stdout.decode().strip()


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("r" * 201, "--run is longer than 200 characters"),
        ("a\x1eb", "--run holds a control character"),
        ("", "--run is empty"),
    ],
)
def test_a_run_name_beyond_the_bounds_is_a_one_line_error(
    claims_repo: Path, run: str, message: str
) -> None:
    with pytest.raises(CommandError, match=f"^{message}$"):
        call_command("ingest", "git", str(claims_repo), "--run", run)
    assert stored_commits(run) == []
