"""All outbound HTTP: the one seam tests patch (or point at loopback servers they start).

Owns GET and JSON POST (webhooks) on httpx, each under one total deadline and a size cap,
with one-line failure reasons and the HTTP status on the error when the server answered.
The deadline bounds the whole call: connecting, TLS, sending, the headers and the body,
redirects included (every socket operation gets only what is left of it), so a server
trickling a byte a second cannot hold a call past timeout_s.
Knows nothing about what the bytes mean (parsers do that) nor whether a failure is worth
retrying (callers decide, from `FetchError.status`).

Webhooks may be held to public addresses (`allow_private=False`; Django callers pass the
FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS setting, which this module cannot read): `check_public_url`
refuses a URL when saved, and a call that is sent resolves each host once, refuses it when
any address is not global (loopback, private, link-local, unique-local, v4-mapped, 0.0.0.0,
multicast, reserved) and connects to the address it checked (no second lookup a rebinding
DNS could answer differently), every redirect hop again; TLS still names the host (SNI,
certificate) and so does the Host header. Scrapes (`get`) reach private targets by design.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
import typing
import urllib.parse
from dataclasses import dataclass
from functools import cache

import httpcore
import httpx

USER_AGENT = "Fleetscope/0.1 (+https://github.com/fleetscope)"
MAX_BODY_BYTES = 64 * 1024 * 1024  # a vLLM scrape is ~25 KB; a query_range chunk a few MB
MAX_REDIRECTS = 10  # urllib's limit, which this module kept before it moved to httpx
ALLOW_PRIVATE_SETTING = "FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS"


class FetchError(RuntimeError):
    """The request failed; the message is one line (HTTP status, timeout, refused...).
    `status` is the HTTP status code when the server answered, else None."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class InvalidURL(FetchError):
    """The URL is not http(s): no request was made, and retrying cannot help."""


class PrivateAddress(InvalidURL):
    """The URL's host is, or resolves to, an address that is not public."""

    def __init__(self, address: str) -> None:
        super().__init__(
            f"webhook URL points to a private address ({address}); "
            f"set {ALLOW_PRIVATE_SETTING}=1 to allow"
        )
        self.address = address


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
    allow_private: bool = True,
) -> Response:
    """POST a JSON body (webhooks); any non-2xx answer is a FetchError. `headers` are
    added to (and may override) Content-Type and User-Agent. Without `allow_private`, every
    host (each redirect's too) must resolve to public addresses only (PrivateAddress)."""
    _http_url(url)
    headers = {"Content-Type": "application/json", **(headers or {})}
    return _send("POST", url, headers, body, timeout_s, public_only=not allow_private)


def check_public_url(url: str, *, allow_private: bool) -> None:
    """Refuse a webhook URL as it is saved: InvalidURL unless http(s) with a host, and,
    without `allow_private`, PrivateAddress when its host is (in any spelling the resolver
    takes: `0x7f000001`, `2130706433`, `[::ffff:127.0.0.1]`) or resolves to an address
    that is not public. A name that does not resolve now passes: sending checks again."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidURL(f"webhook URL must be an http(s) URL with a host, got {url!r}")
    if allow_private:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise InvalidURL(f"webhook URL has an invalid port: {url!r}") from None
    try:
        public_addresses(parts.hostname, port)
    except _Unresolved:
        return


def is_public(address: str) -> bool:
    """Whether connecting to this IP address reaches the public internet: a global unicast
    address, judged by the IPv4 address inside a v4-mapped, 6to4, Teredo or NAT64 one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # a v6 scope id (fe80::1%eth0)
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None and not is_public(str(inner)):
            return False
    return ip.is_global and not (
        ip.is_multicast
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_unspecified
    )


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class _Unresolved(FetchError):
    """The host has no address (now)."""


def public_addresses(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, in the resolver's order, once every one of them
    is public (PrivateAddress names the first that is not); _Unresolved when none."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise _Unresolved(f"unreachable: cannot resolve {host}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise _Unresolved(f"unreachable: {host} has no address")
    for address in addresses:
        if not is_public(address):
            raise PrivateAddress(address)
    return addresses


def _http_url(url: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidURL(f"not an http(s) URL: {url!r}")
    return parts


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read, write and handshake waits at most until the call's
    deadline (httpx's own timeouts are per operation: a byte a second never trips them)."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: float) -> None:
        self._stream = stream
        self._deadline = deadline

    def _left(self, timeout: float | None) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the call's deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, self._left(timeout))
        return _DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sockets, each a _DeadlineStream bound to one call's deadline; with
    `public_only`, to an address of the host checked by public_addresses (httpcore asks
    for each connection, redirects included, and starts TLS with the host's name)."""

    def __init__(self, deadline: float, public_only: bool = False) -> None:
        self._backend = httpcore.SyncBackend()
        self._deadline = deadline
        self._public_only = public_only

    def _left(self, timeout: float | None) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout("the call's deadline passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if not self._public_only:
            stream = self._backend.connect_tcp(
                host, port, self._left(timeout), local_address, socket_options
            )
            return _DeadlineStream(stream, self._deadline)
        addresses = public_addresses(host, port)
        for n, address in enumerate(addresses):
            try:
                stream = self._backend.connect_tcp(
                    address, port, self._left(timeout), local_address, socket_options
                )
            except httpcore.ConnectError:
                if n == len(addresses) - 1:
                    raise
                continue
            return _DeadlineStream(stream, self._deadline)
        raise AssertionError("public_addresses returns at least one address")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def _transport(deadline: float, public_only: bool = False) -> httpx.HTTPTransport:
    """httpx's transport on sockets bound to `deadline`. httpx (pinned) takes no network
    backend, so its pool gets one: the pool is httpcore's public ConnectionPool, rebuilt
    with httpx's own settings for a client without proxies."""
    transport = httpx.HTTPTransport(verify=_tls_context())
    transport._pool = httpcore.ConnectionPool(
        ssl_context=_tls_context(), network_backend=_DeadlineBackend(deadline, public_only)
    )
    return transport


@cache
def _tls_context() -> ssl.SSLContext:
    # The system's CA store (an in-house CA installed there is trusted), not certifi's.
    return ssl.create_default_context()


def _send(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes | None,
    timeout_s: float,
    public_only: bool = False,
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
        transport=_transport(deadline, public_only),
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
