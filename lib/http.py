"""All outbound HTTP: the one seam tests patch (or point at loopback servers they start).

Owns GET and JSON POST (webhooks) on httpx, each under one total deadline and a size cap,
with one-line failure reasons and the HTTP status on the error when the server answered.
Knows nothing about what the bytes mean (parsers do that) nor whether a failure is worth
retrying (callers decide, from `FetchError.status`).
"""

from __future__ import annotations

import ssl
import time
import urllib.parse
from dataclasses import dataclass
from functools import cache

import httpx

USER_AGENT = "Fleetscope/0.1 (+https://github.com/fleetscope)"
MAX_BODY_BYTES = 64 * 1024 * 1024  # a vLLM scrape is ~25 KB; a query_range chunk a few MB
MAX_REDIRECTS = 10  # urllib's limit, which this module kept before it moved to httpx


class FetchError(RuntimeError):
    """The request failed; the message is one line (HTTP status, timeout, refused...).
    `status` is the HTTP status code when the server answered, else None."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class InvalidURL(FetchError):
    """The URL is not http(s): no request was made, and retrying cannot help."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str


def get(
    url: str,
    *,
    params: dict[str, str] | None = None,
    timeout_s: float = 5.0,
    accept: str = "*/*",
) -> Response:
    """GET `url` with `params` appended to its query; any non-2xx answer is a FetchError."""
    parts = _http_url(url)
    if params:
        url = f"{url}{'&' if parts.query else '?'}{urllib.parse.urlencode(params)}"
    return _send("GET", url, {"Accept": accept}, None, timeout_s)


def post_json(
    url: str,
    body: bytes,
    *,
    timeout_s: float = 10.0,
    headers: dict[str, str] | None = None,
) -> Response:
    """POST a JSON body (webhooks); any non-2xx answer is a FetchError. `headers` are
    added to (and may override) Content-Type and User-Agent."""
    _http_url(url)
    headers = {"Content-Type": "application/json", **(headers or {})}
    return _send("POST", url, headers, body, timeout_s)


def _http_url(url: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidURL(f"not an http(s) URL: {url!r}")
    return parts


@cache
def _tls_context() -> ssl.SSLContext:
    # The system's CA store (an in-house CA installed there is trusted), not certifi's.
    return ssl.create_default_context()


def _send(
    method: str, url: str, headers: dict[str, str], body: bytes | None, timeout_s: float
) -> Response:
    """One request on a client of its own: no connection outlives the call, so nothing is
    shared between threads or across the fork of a Celery worker."""
    deadline = time.monotonic() + timeout_s
    client = httpx.Client(
        # Bodies come uncompressed (as urllib asked): the size cap bounds what is read and
        # what is kept alike, and a small compressed answer cannot inflate past it.
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
        timeout=timeout_s,  # httpx applies it to each phase; `deadline` bounds the whole call
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        verify=_tls_context(),
    )
    try:
        with client, client.stream(method, url, headers=headers, content=body) as response:
            if not response.is_success:
                status = response.status_code
                raise FetchError(f"HTTP {status} {response.reason_phrase}", status=status)
            content = _read_body(response, deadline, timeout_s)
            return Response(response.status_code, content, response.headers.get("Content-Type", ""))
    except httpx.TimeoutException:
        raise _timed_out(timeout_s) from None
    except httpx.ConnectError as exc:
        reason = _root_cause(exc)
        if isinstance(reason, ConnectionRefusedError):
            raise FetchError("connection refused") from None
        raise FetchError(f"unreachable: {reason}") from None
    except httpx.TooManyRedirects:
        raise FetchError(f"more than {MAX_REDIRECTS} redirects") from None
    except httpx.InvalidURL as exc:
        raise InvalidURL(f"invalid URL {url!r}: {exc}") from None
    except httpx.UnsupportedProtocol as exc:  # a redirect to something other than http(s)
        raise FetchError(f"redirected to an unsupported URL: {exc}") from None
    except httpx.TransportError as exc:
        reason = _root_cause(exc)
        raise FetchError(f"connection failed: {reason.__class__.__name__}: {reason}") from None


def _read_body(response: httpx.Response, deadline: float, timeout_s: float) -> bytes:
    """The body, read chunk by chunk against the call's deadline (each read alone is
    bounded by httpx's per-phase timeout) and refused past MAX_BODY_BYTES."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks, size = [], 0
    for chunk in response.iter_raw():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        if time.monotonic() > deadline:
            raise _timed_out(timeout_s)
        chunks.append(chunk)
    if time.monotonic() > deadline:
        raise _timed_out(timeout_s)
    return b"".join(chunks)


def _timed_out(timeout_s: float) -> FetchError:
    return FetchError(f"timed out after {timeout_s:g} s")


def _too_large() -> FetchError:
    return FetchError(f"response larger than {MAX_BODY_BYTES} bytes")


def _root_cause(exc: BaseException) -> BaseException:
    """The error under httpx's and httpcore's wrappers (ConnectionRefusedError, gaierror...):
    httpx chains its error to httpcore's by cause, httpcore to the socket's by context."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc
