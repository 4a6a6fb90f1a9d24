"""Agent-event ingest end to end (the package's entry points, ingest/pipelines/agent_events/
__init__.py): exactly once, resumable, crash-safe, quarantining. Its modules' own tests are
in tests/ingest/pipelines/agent_events/."""

import gzip
import io
import os
from pathlib import Path

import duckdb
import orjson
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

import warehouse
from ingest.pipelines import agent_events as pipeline
from ingest.pipelines.agent_events import dedup, ingest_body, run_agent_events, workers
from tests.ingest.pipelines.agent_events import count, event

pytestmark = pytest.mark.usefixtures("lake")


def stray_files() -> list[str]:
    """Staged files left behind: in the events table's folder but in no snapshot of the
    table, or in the folder chunks are staged in when the lake is elsewhere."""
    folder = warehouse.local_table_dir("events")
    assert folder is not None
    known = warehouse.fetch_all("SELECT path FROM __ducklake_metadata_lake.ducklake_data_file")
    stray = {p.name for p in folder.glob("*.parquet")} - {Path(r["path"]).name for r in known}
    temp = Path(settings.DATA_DIR) / "tmp"
    return sorted(stray) + sorted(p.name for p in temp.glob("*") if temp.exists())


@pytest.fixture
def staged_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk's events go through a staged Parquet file, however few."""
    monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", 0)


def test_it_loads_each_line_once_however_often_it_runs(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"".join(event(i) for i in range(50)) + b"bad line\n")
    first = run_agent_events([str(log)])
    second = run_agent_events([str(log)])
    assert (first.accepted, first.quarantined, first.duplicates) == (50, 1, 0)
    assert (second.accepted, second.quarantined, second.duplicates, second.bytes) == (0, 0, 0, 0)
    assert count("SELECT count(*) FROM events") == 50
    assert count("SELECT count(*) FROM quarantine") == 1


def test_it_reads_a_grown_file_from_where_it_stopped(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + event(2) + b'{"ts": 17683')  # last line still being written
    first = run_agent_events([str(log)])
    assert (first.accepted, first.quarantined, first.pending_bytes) == (2, 0, 12)
    with open(log, "ab") as handle:
        handle.write(b'84803, "run": "r", "agent": "a", "event": "stop"}\n' + event(4))
    second = run_agent_events([str(log)])
    assert (second.accepted, second.quarantined, second.pending_bytes) == (2, 0, 0)
    lines = warehouse.fetch_all("SELECT source_line FROM events ORDER BY source_line")
    assert [r["source_line"] for r in lines] == [1, 2, 3, 4]


def test_it_counts_resent_ids_as_duplicates(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + event(1) + event(2, id=None))
    summary = run_agent_events([str(log)])
    assert (summary.accepted, summary.duplicates) == (2, 1)
    body = ingest_body(event(1) + event(2))
    assert (body.accepted, body.duplicates) == (1, 1)  # e1 is stored already; e2 is new
    assert count("SELECT count(*) FROM events WHERE id = 'e1'") == 1


def test_ids_a_file_stored_in_an_earlier_pass_are_duplicates_when_it_grows(
    tmp_path: Path,
) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + event(2))
    assert run_agent_events([str(log)]).accepted == 2
    with open(log, "ab") as handle:
        handle.write(event(2) + event(3) + event(1, run="other"))  # e2 re-sent
    again = run_agent_events([str(log)])
    assert (again.accepted, again.duplicates) == (2, 1)
    assert count("SELECT count(*) FROM events WHERE id = 'e2'") == 1


