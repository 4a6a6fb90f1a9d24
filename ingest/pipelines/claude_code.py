"""Claude Code transcripts -> events, exactly once, resumable, tail-able.

Owns the read position of every transcript file (ingest/pipelines/line_files.py reads
whole lines from it; each chunk is loaded in one transaction with the position after
it). What crosses chunks is settled inside that transaction against stored events: a
result whose call was loaded earlier updates that call, a response seen again with more
output tokens raises the stored count, and a subagent's final usage (reported by its
parent's Task result) corrects the subagent's own last response. Events are kept once
by id across every Claude Code file, so a resumed session that copies its parent's
lines adds nothing twice. A sidechain (a `/btw` side question, a subagent) that replays a
response of its session's main agent, the same message.id under a new requestId, is that
response once: the main agent's is kept, whichever file or pass brought either first
(a replay read first is deleted when its parent arrives); a sidechain's own responses,
with message ids the main agent never had, count. A response whose requestId Claude
Code's OpenTelemetry already brought (an `api_request` of the same session) is not
stored again (ingest/pipelines/otlp_calls.py). The same lines' session turns and label
are stored in that transaction too (ingest/pipelines/session_loading.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import IO

import orjson
import pyarrow as pa

import warehouse
from ingest.parsers import claude_code as parser
from ingest.parsers import claude_code_subagents as subagents
from ingest.parsers.tool_calls import ToolUse, resolve_results
from ingest.pipelines import otlp_calls, run_rollups, session_loading, transcript_files
from ingest.pipelines.adapter_loading import (
    Dedup,
    insert_new,
    stored_events,
    update_llm_outputs,
    update_tool_calls,
)
from ingest.pipelines.loading import IngestSummary, advance_positions, insert_quarantine
from ingest.sources.files import FailedFile

SOURCE_KIND = parser.SOURCE_KIND

# A subagent's last response as its own transcript logged it can carry the mid-stream
# output count; the Task result in the parent's file reports the final usage of that
# same response (same input and cache figures). When both are in one batch the parser
# settles it; otherwise (either file may be read first, or later) this runs for the runs
# left unsettled.
CORRECT_SUBAGENT_OUTPUTS_SQL = """
UPDATE events SET output_tokens = f.output_tokens
FROM (
    SELECT run, agent,
           CAST(json_extract_string(attrs, '$.final_usage.input_tokens') AS BIGINT)
               AS input_tokens,
           CAST(json_extract_string(attrs, '$.final_usage.cached_input_tokens') AS BIGINT)
               AS cached_input_tokens,
           CAST(json_extract_string(attrs, '$.final_usage.cache_write_tokens') AS BIGINT)
               AS cache_write_tokens,
           CAST(json_extract_string(attrs, '$.final_usage.output_tokens') AS BIGINT)
               AS output_tokens
    FROM events
    WHERE source_kind = $source_kind AND event = 'stop'
      AND run IN (SELECT run FROM touched_runs)
) AS f
WHERE events.source_kind = $source_kind AND events.event = 'llm_call'
  AND events.run = f.run AND events.agent = f.agent
  AND events.input_tokens = f.input_tokens
  AND events.cached_input_tokens = f.cached_input_tokens
  AND events.cache_write_tokens = f.cache_write_tokens
  AND events.output_tokens < f.output_tokens
"""
CORRECTED_OUTPUTS_SCOPE = (
    "source_kind = $source_kind AND event = 'llm_call' AND run IN (SELECT run FROM touched_runs)"
)

# `batch_responses(run, message_id, main)`: the responses of a batch's calls, by whether
# the main agent or a sidechain made the call; those a stored call of the other side
# matches. A sidechain's so matched replays a stored parent; the main agent's is the
# parent of a stored replay.
STORED_COUNTERPARTS_SQL = """
SELECT DISTINCT b.run, b.message_id, b.main
FROM batch_responses AS b
JOIN events AS e ON e.run = b.run AND e.message_id = b.message_id
WHERE e.source_kind = $source_kind AND e.event = 'llm_call'
  AND (e.agent = $main) <> b.main
"""

# `replayed_responses(run, message_id)`: stored sidechain replays whose parent arrived.
DELETE_REPLAYS_SQL = """
DELETE FROM events
WHERE source_kind = $source_kind AND event = 'llm_call' AND agent <> $main
  AND EXISTS (
    SELECT 1 FROM replayed_responses AS r
    WHERE r.run = events.run AND r.message_id = events.message_id)
