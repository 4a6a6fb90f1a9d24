"""An S3 endpoint that fails on demand: a proxy on loopback in front of moto's S3 server
that forwards every request as it is, or, while told to, answers each with a 500
(InternalError, as S3 does under load) or drops its connection without an answer (a
timeout's end, a load balancer's reset)."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK, ERRORS, DROPS = "ok", "500", "drop"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}
INTERNAL_ERROR = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message></Error>"
)


class FaultyS3:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.mode = OK
        self.failed = 0  # requests answered with a fault
        self.endpoint = ""

    def fail(self, mode: str) -> None:
        self.mode = mode


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        return

    def _body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def _forward(self) -> None:
        faults = self.server.faults
        body = self._body()
        if faults.mode != OK:
            faults.failed += 1
            if faults.mode == DROPS:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response(500)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(INTERNAL_ERROR)))
            self.end_headers()
            self.wfile.write(INTERNAL_ERROR)
            return
        upstream = http.client.HTTPConnection(faults.upstream, timeout=60)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            if body is not None:
                headers["Content-Length"] = str(len(body))
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            # A HEAD says the object's size (DuckDB reads it from there), with no body.
            size = answer.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", size or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            upstream.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    faults: FaultyS3


@contextmanager
def faulty_s3(upstream: str) -> Iterator[FaultyS3]:
    """The proxy in front of `upstream` (host:port); its `endpoint` is host:port too."""
    faults = FaultyS3(upstream)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.faults = faults
    faults.endpoint = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield faults
    finally:
        server.shutdown()
        server.server_close()
