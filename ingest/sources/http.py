"""All outbound HTTP: the one seam tests patch (or point at loopback servers they start).

Owns GET with a timeout, a size cap and one-line failure reasons. Knows nothing about
what the bytes mean: parsers do that.
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
    """The request failed; the message is one line (HTTP status, timeout, refused...)."""


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
        raise FetchError(f"not an http(s) URL: {url!r}")
    if params:
        query = urllib.parse.urlencode(params)
        url = f"{url}{'&' if parts.query else '?'}{query}"
    request = urllib.request.Request(  # noqa: S310 - scheme checked above
        url, headers={"Accept": accept, "User-Agent": USER_AGENT}
    )
    return _send(request, timeout_s)


def post_json(url: str, body: bytes, *, timeout_s: float = 10.0) -> Response:
    """POST a JSON body (webhooks); any non-2xx answer is a FetchError."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise FetchError(f"not an http(s) URL: {url!r}")
    request = urllib.request.Request(  # noqa: S310 - scheme checked above
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
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
        raise FetchError(f"HTTP {exc.code} {exc.reason}") from None
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
