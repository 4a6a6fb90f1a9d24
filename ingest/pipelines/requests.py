"""Per-request records: read -> parse -> count and detect -> load, one transaction a batch.

Owns `manage.py ingest requests` (`run_requests`) and `POST /api/ingest/requests`
(`ingest_body`). At load time every prompt and completion is counted under every
configured encoding (batched `encode_ordinary_batch`), its language is detected when the
record gives none, and the provider-reported usage is kept beside the counts with a
mismatch flag. Rows go to DuckDB as Arrow tables; a request_id already stored is a
duplicate and changes nothing. A file's read position is committed with its rows.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

import orjson
import pyarrow as pa

import warehouse
from analytics.tokens.counting import count_tokens, encoding_for_model
from analytics.tokens.languages import detect_language
from analytics.tokens.vocabularies import configured_encodings
from ingest.parsers.json_lines import RAW_TEXT_LIMIT
from ingest.parsers.requests import (
    SOURCE_KIND,
    ParsedLines,
    RawLine,
    Rejected,
    RequestRecord,
    parse_array,
    parse_lines,
)
from ingest.pipelines.line_files import ingest_files
from ingest.pipelines.loading import (
    IngestSummary,
    Position,
    advance_position,
    insert_quarantine,
)
from ingest.sources import bodies

# A reported count this far from ours (under the model's own encoding) is flagged: chat
# formatting adds a few tokens per message, so small gaps are expected, large ones are not.
MISMATCH_MIN_TOKENS = 16
MISMATCH_FRACTION = 0.25

REQUEST_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("model", pa.string()),
        ("instance", pa.string()),
        ("run", pa.string()),
        ("agent", pa.string()),
        ("language", pa.string()),
        ("language_detected", pa.bool_()),
        ("prompt", pa.string()),
        ("completion", pa.string()),
        ("prompt_chars", pa.int64()),
        ("prompt_bytes", pa.int64()),
        ("completion_chars", pa.int64()),
        ("completion_bytes", pa.int64()),
        ("usage_prompt_tokens", pa.int64()),
        ("usage_completion_tokens", pa.int64()),
        ("usage_cached_tokens", pa.int64()),
        ("reference_encoding", pa.string()),
        ("usage_mismatch", pa.bool_()),
        ("ttft_ms", pa.float64()),
        ("latency_ms", pa.float64()),
        ("finish_reason", pa.string()),
        ("shape", pa.string()),
        ("attrs", pa.string()),
        ("source_kind", pa.string()),
        ("source", pa.string()),
        ("source_line", pa.int64()),
    ]
)
TOKEN_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("encoding", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
    ]
)

# Token rows first, while `requests` does not yet hold this batch: both inserts then
# select exactly the request_ids that are new.
INSERT_TOKENS_SQL = """
INSERT INTO request_tokens BY NAME
SELECT t.* FROM batch_request_tokens AS t
WHERE t.request_id NOT IN (SELECT request_id FROM requests)
"""
INSERT_REQUESTS_SQL = """
INSERT INTO requests BY NAME
SELECT b.*, now() AS ingested_at FROM batch_requests AS b
WHERE b.request_id NOT IN (SELECT request_id FROM requests)
"""


@dataclass
class PreparedBatch:
    """A parsed batch turned into Arrow tables, ready to load; `stats` times its steps."""

    requests: pa.Table
    tokens: pa.Table
    stats: dict[str, float] = field(default_factory=dict)


def _count(
    prompts: list[str | None], completions: list[str | None], encodings: Sequence[str]
) -> dict[str, tuple[list[int | None], list[int | None]]]:
    """encoding -> (prompt counts, completion counts)."""
    counts = {}
    for name in encodings:
        # One batch call per encoding for prompts and completions together.
        both = count_tokens([*prompts, *completions], name)
        counts[name] = (both[: len(prompts)], both[len(prompts) :])
    return counts


def _languages(records: Sequence[RequestRecord]) -> tuple[list[str | None], list[bool]]:
    """(language, whether it was detected) per record: given, or detected from the prompt
    (from the completion when there is no prompt, as in Batch output)."""
    languages: list[str | None] = []
    detected: list[bool] = []
    for record in records:
        if record.language is not None:
            languages.append(record.language)
            detected.append(False)
        else:
            languages.append(detect_language(record.prompt or record.completion))
            detected.append(True)
    return languages, detected


def _mismatches(
    records: Sequence[RequestRecord],
    references: list[str | None],
    counts: dict[str, tuple[list[int | None], list[int | None]]],
) -> list[bool | None]:
    """Whether the reported usage is far from our count under the model's own encoding;
    None when there is nothing to compare."""
    flags_per_record: list[bool | None] = []
    for i, (record, reference) in enumerate(zip(records, references, strict=True)):
        if reference is None or reference not in counts:
            flags_per_record.append(None)
            continue
        prompt_counts, completion_counts = counts[reference]
        flags = [
            flag
            for flag in (
                _mismatch(record.usage_prompt_tokens, prompt_counts[i]),
                _mismatch(record.usage_completion_tokens, completion_counts[i]),
            )
            if flag is not None
        ]
        flags_per_record.append(any(flags) if flags else None)
    return flags_per_record


def prepare_batch(
    records: Sequence[RequestRecord], source: str, encodings: Sequence[str]
) -> PreparedBatch:
    """Count, detect and lay out the records; a request_id repeated within the batch
    keeps its first record."""
    seen: set[str] = set()
    unique = []
    for record in records:
        if record.request_id not in seen:
            seen.add(record.request_id)
            unique.append(record)
    prompts = [r.prompt for r in unique]
    completions = [r.completion for r in unique]

    started = time.perf_counter()
    counts = _count(prompts, completions, encodings)
    counted = time.perf_counter()
    languages, detected = _languages(unique)
    detect_done = time.perf_counter()
    references = [encoding_for_model(r.model) for r in unique]
    mismatches = _mismatches(unique, references, counts)

    requests = pa.table(
        {
            "request_id": [r.request_id for r in unique],
            "ts": [r.ts for r in unique],
            "model": [r.model for r in unique],
            "instance": [r.instance for r in unique],
            "run": [r.run for r in unique],
            "agent": [r.agent for r in unique],
            "language": languages,
            "language_detected": detected,
            "prompt": prompts,
            "completion": completions,
            "prompt_chars": [_chars(t) for t in prompts],
            "prompt_bytes": [_bytes(t) for t in prompts],
            "completion_chars": [_chars(t) for t in completions],
            "completion_bytes": [_bytes(t) for t in completions],
            "usage_prompt_tokens": [r.usage_prompt_tokens for r in unique],
            "usage_completion_tokens": [r.usage_completion_tokens for r in unique],
            "usage_cached_tokens": [r.usage_cached_tokens for r in unique],
            "reference_encoding": references,
            "usage_mismatch": mismatches,
            "ttft_ms": [r.ttft_ms for r in unique],
            "latency_ms": [r.latency_ms for r in unique],
            "finish_reason": [r.finish_reason for r in unique],
            "shape": [str(r.shape) for r in unique],
            "attrs": [orjson.dumps(r.attrs).decode() if r.attrs else None for r in unique],
            "source_kind": [SOURCE_KIND] * len(unique),
            "source": [source] * len(unique),
            "source_line": [r.line_no for r in unique],
        },
        schema=REQUEST_SCHEMA,
    )
    ids = requests.column("request_id")
    tokens = pa.concat_tables(
        [
            pa.table(
                {
                    "request_id": ids,
                    "encoding": pa.array([name] * len(unique), pa.string()),
                    "prompt_tokens": pa.array(counts[name][0], pa.int64()),
                    "completion_tokens": pa.array(counts[name][1], pa.int64()),
                },
                schema=TOKEN_SCHEMA,
            )
            for name in encodings
        ]
    )
    return PreparedBatch(
        requests,
        tokens,
        {"count_seconds": counted - started, "detect_seconds": detect_done - counted},
    )


def _mismatch(reported: int | None, counted: int | None) -> bool | None:
    if reported is None or counted is None:
        return None
    return abs(reported - counted) > max(MISMATCH_MIN_TOKENS, MISMATCH_FRACTION * counted)


def _chars(text: str | None) -> int | None:
    return None if text is None else len(text)


def _bytes(text: str | None) -> int | None:
    return None if text is None else len(text.encode("utf-8", "surrogatepass"))


def rejected_table(rejected: Sequence[Rejected]) -> pa.Table:
    """Rejected lines in the shape ingest/pipelines/loading.py stores in quarantine."""
    return pa.table(
        {
            "line_no": pa.array([r.line_no for r in rejected], pa.int64()),
            "byte_offset": pa.array([r.byte_offset for r in rejected], pa.int64()),
            "reason": pa.array([r.reason for r in rejected], pa.string()),
            "raw_text": pa.array([r.raw for r in rejected], pa.string()),
        }
    )


def insert_prepared(cur: warehouse.Cursor, prepared: PreparedBatch) -> int:
    """Store a prepared batch in the caller's transaction: its request_ids not stored yet,
    with their token counts; answers how many were new. Columns `requests` has beyond
    REQUEST_SCHEMA's (an OTLP span's) may ride along in `prepared.requests`."""
    if not prepared.requests.num_rows:
        return 0
    cur.register("batch_requests", prepared.requests)
    cur.register("batch_request_tokens", prepared.tokens)
    try:
        cur.execute(INSERT_TOKENS_SQL)
        row = cur.execute(INSERT_REQUESTS_SQL).fetchone()
        return int(row[0]) if row else 0
    finally:
        cur.unregister("batch_requests")
        cur.unregister("batch_request_tokens")


def load_batch(
    parsed: ParsedLines,
    source: str,
    encodings: Sequence[str],
    positions: tuple[Position | None, Position] | None = None,
) -> IngestSummary:
    """Load one parsed batch in one transaction, with the file position it reaches
    (`positions`: the stored one it must still be, and the new one) when from a file."""
    prepared = prepare_batch(parsed.records, source, encodings)
    rejected = rejected_table(parsed.rejected)

    def load(cur: warehouse.Cursor) -> IngestSummary:
        if positions is not None:
            advance_position(cur, SOURCE_KIND, source, *positions)
        accepted = insert_prepared(cur, prepared)
        quarantined = insert_quarantine(cur, SOURCE_KIND, source, rejected)
        return IngestSummary(
            accepted=accepted,
            quarantined=quarantined,
            duplicates=len(parsed.records) - accepted,
        )

    return warehouse.write(load)


def run_requests(paths: list[str], *, progress: IO[str] | None = None) -> IngestSummary:
    """`manage.py ingest requests PATH...`: every file (*.jsonl, *.jsonl.gz, *.ndjson,
    recursively in folders) from where its last run stopped."""
    encodings = configured_encodings()

    def load(
        lines: list[RawLine], source: str, stored: Position | None, reached: Position
    ) -> IngestSummary:
        return load_batch(parse_lines(lines), source, encodings, (stored, reached))

    return ingest_files(paths, SOURCE_KIND, load, progress)


def parse_block(block: bodies.Block) -> ParsedLines:
    """A block of a JSONL body: its lines numbered as in the body."""
    lines, offset = [], block.start_offset
    pieces = block.data.split(b"\n")
    pieces.pop()  # a block ends with a newline
    for line_no, raw in enumerate(pieces, start=block.first_line_no):
        lines.append(RawLine(line_no, offset, raw.removesuffix(b"\r")))
        offset += len(raw) + 1
    return parse_lines(lines)


def _refused(parsed: ParsedLines, allowed: Callable[[RequestRecord], str | None]) -> ParsedLines:
    """Records `allowed` refuses (it names why) moved to the rejected, with their fields."""
    kept: list[RequestRecord] = []
    rejected = list(parsed.rejected)
    for record in parsed.records:
        reason = allowed(record)
        if reason is None:
            kept.append(record)
            continue
        fields = {k: v for k, v in dataclasses.asdict(record).items() if v is not None}
        raw = orjson.dumps(fields, default=str)[:RAW_TEXT_LIMIT].decode("utf-8", "replace")
        rejected.append(Rejected(record.line_no or 0, None, reason, raw))
    return ParsedLines(kept, rejected)


def ingest_body(
    body: bytes | Iterable[bytes],
    source: str,
    allowed: Callable[[RequestRecord], str | None] | None = None,
) -> dict[str, int]:
    """`POST /api/ingest/requests`: the body (bytes, or its chunks as they arrive), JSON
    Lines or a JSON array of records, parsed and loaded a block at a time
    (bodies.BLOCK_BYTES), one transaction a block: memory follows the block, not the
    body. A request_id stored already is a duplicate, so sending a body again (whole, or
    split otherwise) stores nothing twice. A JSON array that breaks off is a BodyError,
    the blocks before it loaded. With `allowed`, a record it refuses is quarantined with
    the reason it gives."""
    request = bodies.Body([body] if isinstance(body, bytes | bytearray) else body)
    encodings = configured_encodings()
    summary = IngestSummary()
    if request.is_array:
        parsed: Iterator[ParsedLines] = (
            parse_array([e.value for e in batch], first_index=batch[0].index)
            for batch in request.element_batches()
        )
    else:
        parsed = (parse_block(block) for block in request.blocks())
    for batch in parsed:
        if allowed is not None:
            batch = _refused(batch, allowed)
        summary.add(load_batch(batch, source, encodings))
    return {
        "accepted": summary.accepted,
        "quarantined": summary.quarantined,
        "duplicates": summary.duplicates,
    }
