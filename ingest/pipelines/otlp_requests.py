"""Loading the per-request records of spooled OTLP requests (vLLM's `llm_request` spans,
ingest/parsers/otlp_vllm.py) into `requests`, in the OTLP loader's transaction.

Owns turning the spooled records into the requests pipeline's prepared batch (token
counts and language detection as ingest/pipelines/requests.py does them, in bulk), the
columns only a span has (queue, prefill and decode times; trace, span and parent span
ids), and their provenance (`source_kind` `otlp`, `source` `otlp/traces/<sender>`, shape
`otlp_span`). Each request_id is stored once, whether it came again in a retried export
or also through POST /api/ingest/requests. Must not decode or map OTLP, nor open its
own transaction (ingest/pipelines/otlp.py's `_store` calls `store` with its cursor).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

import warehouse
from analytics.tokens.vocabularies import configured_encodings
from ingest.parsers.requests import RequestRecord, Shape
from ingest.pipelines.otlp_spool import Spooled
from ingest.pipelines.requests import PreparedBatch, insert_prepared, prepare_batch

SOURCE_KIND = "otlp"
SHAPE = "otlp_span"
# The span's own columns, beside the requests pipeline's REQUEST_SCHEMA.
SPAN_COLUMNS = pa.schema(
    [
        ("queue_ms", pa.float64()),
        ("prefill_ms", pa.float64()),
        ("decode_ms", pa.float64()),
        ("trace_id", pa.string()),
        ("span_id", pa.string()),
        ("parent_span_id", pa.string()),
    ]
)


def _record(row: dict[str, Any]) -> RequestRecord:
    return RequestRecord(
        request_id=row["request_id"],
        ts=datetime.fromisoformat(row["ts"]),
        shape=Shape.RECORD,  # replaced by SHAPE in the table
        model=row.get("model"),
        instance=row.get("instance"),
        usage_prompt_tokens=row.get("usage_prompt_tokens"),
        usage_completion_tokens=row.get("usage_completion_tokens"),
        usage_cached_tokens=row.get("usage_cached_tokens"),
        ttft_ms=row.get("ttft_ms"),
        latency_ms=row.get("latency_ms"),
        finish_reason=row.get("finish_reason"),
        attrs=row.get("attrs"),
    )


def prepare(batches: Sequence[Spooled], encodings: Sequence[str]) -> PreparedBatch:
    """The spooled records as one prepared batch with the span columns; a request_id
    repeated across the files keeps its first record, as prepare_batch does."""
    first: dict[str, tuple[dict[str, Any], str]] = {}
    records = []
    for batch in batches:
        for row in batch.requests:
            records.append(_record(row))
            first.setdefault(row["request_id"], (row, batch.source))
    prepared = prepare_batch(records, SOURCE_KIND, encodings)
    table = prepared.requests
    ids = table.column("request_id").to_pylist()
    kept = [first[request_id] for request_id in ids]
    table = table.set_column(
        table.schema.get_field_index("source"),
        "source",
        pa.array([source for _, source in kept], pa.string()),
    )
    table = table.set_column(
        table.schema.get_field_index("source_kind"),
        "source_kind",
        pa.array([SOURCE_KIND] * len(ids), pa.string()),
    )
    table = table.set_column(
        table.schema.get_field_index("shape"), "shape", pa.array([SHAPE] * len(ids), pa.string())
    )
    for field in SPAN_COLUMNS:
        table = table.append_column(
            field, pa.array([row.get(field.name) for row, _ in kept], field.type)
        )
    return PreparedBatch(table, prepared.tokens, prepared.stats)


def store(cur: warehouse.Cursor, batches: Sequence[Spooled]) -> int:
    """Store the batches' per-request records in the caller's transaction; answers how
    many were new."""
    if not any(batch.requests for batch in batches):
        return 0
    return insert_prepared(cur, prepare(batches, configured_encodings()))
