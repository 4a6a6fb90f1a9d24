"""Agent-event ingest over HTTP: the same pipeline as `manage.py ingest agent-events`."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from ingest.pipelines.agent_events import BodyError, ingest_body
from lib.errors import ParameterError

router = Router()

MAX_BODY_BYTES = 256 * 1024 * 1024


class IngestOut(Schema):
    accepted: int
    quarantined: int
    duplicates: int


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
        summary = ingest_body(body, source=f"api/{user}")
    except BodyError as exc:
        raise ParameterError(str(exc)) from exc
    return summary.as_dict()
