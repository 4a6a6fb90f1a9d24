"""The threads that read, parse and stage a long file's chunks while the calling thread
loads the one before: how a file is cut into chunks, and how many are worked on at once.

Owns the chunk size, the pool of PARSE_AHEAD workers and the bounds on chunks in flight
(which bound memory), and the numbering of each chunk's lines once the chunk before it is
split. What staging a chunk is belongs to staging.py; nothing here touches the lake but
the load's stamp, found on the calling thread.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pyarrow.compute as pc

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines.agent_events.dedup import Load
from ingest.pipelines.agent_events.staging import StagedChunk, stage_lines
from ingest.pipelines.loading import Position
from ingest.sources import files

# Each chunk is parsed whole in memory (its bytes, its lines, DuckDB's rows while they are
# written), and the next PARSE_AHEAD are parsed while one loads. A file with more than half
# a chunk to read is cut into a multiple of PARSE_AHEAD chunks (even_chunk_bytes). Every
# chunk has statements, a file added to the lake and catalog rows of its own, so fewer,
# larger chunks use less CPU, at the same peak (under 1 GiB): 4% less wall time than
# 28 MB chunks on the bench file (bench/agent_events.md; python -m bench ingest).
CHUNK_BYTES = 64 * 1024 * 1024
# Chunks parsed at once while one loads. Two keep the 2 cores busy, and three were no
# faster: 2.12 s against 2.32 s (bench/agent_events.md; python -m bench ingest).
PARSE_AHEAD = 2
# Staged chunks (small: their rows are in Parquet files) wait for the loading thread up
# to this many at once, so the workers go on while it commits a transaction.
STAGED_AHEAD = 2


def staged_chunks(
    log: files.LogFile, position: Position, chunk_bytes: int, load: Load, folder: Path
) -> Generator[tuple[int, StagedChunk], None, None]:
    """Each chunk from `position` on, read, parsed and staged, with the offset after it.
    When more than half a chunk is left to read, worker threads read, parse and stage the
    next PARSE_AHEAD at once while the caller loads this one; otherwise (and for a .gz
    file, whose size to come is not known) the chunks are staged one after another, each
    when the caller asks for it. DuckDB, Arrow and NumPy release the GIL, so the workers share the
    cores. Meanwhile DuckDB runs each statement on one thread: its statements on a chunk
    gain little from more, and the bench file takes a third less CPU that way
    (bench/agent_events.md). Chunks being parsed (PARSE_AHEAD) and staged ones waiting
    (STAGED_AHEAD) are bounded, which bounds memory."""
    first_line = Future[int]()
    first_line.set_result(position.line_no)
    remaining = files.end_offset(log) - position.byte_offset
    if remaining <= chunk_bytes // 2:
        load.find_stamp()
        # Staged on a thread of its own all the same: the caller asks for the next chunk
        # inside its transaction, and a statement that fails on the transaction's own
        # connection (staging retries a chunk holding a line that is not JSON) would
        # abort it.
        with (
            files.chunk_refs(log, position.byte_offset, chunk_bytes) as refs,
            ThreadPoolExecutor(1, thread_name_prefix="stage-agent-events") as stager,
        ):
            for ref in refs:
                after = Future[int]()
                staged = stager.submit(_stage, ref, first_line, after, load, folder, None)
                yield ref.end_offset, staged.result()
                first_line = after
        return
    with (
        files.chunk_refs(
            log, position.byte_offset, even_chunk_bytes(remaining, chunk_bytes)
        ) as refs,
        warehouse.single_threaded(),
    ):
        pending: deque[tuple[int, Future[StagedChunk]]] = deque()
        pool = ThreadPoolExecutor(PARSE_AHEAD, thread_name_prefix="parse-agent-events")
        buffers = threading.local()  # each worker's, freed with this generator
        try:
            lines_before = first_line
            for ref in refs:
                lines_after = Future[int]()
                staged = pool.submit(_stage, ref, lines_before, lines_after, load, folder, buffers)
                pending.append((ref.end_offset, staged))
                lines_before = lines_after
                del ref  # a .gz chunk's bytes go once parsed
                if len(pending) == PARSE_AHEAD:
                    load.find_stamp()  # while every worker reads a chunk
                if len(pending) > PARSE_AHEAD + STAGED_AHEAD:
                    end_offset, oldest = pending.popleft()
                    yield end_offset, oldest.result()
            load.find_stamp()  # found above, unless there were fewer chunks than workers
            while pending:
                end_offset, oldest = pending.popleft()
                yield end_offset, oldest.result()
        finally:
            # Chunks that will not be loaded now (an error, or the caller stopped): the
            # workers finish (the file is still open), and their staged files go.
            pool.shutdown(wait=True, cancel_futures=True)
            for _, future in pending:
                if not future.cancelled() and future.exception() is None:
                    future.result().discard()


def even_chunk_bytes(remaining: int, chunk_bytes: int) -> int:
    """The size, at most `chunk_bytes`, that cuts `remaining` bytes into a multiple of
    PARSE_AHEAD chunks of about the same size: the workers then finish their last chunks
    together, where a short last chunk left the others idle while one parsed a whole chunk
    (the bench file's 250 MB: four chunks of 62 MB for two workers, not three of 64 MiB
    and one of 48 MB)."""
    count = -(-remaining // chunk_bytes)
    count = -(-count // PARSE_AHEAD) * PARSE_AHEAD
    return -(-remaining // count)


def _stage(
    ref: files.ChunkRef,
    lines_before: Future[int],
    lines_after: Future[int],
    load: Load,
    folder: Path,
    buffers: threading.local | None,
) -> StagedChunk:
    """Read, parse and stage one chunk. Its lines are numbered once the lines before it
    are counted (`lines_before`: the previous chunk's `lines_after`, set as soon as that
    chunk is split into lines), so chunks can be parsed side by side. With `buffers`,
    each thread reads its chunks into a buffer of its own, used again (nothing staged
    refers to it)."""
    try:
        if buffers is None:
            data: bytes | memoryview = ref.read()
        else:
            size = ref.end_offset - ref.start_offset
            if len(getattr(buffers, "data", b"")) < size:
                buffers.data = bytearray(size + size // 16)  # room for longer cuts
            data = ref.read_into(buffers.data)
        lines = parser.split_lines(data, first_line_no=1, base_offset=ref.start_offset)
        line_no = lines_before.result()
        lines_after.set_result(line_no + lines.num_rows)
    except BaseException as exc:
        if not lines_after.done():
            lines_after.set_exception(exc)
        raise
    if line_no:
        index = lines.schema.get_field_index("line_no")
        lines = lines.set_column(index, "line_no", pc.add(lines.column(index), line_no))
    return stage_lines(lines, load, folder, size=len(data))
