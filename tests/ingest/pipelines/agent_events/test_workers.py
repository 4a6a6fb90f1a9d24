"""The workers: a long file cut in chunks of even size, parsed on worker threads past half
a chunk, and the load's stamp found on the calling thread."""

import threading
from pathlib import Path

import pytest

from ingest.pipelines.agent_events import dedup, run_agent_events, staging, workers
from ingest.sources import files
from tests.ingest.pipelines.agent_events import event

pytestmark = pytest.mark.usefixtures("lake")


@pytest.mark.parametrize(
    ("parse_ahead", "chunk_bytes", "chunks"),
    [
        (2, 30_000, 8),
        (2, 50_000, 6),
        (2, 200_000, 2),
        (2, 13_000, 18),
        (3, 30_000, 9),
        (3, 200_000, 3),
        (3, 13_000, 18),
    ],
)
def test_a_long_file_is_cut_in_chunks_of_even_size_a_multiple_of_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parse_ahead: int, chunk_bytes: int, chunks: int
) -> None:
    monkeypatch.setattr(workers, "PARSE_AHEAD", parse_ahead)
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"".join(event(i, tool="x" * (i % 50)) for i in range(2000)))  # 219 kB
    remaining = log.stat().st_size
    size = workers.even_chunk_bytes(remaining, chunk_bytes)
    assert size <= chunk_bytes
    with files.chunk_refs(files.describe(log), 0, size) as refs:
        cuts = [ref.end_offset - ref.start_offset for ref in refs]
    assert len(cuts) == chunks
    assert len(cuts) % workers.PARSE_AHEAD == 0
    assert max(cuts) - min(cuts) < 300  # even, within a line: no short last chunk


@pytest.mark.parametrize(("chunk_bytes", "staged"), [(8_000, 1), (7_000, 2), (4_000, 2)])
def test_a_file_of_more_than_half_a_chunk_is_parsed_by_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int, staged: int
) -> None:
    # Up to half a chunk, one chunk on the calling thread; past it, PARSE_AHEAD chunks
    # (or a multiple) on the workers, so a file just over half a chunk is not parsed
    # by one thread alone.
    monkeypatch.setattr(workers, "PARSE_AHEAD", 2)
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"".join(event(i) for i in range(50)))
    assert 3_500 < log.stat().st_size <= 4_000
    threads: list[str] = []
    stage = workers._stage

    def spy(*args: object) -> staging.StagedChunk:
        threads.append(threading.current_thread().name)
        return stage(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(workers, "_stage", spy)
    summary = run_agent_events([str(log)], chunk_bytes=chunk_bytes)
    assert summary.accepted == 50
    assert len(threads) == staged
    assert all(name.startswith("parse-agent-events") for name in threads) == (staged > 1)


def test_the_stamp_is_found_on_the_calling_thread_even_with_fewer_chunks_than_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers wait for the load's stamp; the calling thread finds it once they all
    # have a chunk, or after the last chunk when a long line left fewer chunks than
    # workers (here two chunks for three: the second line spans two cuts).
    monkeypatch.setattr(workers, "PARSE_AHEAD", 3)
    log = tmp_path / "a.jsonl"
    log.write_bytes(event(1) + event(2, task="x" * 2_500))
    found: list[str] = []
    find_stamp = dedup.Load.find_stamp

    def spy(load: dedup.Load) -> None:
        found.append(threading.current_thread().name)
        find_stamp(load)

    monkeypatch.setattr(dedup.Load, "find_stamp", spy)
    result: list[object] = []
    caller = threading.Thread(
        target=lambda: result.append(run_agent_events([str(log)], chunk_bytes=1_000)),
        name="caller",
        daemon=True,
    )
    caller.start()
    caller.join(timeout=60)
    assert not caller.is_alive(), "the workers waited for a stamp nobody looked for"
    [summary] = result
    assert summary.accepted == 2  # type: ignore[attr-defined]
    assert set(found) == {"caller"}
