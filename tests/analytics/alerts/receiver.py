"""A webhook receiver on loopback for the channel and delivery tests: it records every
POST (path, headers, exact body bytes) and answers 200, or the statuses queued with
`answer()` first, or nothing at all while `hang` is set."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/hook"
        self.requests: list[Received] = []
        self.statuses: list[int] = []
        self.hang = False
        self.released = threading.Event()
        self.lock = threading.Lock()

    def answer(self, *statuses: int) -> None:
        """Answer the next requests with these statuses, then 200 again."""
        self.statuses.extend(statuses)

    def next_status(self, received: Received) -> int:
        with self.lock:
            self.requests.append(received)
            return self.statuses.pop(0) if self.statuses else 200


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = receiver.next_status(Received(self.path, dict(self.headers), body))
            if receiver.hang:
                receiver.released.wait(timeout=10)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver = Receiver(server.server_port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        server.server_close()
