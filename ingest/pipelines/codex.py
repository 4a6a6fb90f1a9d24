"""Codex rollouts -> events, exactly once, resumable, tail-able.

Owns each rollout's read position and its parser state (session id, current model,
fork flag, last cumulative usage), saved together in the transaction that loads the
lines before them, so a rollout that grows is read on from where it stopped with the
run and model its earlier lines named. Results whose call was loaded earlier update that
call. Token counts of forked or child rollouts (which replay their parent's history) are
kept once across all rollouts; a rollout's parent is read first when both are in the
same sessions folder (rollout file names start with their creation time). The same
lines' session turns and label are stored in that transaction too
(ingest/pipelines/session_loading.py).
"""

from __future__ import annotations

from typing import IO

import orjson
import pyarrow as pa

import warehouse
from ingest.parsers import codex as parser
from ingest.parsers.tool_calls import ToolUse, resolve_results
from ingest.pipelines import session_loading, transcript_files
from ingest.pipelines.adapter_loading import (
    Dedup,
    insert_new,
    read_states,
    save_state,
    stored_events,
    update_tool_calls,
)
from ingest.pipelines.claude_code import rejected_tables
from ingest.pipelines.loading import IngestSummary, advance_positions, insert_quarantine
from ingest.sources.files import FailedFile

SOURCE_KIND = parser.SOURCE_KIND


def run_codex(
    paths: list[str], *, progress: IO[str] | None = None, batch_bytes: int | None = None
) -> IngestSummary:
    """Ingest Codex rollouts: a sessions folder, day folders or rollout files."""
    failed: list[FailedFile] = []  # what the folders hold that cannot be read
    logs = transcript_files.find_logs(paths, "Codex", failed)
    # States reached by batches parsed in this run, by (source, file key, offset): the
    # next batch of a file starts from one before the writer thread has saved it.
    known: dict[tuple[str, str, int], parser.RolloutState] = {}
    recognition = transcript_files.Recognition("Codex")

    def load(batch: list[transcript_files.FileChunk]) -> transcript_files.Commit:
        return load_batch(batch, known, recognition)

    summary = transcript_files.ingest_logs(
        logs, SOURCE_KIND, load, progress, batch_bytes or transcript_files.BATCH_BYTES, failed
    )
    return recognition.check(summary, paths)


def load_batch(
    batch: list[transcript_files.FileChunk],
    known: dict[tuple[str, str, int], parser.RolloutState],
    recognition: transcript_files.Recognition | None = None,
) -> transcript_files.Commit:
    wanted = [
        (c.source, c.reached.file_key, c.start_offset)
        for c in batch
        if c.start_offset and (c.source, c.reached.file_key, c.start_offset) not in known
    ]
    for key, saved in read_states(SOURCE_KIND, wanted).items():
        known[key] = parser.RolloutState.from_dict(saved)
    parsed = parser.ParsedRollouts()
    reached: dict[str, tuple[str, int, parser.RolloutState]] = {}
    for chunk in batch:
        before = known.get((chunk.source, chunk.reached.file_key, chunk.start_offset))
        # A copy: the state object of the start offset may be needed again on a retry.
        state = parser.RolloutState.from_dict(before.as_dict()) if before else parser.RolloutState()
        parser.parse_chunk(
            chunk.data,
            state,
            source=chunk.source,
            first_line_no=chunk.first_line_no,
            base_offset=chunk.start_offset,
            into=parsed,
        )
        known[(chunk.source, chunk.reached.file_key, chunk.reached.byte_offset)] = state
        reached[chunk.source] = (chunk.reached.file_key, chunk.reached.byte_offset, state)
    if recognition is not None:
        # A rollout names its session on its first line.
        recognition.note(batch, {source for source, (_, _, s) in reached.items() if s.run})
    rejected = rejected_tables(parsed.rejected)

    def load(cur: warehouse.Cursor) -> IngestSummary:
        advance_positions(cur, SOURCE_KIND, transcript_files.moves(batch))
        for source, (file_key, offset, state) in reached.items():
            save_state(cur, SOURCE_KIND, source, file_key, offset, state.as_dict())
        return load_parsed(cur, parsed, rejected)

    def commit() -> IngestSummary:
        summary = warehouse.write(load)
        summary.bytes = sum(chunk.size for chunk in batch)
        return summary

    return commit


def load_parsed(
    cur: warehouse.Cursor, parsed: parser.ParsedRollouts, rejected: dict[str, pa.Table]
) -> IngestSummary:
    """Settle results against stored calls, then insert; re-runnable."""
    missing = {r.tool_use_id for r in parsed.results} - parsed.uses.keys()
    uses = dict(parsed.uses)
    for call_id, event in stored_events(cur, SOURCE_KIND, missing).items():
        if event["event"] == "tool_call":
            attrs = orjson.loads(event["attrs"]) if event["attrs"] else {}
            uses[call_id] = ToolUse(
                call_id,
                event["run"],
                event["agent"],
                float(event["ts_ms"]),
                event["tool"],
                git_commit=bool(attrs.get("git_commit")),
            )
    resolution = resolve_results(parsed.rows, parsed.results, uses)
    shared = pa.concat_tables([parsed.rows.table(), resolution.commits.table()])
    own = parsed.run_counts.table()
    # A rollout's own counts first: a fork read in the same batch then finds its
    # parent's counts already stored.
    accepted = insert_new(cur, own, source_kind=SOURCE_KIND, source="", dedup=Dedup.RUN)
    accepted += insert_new(cur, shared, source_kind=SOURCE_KIND, source="", dedup=Dedup.SOURCE_KIND)
    update_tool_calls(cur, SOURCE_KIND, resolution.stored_outcomes)
    session_loading.load_session(cur, parsed.session, SOURCE_KIND)  # turns, labels: replay
    quarantined = sum(
        insert_quarantine(cur, SOURCE_KIND, source, table) for source, table in rejected.items()
    )
    return IngestSummary(
        accepted=accepted,
        quarantined=quarantined,
        duplicates=shared.num_rows + own.num_rows - accepted,
    )