"""


def run_claude_code(
    paths: list[str], *, progress: IO[str] | None = None, batch_bytes: int | None = None
) -> IngestSummary:
    """Ingest Claude Code transcripts: a projects folder, session folders or files."""
    failed: list[FailedFile] = []  # what the folders hold that cannot be read
    logs = transcript_files.find_logs(paths, "Claude Code", failed)
    recognition = transcript_files.Recognition("Claude Code")

    def load(batch: list[transcript_files.FileChunk]) -> transcript_files.Commit:
        return load_batch(batch, recognition)

    summary = transcript_files.ingest_logs(
        logs, SOURCE_KIND, load, progress, batch_bytes or transcript_files.BATCH_BYTES, failed
    )
    return recognition.check(summary, paths)


def rejected_tables(rejected: dict[str, list[tuple[int, int, str, str]]]) -> dict[str, pa.Table]:
    """Rejected lines per file, in the shape ingest/pipelines/loading.py quarantines."""
    return {
        source: pa.table(
            {
                "line_no": pa.array([r[0] for r in rows], pa.int64()),
                "byte_offset": pa.array([r[1] for r in rows], pa.int64()),
                "reason": pa.array([r[2] for r in rows], pa.string()),
                "raw_text": pa.array([r[3] for r in rows], pa.string()),
            }
        )
        for source, rows in rejected.items()
    }


def _iso(ts_ms: float) -> str:
    return datetime.fromtimestamp(ts_ms / 1000.0, UTC).isoformat()


def load_batch(
    batch: list[transcript_files.FileChunk],
    recognition: transcript_files.Recognition | None = None,
) -> transcript_files.Commit:
    """Parse a batch of file chunks together; the step returned loads it with every
    file's position in one transaction."""
    parsed = parser.ParsedTranscript()
    for chunk in batch:
        parser.parse_chunk(
            chunk.data,
            source=chunk.source,
            first_line_no=chunk.first_line_no,
            base_offset=chunk.start_offset,
            into=parsed,
        )
    rejected = rejected_tables(parsed.rejected)
    if recognition is not None:
        recognition.note(batch, parsed.recognized)

    def load(cur: warehouse.Cursor) -> IngestSummary:
        advance_positions(cur, SOURCE_KIND, transcript_files.moves(batch))
        return load_parsed(cur, parsed, rejected)

    def commit() -> IngestSummary:
        summary = warehouse.write(load)
        summary.bytes = sum(chunk.size for chunk in batch)
        return summary

    return commit


def load_parsed(
    cur: warehouse.Cursor,
    parsed: parser.ParsedTranscript,
    rejected: dict[str, pa.Table],
) -> IngestSummary:
    """Settle what crosses chunks against stored events, then insert; re-runnable."""
    missing_uses = {r.tool_use_id for r in parsed.results} - parsed.uses.keys()
    missing_calls = {link.tool_use_id for link in parsed.links} - parsed.subagent_calls.keys()
    # Responses seen before this batch: only one continued from an earlier chunk can
    # carry a larger output count (a copied session's are equal, and skipped on insert).
    stored = stored_events(
        cur, SOURCE_KIND, [*missing_uses, *missing_calls, *parsed.continued_calls]
    )

    uses = dict(parsed.uses)
    calls = dict(parsed.subagent_calls)
    for use_id in missing_uses | missing_calls:
        event = stored.get(use_id)
        if event is None or event["event"] != "tool_call":
            continue
        attrs = orjson.loads(event["attrs"]) if event["attrs"] else {}
        uses[use_id] = ToolUse(
            use_id,
            event["run"],
            event["agent"],
            float(event["ts_ms"]),
            event["tool"],
            git_commit=bool(attrs.get("git_commit")),
        )
        if event["tool"] in parser.SUBAGENT_TOOLS:
            calls[use_id] = subagents.SubagentCall(
                _iso(float(event["ts_ms"])), attrs.get("subagent_type"), attrs.get("description")
            )
    resolution = resolve_results(parsed.rows, parsed.results, uses)
    replays, parents = _replays(cur, parsed)
    llm_rows = {call: row for call, row in parsed.llm_rows.items() if row not in replays}
    unsettled_runs = subagents.correct_final_outputs(parsed.rows, llm_rows, parsed.final_usages)
    outputs = []
    for call_id in parsed.continued_calls:
        row = parsed.llm_rows[call_id]
        if row in replays:
            continue
        known = stored.get(call_id)
        output = parsed.rows.get(row, "output_tokens")
        if known is not None and output is not None and output > (known["output_tokens"] or 0):
            outputs.append((call_id, int(output)))

    rows = parsed.rows.table()
    if replays:
        rows = rows.filter(pa.array([row not in replays for row in range(rows.num_rows)]))
    batch = pa.concat_tables(
        [rows, resolution.commits.table(), subagents.spawn_rows(parsed.links, calls).table()]
    )
    # A call Claude Code's OpenTelemetry already stored (by run + request id) counts once.
    offered = batch.num_rows
    batch = otlp_calls.new_transcript_calls(cur, batch)
    accepted = insert_new(
        cur, batch, source_kind=SOURCE_KIND, source=parsed.source or "", dedup=Dedup.SOURCE_KIND
    )
    update_tool_calls(cur, SOURCE_KIND, resolution.stored_outcomes)
    update_llm_outputs(cur, SOURCE_KIND, outputs)
    _correct_subagent_outputs(cur, unsettled_runs)
    _delete_replays(cur, parents)
    session_loading.load_session(cur, parsed.session, SOURCE_KIND)  # turns, labels: replay
    quarantined = sum(
        insert_quarantine(cur, SOURCE_KIND, source, table) for source, table in rejected.items()
    )
    return IngestSummary(
        accepted=accepted,
        quarantined=quarantined,
        duplicates=offered + len(replays) - accepted,
    )