@pytest.mark.usefixtures("staged_always")
def test_a_crash_mid_file_loses_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"".join(event(i, id=None) for i in range(300)))
    real_load_chunk = pipeline.load_chunk
    calls = {"n": 0}

    def crash_on_third(*args: object, **kwargs: object) -> tuple[int, int]:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("power cut")
        return real_load_chunk(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "load_chunk", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        # Two chunks a transaction: the first commits, the second is rolled back.
        run_agent_events([str(log)], chunk_bytes=4096, commit_bytes=6000)
    loaded = count("SELECT count(*) FROM events")
    assert 0 < loaded < 300
    assert count("SELECT sum(events) FROM run_rollups") == loaded
    # The rolled-back transaction's files, and those staged ahead, are gone.
    assert stray_files() == []
    monkeypatch.setattr(pipeline, "load_chunk", real_load_chunk)
    rest = run_agent_events([str(log)], chunk_bytes=4096)
    assert loaded + rest.accepted == 300
    assert count("SELECT count(*) FROM events") == 300
    assert count("SELECT count(DISTINCT source_line) FROM events") == 300
    assert stray_files() == []


@pytest.mark.usefixtures("staged_always")
def test_a_conflicting_transaction_is_loaded_again_from_the_stored_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"".join(event(i) for i in range(300)))
    real_load_chunk = pipeline.load_chunk
    calls = {"n": 0}

    def conflict_on_third(*args: object, **kwargs: object) -> tuple[int, int]:
        calls["n"] += 1
        if calls["n"] == 3:  # the second transaction's first chunk
            raise duckdb.TransactionException("Conflict on tuple deletion!")
        return real_load_chunk(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "load_chunk", conflict_on_third)
    summary = run_agent_events([str(log)], chunk_bytes=4096, commit_bytes=6000)
    assert (summary.accepted, summary.duplicates) == (300, 0)
    assert calls["n"] > 3
    assert count("SELECT count(DISTINCT source_line) FROM events") == 300
    assert count("SELECT count(*) FROM events") == 300
    assert count("SELECT sum(events) FROM run_rollups") == 300

    attempts: list[int] = []

    def always_conflict(*args: object, **kwargs: object) -> tuple[int, int]:
        attempts.append(len(attempts) + 1)
        raise duckdb.TransactionException("Conflict on tuple deletion!")

    log.write_bytes(log.read_bytes() + event(300))
    monkeypatch.setattr(pipeline, "load_chunk", always_conflict)
    monkeypatch.setattr(warehouse.lake.time, "sleep", lambda seconds: None)
    with pytest.raises(warehouse.WarehouseError, match="kept conflicting"):
        run_agent_events([str(log)])
    # warehouse.retry_on_conflict's five attempts, each from the stored position.
    assert attempts == [1, 2, 3, 4, 5]
    assert count("SELECT count(*) FROM events") == 300
    assert stray_files() == []


@pytest.mark.parametrize(
    ("inlined_up_to", "key_hash"), [(100, "hash(run, id)"), (0, "hash(run, id)"), (0, "42")]
)
def test_chunks_parsed_ahead_in_a_thread_store_what_one_pass_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inlined_up_to: int, key_hash: str
) -> None:
    # With 0, every chunk is staged in a Parquet file: added to events as it is, or its
    # new rows inserted when ids of it are stored already (they repeat across chunks).
    # A load finds its own repeats by the hashes of the ids it stored; with every hash
    # the same, each id is checked against the stored rows, and nothing else changes.
    monkeypatch.setattr(dedup, "KEY_HASH_SQL", key_hash)
    lines = [event(i, id=f"e{i % 250}") for i in range(300)]  # ids repeat across chunks
    lines[7] = b"not json\n"
    lines[123] = b"\n"
    lines[200] = event(200, usage={"input_tokens": "5"})  # a suspect line: the exact path
    data = b"".join(lines)
    (tmp_path / "one").mkdir()
    (tmp_path / "many").mkdir()
    whole, chunked = tmp_path / "one" / "a.jsonl", tmp_path / "many" / "a.jsonl"
    whole.write_bytes(data)
    chunked.write_bytes(data)
    stored = (
        "SELECT * EXCLUDE (source, ingested_at) FROM events WHERE source = ? ORDER BY source_line"
    )
    rejected = "SELECT line_no, byte_offset, reason FROM quarantine WHERE source = ? ORDER BY 1"

    one = run_agent_events([str(whole)])  # one chunk, its 248 events in memory
    rows = warehouse.fetch_all(stored, [str(whole)])
    warehouse.write(lambda cur: cur.execute("DELETE FROM events"))  # its ids, stored again
    monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", inlined_up_to)
    many = run_agent_events([str(chunked)], chunk_bytes=2048)  # ~12 chunks, parsed ahead
    rows_many = warehouse.fetch_all(stored, [str(chunked)])
    warehouse.write(lambda cur: cur.execute("DELETE FROM events"))
    (tmp_path / "txns").mkdir()
    committed = tmp_path / "txns" / "a.jsonl"
    committed.write_bytes(data)
    # ~6 transactions of 2 chunks: ids stored by an earlier one, or earlier in this one.
    txns = run_agent_events([str(committed)], chunk_bytes=2048, commit_bytes=3000)

    # e123 was only on the blank line and e200 only on the quarantined one; e7's first
    # valid line is 258, after the line that is not JSON.
    expected = (248, 2, 49)
    assert (one.accepted, one.quarantined, one.duplicates) == expected
    assert (many.accepted, many.quarantined, many.duplicates) == expected
    assert (txns.accepted, txns.quarantined, txns.duplicates) == expected
    assert rows_many == rows
    assert warehouse.fetch_all(stored, [str(committed)]) == rows
    assert [r["source_line"] for r in rows] == [
        n for n in range(1, 251) if n not in (8, 124, 201)
    ] + [258]
    assert warehouse.fetch_all(rejected, [str(chunked)]) == warehouse.fetch_all(
        rejected, [str(whole)]
    )
    assert warehouse.fetch_all(rejected, [str(committed)]) == warehouse.fetch_all(
        rejected, [str(whole)]
    )
    # Each load added its 248 events to the totals (the test's DELETEs bypass them).
    runs = warehouse.fetch_one("SELECT sum(events) AS events FROM run_rollups")
    assert runs == {"events": 3 * 248}
    assert [r["line_no"] for r in warehouse.fetch_all(rejected, [str(whole)])] == [8, 201]
    added = warehouse.fetch_all("SELECT data_file FROM ducklake_list_files('lake', 'events')")
    staged = [r for r in added if Path(r["data_file"]).name.startswith("fleetscope-")]
    assert bool(staged) == (inlined_up_to == 0)
    assert stray_files() == []


