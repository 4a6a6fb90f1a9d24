"""The ingest app's router, `/api/ingest/...`: agent events and per-request records over
HTTP, through the same pipelines as `manage.py ingest agent-events` and `ingest requests`.

Owns reading the request body as a stream (never whole: the pipelines load it a block of
lines at a time), refusing one past lib.bounds.MAX_BODY_BYTES (413) before reading it, and
mapping the pipelines' answers to HTTP; parsing and loading stay in ingest.pipelines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from ingest.parsers.requests import RequestRecord
from ingest.pipelines.agent_events import ingest_body as ingest_agent_events
from ingest.pipelines.requests import ingest_body as ingest_request_records
from ingest.sources.bodies import BodyError
from lib.access import seen_of
from lib.bounds import MAX_BODY_BYTES
from lib.errors import BodyTooLarge, ParameterError

router = Router()

READ_CHUNK_BYTES = 1024 * 1024


class IngestOut(Schema):
    accepted: int
    quarantined: int
    duplicates: int


class ErrorOut(Schema):
    detail: str


BODY_DOC = {
    "requestBody": {
        "content": {
            "application/x-ndjson": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
        },
        "required": True,
    }
}
RESPONSES = {200: IngestOut, 413: ErrorOut, 422: ErrorOut}


def _body_chunks(request: HttpRequest) -> Iterator[bytes]:
    """The body as it arrives. Django reads no more than Content-Length, so a declared
    length past the bound is refused before any of it is read or loaded."""
    declared = request.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyTooLarge()
    size = 0
    while chunk := request.read(READ_CHUNK_BYTES):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise BodyTooLarge()
        yield chunk


def _source(request: HttpRequest, separator: str) -> str:
    return f"api{separator}{request.user.get_username() or 'anonymous'}"


def _run_allowed(request: HttpRequest) -> Callable[[str], bool] | None:
    """A sender who does not see every team writes only their teams' runs."""
    seen = seen_of(request)
    return None if seen.everything else seen.sees_run


def _record_allowed(request: HttpRequest) -> Callable[[RequestRecord], str | None] | None:
    """A sender who does not see every team sends only records of their runs and
    instances (a record naming neither needs the all-teams view)."""
    seen = seen_of(request)
    if seen.everything:
        return None

    def allowed(record: RequestRecord) -> str | None:
        if record.run is not None and not seen.sees_run(record.run):
            return f"run {record.run} is not one of your teams' runs"
        if record.instance is not None and not seen.sees_instance(record.instance):
            return f"instance {record.instance} is not one of your teams' instances"
        if record.run is None and record.instance is None:
            return "a record with neither run nor instance needs the all-teams view"
        return None

    return allowed


@router.post(
    "/agent-events",
    response=RESPONSES,
    summary="Ingest agent events",
    description="Body: JSON Lines (`application/x-ndjson`) or a JSON array of events "
    f"(docs/agent-events.md), at most {MAX_BODY_BYTES >> 20} MiB (413 past it). Bad lines are quarantined, not "
    "rejected; events re-sent with the same run + id, or without an id and the same line, "
    "are counted as duplicates. A sender who does not see every team may send only "
    "their teams' runs: other runs' events are quarantined.",
    openapi_extra=BODY_DOC,
)
def agent_events(request: HttpRequest) -> Any:
    try:
        summary = ingest_agent_events(
            _body_chunks(request), source=_source(request, "/"), run_allowed=_run_allowed(request)
        )
    except BodyError as exc:
        raise ParameterError(str(exc)) from exc
    return summary.as_dict()


@router.post(
    "/requests",
    response=RESPONSES,
    summary="Ingest per-request records",
    description="Body: JSON Lines (`application/x-ndjson`) or a JSON array of records "
    f"(docs/requests.md), at most {MAX_BODY_BYTES >> 20} MiB (413 past it). Bad records are quarantined; a "
    "request_id already stored is a duplicate. A sender who does not see every team may send only "
    "records of their teams' runs or instances: others are quarantined.",
    openapi_extra=BODY_DOC,
)
def ingest_requests(request: HttpRequest) -> Any:
    try:
        return ingest_request_records(
            _body_chunks(request), _source(request, ":"), _record_allowed(request)
        )
    except BodyError as exc:
        raise ParameterError(str(exc)) from exc