def _replays(
    cur: warehouse.Cursor, parsed: parser.ParsedTranscript
) -> tuple[set[int], set[tuple[str, str]]]:
    """The rows of this batch's sidechain calls that replay a response of their session's
    main agent (in this batch or stored), and the (run, message_id) of the batch's main
    responses that a stored sidechain call replays (deleted once they are stored)."""
    main: set[tuple[str, str]] = set()
    sidechain: dict[tuple[str, str], list[int]] = {}
    for row in parsed.llm_rows.values():
        message_id = parsed.rows.get(row, "message_id")
        if message_id is None:
            continue
        key = (parsed.rows.get(row, "run"), message_id)
        if parsed.rows.get(row, "agent") == subagents.MAIN_AGENT:
            main.add(key)
        else:
            sidechain.setdefault(key, []).append(row)
    replayed = main & sidechain.keys()
    unmatched = sidechain.keys() - replayed
    keys = [(run, message, True) for run, message in main]
    keys += [(run, message, False) for run, message in unmatched]
    parents: set[tuple[str, str]] = set()
    if keys:
        cur.register(
            "batch_responses",
            pa.table(
                {
                    "run": pa.array([k[0] for k in keys], pa.string()),
                    "message_id": pa.array([k[1] for k in keys], pa.string()),
                    "main": pa.array([k[2] for k in keys], pa.bool_()),
                }
            ),
        )
        try:
            found = cur.execute(
                STORED_COUNTERPARTS_SQL, {"source_kind": SOURCE_KIND, "main": subagents.MAIN_AGENT}
            ).fetchall()
        finally:
            cur.unregister("batch_responses")
        for run, message, is_main in found:
            (parents if is_main else replayed).add((run, message))
    replays = {row for key in replayed for row in sidechain.get(key, [])}
    return replays, parents


def _delete_replays(cur: warehouse.Cursor, parents: set[tuple[str, str]]) -> None:
    if not parents:
        return
    table = pa.table(
        {
            "run": pa.array([p[0] for p in parents], pa.string()),
            "message_id": pa.array([p[1] for p in parents], pa.string()),
        }
    )
    cur.register("replayed_responses", table)
    try:
        run_rollups.delete_events(
            cur,
            DELETE_REPLAYS_SQL,
            {"source_kind": SOURCE_KIND, "main": subagents.MAIN_AGENT},
            {run for run, _ in parents},
        )
    finally:
        cur.unregister("replayed_responses")


def _correct_subagent_outputs(cur: warehouse.Cursor, runs: set[str]) -> None:
    if not runs:
        return
    cur.register("touched_runs", pa.table({"run": pa.array(sorted(runs), pa.string())}))
    try:
        run_rollups.update_events(
            cur,
            CORRECT_SUBAGENT_OUTPUTS_SQL,
            CORRECTED_OUTPUTS_SCOPE,
            {"source_kind": SOURCE_KIND},
        )
    finally:
        cur.unregister("touched_runs")
