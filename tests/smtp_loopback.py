"""A minimal SMTP server on loopback that tests start themselves: it speaks enough of
RFC 5321 (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) for smtplib and keeps every
message it receives, raw. (Python 3.11's smtpd is deprecated; this avoids a dependency.)"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Received:
    sender: str
    recipients: list[str]
    data: bytes


@dataclass
class SmtpServer:
    host: str
    port: int
    messages: list[Received] = field(default_factory=list)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def _reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        self._reply("220 loopback ESMTP")
        sender, recipients = "", list[str]()
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            command = raw.decode("ascii", "replace").strip()
            verb = command[:4].upper()
            if verb == "EHLO":
                self._reply("250-loopback")
                self._reply("250 8BITMIME")
            elif verb == "HELO" or verb == "NOOP":
                self._reply("250 ok")
            elif verb == "MAIL":
                sender, recipients = command.split(":", 1)[1].strip(" <>"), []
                self._reply("250 ok")
            elif verb == "RCPT":
                recipients.append(command.split(":", 1)[1].strip(" <>"))
                self._reply("250 ok")
            elif verb == "RSET":
                sender, recipients = "", list[str]()
                self._reply("250 ok")
            elif verb == "DATA":
                self._reply("354 end with <CRLF>.<CRLF>")
                lines = []
                while (line := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(line[1:] if line.startswith(b"..") else line)
                self.server.store.messages.append(Received(sender, recipients, b"".join(lines)))
                self._reply("250 queued")
            elif verb == "QUIT":
                self._reply("221 bye")
                return
            else:
                self._reply("502 not implemented")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    store: SmtpServer


@contextmanager
def smtp_server() -> Iterator[SmtpServer]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.store = SmtpServer("127.0.0.1", server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.store
    finally:
        server.shutdown()
        server.server_close()