def test_a_replaced_file_is_read_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + event(2) + event(3))
    run_agent_events([str(log)])
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(event(10) + event(11))
    os.replace(replacement, log)  # rotation: a new inode at the same path
    summary = run_agent_events([str(log)])
    assert summary.accepted == 2
    assert count("SELECT count(*) FROM events") == 5


def test_it_reads_gzip_and_folders_recursively(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl.gz").write_bytes(gzip.compress(event(1) + event(2)))
    (tmp_path / "b.jsonl").write_bytes(event(3))
    (tmp_path / "notes.txt").write_bytes(b"ignored")
    summary = run_agent_events([str(tmp_path)])
    assert (summary.files, summary.accepted) == (2, 3)
    assert run_agent_events([str(tmp_path)]).accepted == 0


def test_a_position_moved_by_another_process_is_not_loaded_twice(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1, id=None) + event(2, id=None))
    found = pipeline.files.find_files([str(log)])[0]
    stale = pipeline.read_position(pipeline.SOURCE_KIND, str(log))
    run_agent_events([str(log)])  # the other process wins
    assert stale is None
    with pytest.raises(pipeline.PositionMoved):
        pipeline._ingest_from(
            found,
            str(log),
            (stale, pipeline.Position(found.file_key, 0, 0)),
            pipeline.IngestSummary(),
            None,
            (workers.CHUNK_BYTES, pipeline.COMMIT_BYTES),
        )
    assert count("SELECT count(*) FROM events") == 2
    assert count("SELECT sum(events) FROM run_rollups") == 2  # its totals rolled back too


def test_the_api_accepts_a_json_array(tmp_path: Path) -> None:
    body = orjson.dumps([orjson.loads(event(1)), {"ts": 1, "run": 7}])
    summary = ingest_body(body)
    assert (summary.accepted, summary.quarantined) == (1, 1)
    with pytest.raises(pipeline.BodyError):
        ingest_body(b"[1, 2")


def test_the_command_prints_one_json_summary(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + b"{oops\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", "agent-events", str(log), stdout=out, stderr=err)
    summary = orjson.loads(out.getvalue())
    assert (summary["accepted"], summary["quarantined"], summary["duplicates"]) == (1, 1, 0)
    row = warehouse.fetch_one("SELECT source, line_no, reason, raw FROM quarantine")
    assert row == {
        "source": str(log),
        "line_no": 2,
        "reason": "line is not valid JSON",
        "raw": "{oops",
    }


def test_the_command_fails_in_one_line_for_a_missing_path() -> None:
    with pytest.raises(CommandError, match=r"^no such file or folder: /nonexistent$"):
        call_command("ingest", "agent-events", "/nonexistent")


def test_a_gzip_file_whose_later_chunk_holds_a_line_that_is_not_json_loads(
    tmp_path: Path,
) -> None:
    # A .gz file's chunks are staged while the transaction of the one before is open: the
    # chunk with a line that is not JSON (its unterminated last line here) is staged
    # again, which must not abort that transaction.
    log = tmp_path / "a.jsonl.gz"
    log.write_bytes(gzip.compress(b"".join(event(i) for i in range(30)) + b"not json"))
    first = run_agent_events([str(log)], chunk_bytes=1 << 20)
    again = run_agent_events([str(log)], chunk_bytes=1 << 20)
    assert (first.accepted, first.quarantined, first.failed) == (30, 1, [])
    assert (again.accepted, again.quarantined) == (0, 0)
    rows = warehouse.fetch_all("SELECT line_no, raw FROM quarantine")
    assert rows == [{"line_no": 31, "raw": "not json"}]
