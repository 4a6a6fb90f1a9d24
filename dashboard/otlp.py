"""The OTLP/HTTP receiver: `POST /v1/logs`, `/v1/metrics`, `/v1/traces` on the web server,
so `OTEL_EXPORTER_OTLP_ENDPOINT=http://host:port` just works (docs/otlp.md).

Owns the HTTP side: the Bearer token (401 without a live one; its scope and role through
dashboard.access, 403 for a read token), reading the body (Content-Length or chunked, as
gunicorn de-chunks it; 413 past ingest.sources.otlp.MAX_OTLP_BODY_BYTES), the answer in
the request's encoding (200 with an empty response or partial_success, 400, 415, and 503
with Retry-After when the spool is full or the disk refuses). A request is mapped here
(ingest/parsers/otlp.py) and written durably to the spool before the 200; the web process
never writes the warehouse.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from analytics.access.visibility import sees_all_teams, teams_of
from dashboard.access import check_api_access
from dashboard.models import ApiToken, hash_token
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp_spool
from ingest.sources.otlp import (
    JSON,
    MAX_OTLP_BODY_BYTES,
    OtlpBodyError,
    OtlpTooLarge,
    Signal,
    UnsupportedMediaType,
    answer,
    decode,
    encoding_of,
    inflate,
    status_body,
)
from lib.access import Scope
from lib.errors import ForbiddenError

log = logging.getLogger(__name__)

# Seconds an exporter is asked to wait when the spool is full or the disk refuses.
RETRY_AFTER_FULL_S = 5
RETRY_AFTER_DISK_S = 30
READ_CHUNK_BYTES = 1024 * 1024


def _reply(encoding: str, status: int, body: bytes, retry_after: int | None = None) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type=encoding)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _error(
    encoding: str, status: int, message: str, retry_after: int | None = None
) -> HttpResponse:
    return _reply(encoding, status, status_body(encoding, status, message), retry_after)


def _read_body(request: HttpRequest) -> bytes:
    """The raw body, Content-Length or chunked (Django reads a request without
    Content-Length as empty; gunicorn marks a de-chunked body `wsgi.input_terminated`)."""
    declared = request.headers.get("Content-Length", "")
    if declared.isdigit():
        if int(declared) > MAX_OTLP_BODY_BYTES:
            raise OtlpTooLarge()
        stream = request
    elif request.META.get("wsgi.input_terminated"):
        stream = request.META["wsgi.input"]
    else:
        return b""
    parts, size = [], 0
    while chunk := stream.read(READ_CHUNK_BYTES):
        size += len(chunk)
        if size > MAX_OTLP_BODY_BYTES:
            raise OtlpTooLarge()
        parts.append(chunk)
    return b"".join(parts)


def _sender(user: Any) -> Sender:
    """The token's user and their team names (no warehouse read: which runs they see is
    not needed to tag what they send)."""
    teams = None if sees_all_teams(user) else frozenset(t.name for t in teams_of(user))
    return Sender(user.get_username(), teams)


@dataclass(frozen=True)
class _Admitted:
    user: Any
    token: ApiToken
    sender: Sender
    until: float  # time.monotonic() after which the token is read again


# A token found live, its user allowed to send and their teams, kept for TOKEN_CACHE_S
# per process: an exporter posts every few seconds, and reading the token, the role and the
# teams was a fifth of a request (bench/otlp.md). So a token revoked, or a user moved to
# another team, takes effect here up to TOKEN_CACHE_S later.
TOKEN_CACHE_S = 5.0
_admitted: dict[str, _Admitted] = {}
_admitted_lock = threading.Lock()


def _authenticate(request: HttpRequest) -> tuple[Sender | None, str]:
    """(the sender, "") when the request may send data; else (None, "<status> why")."""
    header = request.headers.get("Authorization", "")
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None, "401 send Authorization: Bearer <token> (an ingest-scoped API token)"
    key = hash_token(raw.strip())
    now = time.monotonic()
    admitted = _admitted.get(key)
    if admitted is None or admitted.until < now:
        try:
            token = ApiToken.authenticate(raw.strip())
            if token is None:
                return None, "401 the token is not valid (unknown, revoked or expired)"
            request.user = token.user
            try:
                check_api_access(request, Scope(token.scope))
            except ForbiddenError as exc:
                return None, f"403 {exc}"
            admitted = _Admitted(token.user, token, _sender(token.user), now + TOKEN_CACHE_S)
        except (OperationalError, InterfaceError) as exc:
            # Django's database out of reach (PostgreSQL restarting): the exporter retries.
            log.warning("OTLP: the web database is unreachable: %s", exc)
            return None, "503 the web database is unreachable; retry later"
        with _admitted_lock:
            if len(_admitted) > 10_000:  # many tokens: start again rather than grow
                _admitted.clear()
            _admitted[key] = admitted
    request.user = admitted.user
    request.api_token = admitted.token  # type: ignore[attr-defined]
    return admitted.sender, ""


def _receive(signal: Signal, request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        response = _error(JSON, 405, f"POST an Export{signal.title()}ServiceRequest here")
        response["Allow"] = "POST"
        return response
    try:
        encoding = encoding_of(request.headers.get("Content-Type", ""))
    except UnsupportedMediaType as exc:
        return _error(JSON, 415, str(exc))
    sender, refused = _authenticate(request)
    if sender is None:
        status, _, message = refused.partition(" ")
        retry = RETRY_AFTER_FULL_S if status == "503" else None
        return _error(encoding, int(status), message, retry)
    try:
        raw = _read_body(request)
        body = inflate(raw, request.headers.get("Content-Encoding", ""))
        message = decode(signal, body, encoding)
    except OtlpTooLarge as exc:
        return _error(encoding, 413, str(exc))
    except OtlpBodyError as exc:
        return _error(encoding, 400, str(exc))
    if otlp_spool.is_full():
        return _error(
            encoding, 503, "the loader is behind (spool full); retry later", RETRY_AFTER_FULL_S
        )
    batch = map_request(signal, message, sender)
    try:
        otlp_spool.append(batch, sender, otlp_spool.body_digest(body))
    except OSError as exc:
        log.error("OTLP spool write failed: %s", exc)
        return _error(
            encoding,
            503,
            f"cannot store the request ({exc.strerror}); retry later",
            RETRY_AFTER_DISK_S,
        )
    warning = batch.warning()
    return _reply(encoding, 200, answer(signal, encoding, batch.rejected_count, warning))


def _view(signal: Signal) -> Callable[[HttpRequest], HttpResponse]:
    @csrf_exempt
    def receive(request: HttpRequest) -> HttpResponse:
        return _receive(signal, request)

    receive.__name__ = f"otlp_{signal}"
    return receive


logs = _view(Signal.LOGS)
metrics = _view(Signal.METRICS)
traces = _view(Signal.TRACES)
