"""`POST /api/ingest/requests`: per-request records as JSONL or a JSON array."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from ingest.pipelines.requests import ingest_body

router = Router()

MAX_BODY_BYTES = 256 << 20
READ_CHUNK_BYTES = 1 << 20


class IngestOut(Schema):
    accepted: int
    quarantined: int
    duplicates: int


class TooLargeOut(Schema):
    detail: str


def _read_body(request: HttpRequest) -> bytes | None:
    """The body, read as a stream (Django's in-memory body cap is sized for forms, not
    batches of records); None when it exceeds MAX_BODY_BYTES."""
    chunks, size = [], 0
    while chunk := request.read(READ_CHUNK_BYTES):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/requests", response={200: IngestOut, 413: TooLargeOut})
def ingest_requests(request: HttpRequest) -> Any:
    """Body: JSONL (`application/x-ndjson`) or a JSON array of records (requests.md).
    Counted and loaded in one transaction; bad records are quarantined, a request_id
    already stored is a duplicate."""
    body = _read_body(request)
    if body is None:
        return Status(413, {"detail": f"body larger than {MAX_BODY_BYTES >> 20} MiB; split it"})
    return Status(200, ingest_body(body, f"api:{request.user.get_username()}"))
