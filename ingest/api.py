"""The ingest app's router, `/api/ingest/...`: agent events and per-request records over
HTTP, through the same pipelines as `manage.py ingest agent-events` and `ingest requests`.

Owns reading the request body and mapping the pipelines' answers to HTTP; parsing and
loading stay in ingest.pipelines.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from ingest.pipelines.agent_events import BodyError
from ingest.pipelines.agent_events import ingest_body as ingest_agent_events
from ingest.pipelines.requests import ingest_body as ingest_request_records
from lib.errors import ParameterError

router = Router()

MAX_BODY_BYTES = 256 * 1024 * 1024
READ_CHUNK_BYTES = 1024 * 1024


class IngestOut(Schema):
    accepted: int
    quarantined: int
    duplicates: int


class TooLargeOut(Schema):
    detail: str


@router.post(
    "/agent-events",
    response=IngestOut,
    summary="Ingest agent events",
    description="Body: JSON Lines (`application/x-ndjson`) or a JSON array of events "
    "(docs/agent-events.md). Bad lines are quarantined, not rejected; events "
    "re-sent with the same run + id are counted as duplicates.",
    openapi_extra={
        "requestBody": {
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
            },
            "required": True,
        }
    },
)
def agent_events(request: HttpRequest) -> Any:
    body = request.body
    if len(body) > MAX_BODY_BYTES:
        raise ParameterError(f"body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB: split it")
    user = getattr(request.user, "username", "anonymous")
    try:
        summary = ingest_agent_events(body, source=f"api/{user}")
    except BodyError as exc:
        raise ParameterError(str(exc)) from exc
    return summary.as_dict()


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
    return Status(200, ingest_request_records(body, f"api:{request.user.get_username()}"))
