"""One rule for every file pipeline (ingest/sources/files.py, read by line_files.py,
transcript_files.py and agent_events/): a file that cannot be read (a truncated, garbage
or CRC-broken .gz, a file that cannot be opened, a FIFO) is named with its reason, the
lines read before its break are loaded once, every other file is loaded, `manage.py
ingest` exits 2 with the summary still printed, and a re-run adds nothing.

The lines a truncated .gz still gives are worked out here with zlib's own streaming
decompressor, apart from the code under test."""

import gzip
import io
import itertools
import os
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from django.core.management import CommandError, call_command, execute_from_command_line
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import warehouse
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from ingest.pipelines.loading import IngestSummary
from ingest.pipelines.parallel import run_parallel
from ingest.pipelines.requests import run_requests
from ingest.sources.line_layout import BOM
from tests.conftest import FIXTURE_ROOT
from tests.ingest.pipelines.agent_events import event

pytestmark = pytest.mark.usefixtures("lake")

AGENT_LOGS = FIXTURE_ROOT / "agent-logs"
GARBAGE = bytes(range(256)) * 8


def truncated_gz(data: bytes) -> bytes:
    compressed = gzip.compress(data)
    return compressed[: len(compressed) // 2]


def crc_broken_gz(data: bytes) -> bytes:
    compressed = bytearray(gzip.compress(data))
    compressed[-8] ^= 0xFF  # the trailer's CRC-32
    return bytes(compressed)


def whole_lines_before_the_break(broken_gz: bytes) -> int:
    """How many whole lines a decompressor gets out of a broken .gz before it stops."""
    out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(broken_gz)
    return out.count(b"\n")


@pytest.fixture
def locked(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Paths that cannot be opened (Permission denied), as chmod 000 does for a user who
    is not root: the tests may run as root, whom chmod does not stop."""
    paths: set[str] = set()
    real_open = open

    def open_unless_locked(file: object, *args: object, **kwargs: object) -> object:
        if str(file) in paths:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", open_unless_locked)
    return paths


@dataclass(frozen=True)
class Source:
    command: str
    run: Callable[[list[str]], IngestSummary]
    lines: Callable[[range], bytes]  # records numbered by the range, one per line
    stored: str  # SQL counting what is stored


def _agent_events(numbers: range) -> bytes:
    return b"".join(event(i) for i in numbers)


def _requests(numbers: range) -> bytes:
    return b"".join(
        orjson.dumps({"ts": 1772359200 + i, "request_id": f"r{i}", "prompt": f"say {i}"}) + b"\n"
        for i in numbers
    )


def _parallel(numbers: range) -> bytes:
    return b"".join(
        orjson.dumps({"id": f"s{i}", "language": "en", "text": f"text number {i}"}) + b"\n"
        for i in numbers
    )


SOURCES = {
    "agent-events": Source(
        "agent-events", run_agent_events, _agent_events, "SELECT count(*) AS n FROM events"
    ),
    "requests": Source("requests", run_requests, _requests, "SELECT count(*) AS n FROM requests"),
    "parallel": Source(
        "parallel", run_parallel, _parallel, "SELECT count(*) AS n FROM parallel_texts"
    ),
}


def stored(sql: str) -> int:
    row = warehouse.fetch_one(sql)
    assert row is not None
    return int(row["n"])


def broken_folder(folder: Path, lines: Callable[[range], bytes], locked: set[str]) -> int:
    """A good file, each kind of broken file, and a good file after them; returns how many
    records the good files and the broken ones' readable lines hold."""
    folder.mkdir()
    (folder / "a-good.jsonl").write_bytes(lines(range(0, 40)))
    cut = truncated_gz(lines(range(1000, 3000)))
    (folder / "b-truncated.jsonl.gz").write_bytes(cut)
    (folder / "c-garbage.jsonl.gz").write_bytes(GARBAGE)
    (folder / "d-crc.jsonl.gz").write_bytes(crc_broken_gz(lines(range(4000, 4030))))
    (folder / "e-locked.jsonl").write_bytes(lines(range(5000, 5010)))
    locked.add(str(folder / "e-locked.jsonl"))
    os.mkfifo(folder / "f-pipe.jsonl")
    (folder / "g-good.jsonl").write_bytes(lines(range(6000, 6025)))
    return 40 + whole_lines_before_the_break(cut) + 30 + 25


def failures(summary: dict[str, object], folder: Path) -> dict[str, str]:
    failed = summary["failed"]
    assert isinstance(failed, list)
    return {Path(f["file"]).relative_to(folder).as_posix(): f["reason"] for f in failed}


def readable_bytes_of(path: Path) -> int:
    """The bytes of whole lines a decompressor gets out of a broken .gz."""
    out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(path.read_bytes())
    return out.rindex(b"\n") + 1


@pytest.mark.parametrize("name", SOURCES)
def test_a_broken_file_is_named_and_every_other_file_is_loaded(
    name: str, tmp_path: Path, locked: set[str]
) -> None:
    source = SOURCES[name]
    folder = tmp_path / "logs"
    loadable = broken_folder(folder, source.lines, locked)

    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as failed_run:
        call_command("ingest", source.command, str(folder), stdout=out, stderr=err)
    first = orjson.loads(out.getvalue())
    again = source.run([str(folder)]).as_dict()

    assert failed_run.value.returncode == 2
    assert str(failed_run.value) == "5 files could not be read; everything else is loaded"
    assert (first["accepted"], first["quarantined"], first["files"]) == (loadable, 0, 6)
    assert stored(source.stored) == loadable
    named = failures(first, folder)
    crc = named.pop("d-crc.jsonl.gz")
    assert named == {
        "b-truncated.jsonl.gz": "truncated: Compressed file ended before the end-of-stream"
        f" marker was reached (after byte {readable_bytes_of(folder / 'b-truncated.jsonl.gz')}:"
        " the lines before it are read)",
        "c-garbage.jsonl.gz": "Not a gzipped file (b'\\x00\\x01')",
        "e-locked.jsonl": "Permission denied",
        "f-pipe.jsonl": "not a regular file",
    }
    crc_end = len(source.lines(range(4000, 4030)))
    assert crc.startswith("CRC check failed ")
    assert crc.endswith(f"(after byte {crc_end}: the lines before it are read)")
    for file in ("b-truncated.jsonl.gz", "c-garbage.jsonl.gz", "e-locked.jsonl"):
        assert f"cannot read {folder / file}: " in err.getvalue()
    # The next run loads nothing twice, and names the files still broken.
    assert (again["accepted"], again["quarantined"], again["duplicates"]) == (0, 0, 0)
    assert failures(again, folder).keys() == failures(first, folder).keys()
    assert stored(source.stored) == loadable


def test_a_broken_file_mended_later_is_read_on_from_its_break(
    tmp_path: Path, locked: set[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    data = _agent_events(range(2000))
    path = folder / "a.jsonl.gz"
    path.write_bytes(truncated_gz(data))
    before = whole_lines_before_the_break(path.read_bytes())

    first = run_agent_events([str(folder)])
    path.write_bytes(gzip.compress(data))  # the whole file, written again in place
    mended = run_agent_events([str(folder)])

    assert (first.accepted, len(first.failed)) == (before, 1)
    assert (mended.accepted, mended.duplicates, mended.failed) == (2000 - before, 0, [])
    assert stored("SELECT count(*) AS n FROM events") == 2000


def transcript_folder(folder: Path, session: bytes, locked: set[str]) -> None:
    """Good transcripts and broken copies of them: whatever the broken ones give is a
    duplicate, so the events stored are the good files' own."""
    folder.mkdir(parents=True)
    half = session.index(b"\n", len(session) // 2) + 1
    (folder / "a-good.jsonl").write_bytes(session[:half])
    (folder / "b-truncated.jsonl.gz").write_bytes(truncated_gz(session))
    (folder / "c-garbage.jsonl.gz").write_bytes(GARBAGE)
    (folder / "d-crc.jsonl.gz").write_bytes(crc_broken_gz(session))
    (folder / "e-locked.jsonl").write_bytes(session)
    locked.add(str(folder / "e-locked.jsonl"))
    os.mkfifo(folder / "f-pipe.jsonl")
    (folder / "g-good.jsonl").write_bytes(session[half:])


@pytest.mark.parametrize(
    ("command", "run", "fixture", "events"),
    [
        # The excerpt's 13 events (tests/ingest/pipelines/test_claude_code.py).
        ("claude-code", run_claude_code, "claude-code-commit-and-tool-error.jsonl", 13),
        # The rollout's 2 events (tests/ingest/test_tasks.py).
        ("codex", run_codex, "codex-rollout-0.135.jsonl", 2),
    ],
)
def test_a_broken_transcript_is_named_and_the_others_are_loaded(
    command: str,
    run: Callable[[list[str]], IngestSummary],
    fixture: str,
    events: int,
    tmp_path: Path,
    locked: set[str],
) -> None:
    folder = tmp_path / "projects" / "p"
    transcript_folder(folder, (AGENT_LOGS / fixture).read_bytes(), locked)

    out = io.StringIO()
    with pytest.raises(CommandError) as failed_run:
        call_command("ingest", command, str(folder), stdout=out, stderr=io.StringIO())
    first = orjson.loads(out.getvalue())
    again = run([str(folder)]).as_dict()

    assert failed_run.value.returncode == 2
    assert stored("SELECT count(*) AS n FROM events") == events
    assert set(failures(first, folder)) == {
        "b-truncated.jsonl.gz",
        "c-garbage.jsonl.gz",
        "d-crc.jsonl.gz",
        "e-locked.jsonl",
        "f-pipe.jsonl",
    }
    assert (again["accepted"], again["quarantined"]) == (0, 0)
    assert failures(again, folder).keys() == failures(first, folder).keys()
    assert stored("SELECT count(*) AS n FROM events") == events


@pytest.mark.parametrize("name", SOURCES)
def test_a_byte_order_mark_and_lone_cr_line_endings_are_read(name: str, tmp_path: Path) -> None:
    source = SOURCES[name]
    (tmp_path / "bom.jsonl").write_bytes(BOM + source.lines(range(0, 3)))
    (tmp_path / "mac.jsonl").write_bytes(source.lines(range(10, 14)).replace(b"\n", b"\r"))
    (tmp_path / "mac.jsonl.gz").write_bytes(
        gzip.compress(BOM + source.lines(range(20, 22)).replace(b"\n", b"\r"))
    )

    first = source.run([str(tmp_path)])
    again = source.run([str(tmp_path)])

    assert (first.accepted, first.quarantined, first.pending_bytes, first.failed) == (9, 0, 0, [])
    assert (again.accepted, again.quarantined, again.pending_bytes) == (0, 0, 0)
    assert stored(source.stored) == 9


@pytest.mark.parametrize(
    ("run", "fixture", "events"),
    [
        (run_claude_code, "claude-code-commit-and-tool-error.jsonl", 13),
        (run_codex, "codex-rollout-0.135.jsonl", 2),
    ],
)
def test_a_transcript_with_a_byte_order_mark_or_lone_cr_endings_is_read(
    run: Callable[[list[str]], IngestSummary], fixture: str, events: int, tmp_path: Path
) -> None:
    session = (AGENT_LOGS / fixture).read_bytes()
    (tmp_path / "bom").mkdir()
    (tmp_path / "bom" / "s.jsonl").write_bytes(BOM + session)
    (tmp_path / "mac").mkdir()
    (tmp_path / "mac" / "s.jsonl").write_bytes(session.replace(b"\n", b"\r"))

    with_bom = run([str(tmp_path / "bom")])
    with_cr = run([str(tmp_path / "mac")])

    assert (with_bom.accepted, with_bom.quarantined, with_bom.errors) == (events, 0, [])
    assert (with_cr.quarantined, with_cr.pending_bytes, with_cr.errors) == (0, 0, [])
    assert with_cr.duplicates == events  # the same events again, under the other file
    assert stored("SELECT count(*) AS n FROM events") == events


def test_ingest_names_the_first_quarantined_lines_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(_agent_events(range(3)) + b"not json\n" * 12)

    err = io.StringIO()
    call_command("ingest", "agent-events", str(path), stdout=io.StringIO(), stderr=err)

    reported = err.getvalue().splitlines()
    assert len(reported) == 11
    assert reported[0].startswith(f"quarantined {path}:4: ")
    assert reported[9].startswith(f"quarantined {path}:13: ")
    assert reported[10] == "... and 2 more quarantined lines"


# One file of the property test: its lines (None: a well-formed event; bytes: a line of
# junk, never an event), an unterminated tail, and how it is stored.
LogSpec = tuple[list[bytes | None], bytes, str, int]
junk_line = st.binary(max_size=30).map(lambda b: b"#" + b.replace(b"\n", b""))
log_spec = st.tuples(
    st.lists(st.one_of(st.none(), junk_line), max_size=25),
    st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")),
    st.sampled_from(["plain", "gzip", "truncated", "crc", "garbage"]),
    st.integers(min_value=0, max_value=10_000),  # where a truncated .gz is cut, per 10,000
)
ids = itertools.count()


def write_log(folder: Path, index: int, spec: LogSpec) -> list[str]:
    """Write one file of the property test; returns the ids of the events it should load."""
    lines, tail, how, cut = spec
    data, ends = b"", []
    for line in lines:
        if line is None:
            ident = f"p{next(ids)}"
            data += event(0, id=ident)
            ends.append((len(data), ident))
        else:
            data += line + b"\n"
    data += tail
    if how == "plain":
        (folder / f"{index}.jsonl").write_bytes(data)
        return [ident for _, ident in ends]
    compressed = gzip.compress(data)
    if how == "gzip":
        readable = len(data)
    elif how == "crc":
        compressed = crc_broken_gz(data)
        readable = len(data)
    elif how == "truncated":
        compressed = compressed[: len(compressed) * cut // 10_000]
        readable = len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(compressed))
    else:
        compressed = b"xx" + compressed  # not gzip from its first byte
        readable = 0
    (folder / f"{index}.jsonl.gz").write_bytes(compressed)
    return [ident for end, ident in ends if end <= readable]


@settings(
    max_examples=20,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    specs=st.lists(log_spec, min_size=1, max_size=4),
    chunk_bytes=st.sampled_from([600, 1 << 20]),
)
def test_any_mix_of_broken_files_loads_every_well_formed_line_once(
    tmp_path: Path, specs: list[LogSpec], chunk_bytes: int
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    expected = sorted(i for n, spec in enumerate(specs) for i in write_log(folder, n, spec))

    first = run_agent_events([str(folder)], chunk_bytes=chunk_bytes, commit_bytes=chunk_bytes)
    again = run_agent_events([str(folder)], chunk_bytes=chunk_bytes, commit_bytes=chunk_bytes)

    rows = warehouse.fetch_all(
        "SELECT id FROM events WHERE starts_with(source, ?) ORDER BY id", [f"{folder}/"]
    )
    assert sorted(r["id"] for r in rows) == expected
    assert first.accepted == len(expected)
    assert (again.accepted, again.quarantined, again.duplicates) == (0, 0, 0)
    assert {f.file for f in again.failed} == {f.file for f in first.failed}


def test_the_command_exits_2_with_the_summary_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_bytes(_agent_events(range(5)))
    (tmp_path / "b.jsonl.gz").write_bytes(GARBAGE)

    with pytest.raises(SystemExit) as exited:
        execute_from_command_line(["manage.py", "ingest", "agent-events", str(tmp_path)])

    out, err = capsys.readouterr()
    summary = orjson.loads(out)
    assert exited.value.code == 2
    assert (summary["accepted"], summary["failed"]) == (
        5,
        [{"file": str(tmp_path / "b.jsonl.gz"), "reason": "Not a gzipped file (b'\\x00\\x01')"}],
    )
    assert err.splitlines() == [
        f"cannot read {tmp_path / 'b.jsonl.gz'}: Not a gzipped file (b'\\x00\\x01')",
        "CommandError: 1 file could not be read; everything else is loaded",
    ]
