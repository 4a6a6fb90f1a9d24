"""All outbound HTTP: the one seam tests patch (or point at loopback servers they start).

Owns GET and JSON POST (webhooks) with a timeout, a size cap and one-line failure
reasons, with the HTTP status on the error when the server answered. Knows nothing about
what the bytes mean (parsers do that) nor whether a failure is worth retrying (callers
decide, from `FetchError.status`).
"""

from __future__ import annotations

import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

USER_AGENT = "Fleetscope/0.1 (+https://github.com/fleetscope)"
MAX_BODY_BYTES = 64 * 1024 * 1024  # a vLLM scrape is ~25 KB; a query_range chunk a few MB


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
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidURL(f"not an http(s) URL: {url!r}")
    if params:
        query = urllib.parse.urlencode(params)
        url = f"{url}{'&' if parts.query else '?'}{query}"
    request = urllib.request.Request(  # noqa: S310 - scheme checked above
        url, headers={"Accept": accept, "User-Agent": USER_AGENT}
    )
    return _send(request, timeout_s)


def post_json(
    url: str,
    body: bytes,
    *,
    timeout_s: float = 10.0,
    headers: dict[str, str] | None = None,
) -> Response:
    """POST a JSON body (webhooks); any non-2xx answer is a FetchError. `headers` are
    added to (and may override) Content-Type and User-Agent."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidURL(f"not an http(s) URL: {url!r}")
    request = urllib.request.Request(  # noqa: S310 - scheme checked above
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT, **(headers or {})},
    )
    return _send(request, timeout_s)


def _send(request: urllib.request.Request, timeout_s: float) -> Response:
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as resp:  # noqa: S310
            body = resp.read(MAX_BODY_BYTES + 1)
            if len(body) > MAX_BODY_BYTES:
                raise FetchError(f"response larger than {MAX_BODY_BYTES} bytes")
            return Response(resp.status, body, resp.headers.get("Content-Type", ""))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"HTTP {exc.code} {exc.reason}", status=exc.code) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout)):
            raise FetchError(f"timed out after {timeout_s:g} s") from None
        if isinstance(reason, ConnectionRefusedError):
            raise FetchError("connection refused") from None
        raise FetchError(f"unreachable: {reason}") from None
    except TimeoutError:
        raise FetchError(f"timed out after {timeout_s:g} s") from None
    except (ConnectionError, OSError) as exc:
        raise FetchError(f"connection failed: {exc.__class__.__name__}: {exc}") from None
