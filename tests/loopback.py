"""A loopback HTTP server tests start themselves (the only network tests touch)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# path -> handler(query) -> (status, content type, body)
Handler = Callable[[dict[str, list[str]]], tuple[int, str, bytes]]


class Loopback:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.delay_s = 0.0
        self.requests: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def serve_text(self, path: str, body: str, status: int = 200) -> None:
        self.routes[path] = lambda _q: (status, "text/plain; version=0.0.4", body.encode())

    def start(self) -> None:
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                owner.requests.append(self.path)
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                route = owner.routes.get(parts.path)
                if route is None:
                    status, ctype, body = 404, "text/plain", b"not found"
                else:
                    status, ctype, body = route(parse_qs(parts.query))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@contextmanager
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    server.start()
    try:
        yield server
    finally:
        server.stop()
