"""lib/http.py against a loopback server each test scripts: what is sent, what comes back,
and the one-line reasons for an answer that is an error, late, too large or absent."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lib import http
from tests.services import free_port

# What the server does with one request: writes its answer through the handler.
Answer = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Server:
    base_url: str
    answers: dict[str, Answer] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)


def answer(status: int, body: bytes = b"", content_type: str = "text/plain") -> Answer:
    def write(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return write


@pytest.fixture
def server() -> Iterator[Server]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?")[0]
            state.seen.append(Seen(self.command, self.path, dict(self.headers), body))
            try:
                state.answers.get(path, answer(404, b"no such path"))(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as some tests mean it to

        do_GET = do_POST = _serve

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state = Server(f"http://127.0.0.1:{httpd.server_port}")
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def failure(call: Callable[[], object]) -> http.FetchError:
    with pytest.raises(http.FetchError) as raised:
        call()
    return raised.value


def test_a_get_returns_the_status_body_and_content_type(server: Server) -> None:
    server.answers["/metrics"] = answer(200, b"vllm:up 1\n", "text/plain; version=0.0.4")
    response = http.get(server.base_url + "/metrics", accept="text/plain")
    assert response == http.Response(200, b"vllm:up 1\n", "text/plain; version=0.0.4")
    [seen] = server.seen
    assert (seen.method, seen.headers["Accept"]) == ("GET", "text/plain")
    assert seen.headers["User-Agent"] == http.USER_AGENT
    assert seen.headers["Accept-Encoding"] == "identity"


def test_params_are_appended_to_the_query_the_url_has(server: Server) -> None:
    server.answers["/api"] = answer(200)
    http.get(server.base_url + "/api?a=1", params={"query": "rate(x[1m])", "step": "15"})
    http.get(server.base_url + "/api", params={"q": "a b"})
    assert [seen.path for seen in server.seen] == [
        "/api?a=1&query=rate%28x%5B1m%5D%29&step=15",
        "/api?q=a+b",
    ]


def test_a_redirect_is_followed(server: Server) -> None:
    def moved(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", "/new")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.answers["/old"], server.answers["/new"] = moved, answer(200, b"here")
    assert http.get(server.base_url + "/old").body == b"here"


def test_an_error_status_is_a_failure_with_the_status(server: Server) -> None:
    server.answers["/busy"] = answer(503, b"try later")
    error = failure(lambda: http.get(server.base_url + "/busy"))
    assert (str(error), error.status) == ("HTTP 503 Service Unavailable", 503)
    error = failure(lambda: http.get(server.base_url + "/missing"))
    assert (str(error), error.status) == ("HTTP 404 Not Found", 404)


def test_a_server_that_never_answers_times_out(server: Server) -> None:
    released = threading.Event()

    def hang(_handler: BaseHTTPRequestHandler) -> None:
        released.wait(5)

    server.answers["/hang"] = hang
    started = time.monotonic()
    error = failure(lambda: http.get(server.base_url + "/hang", timeout_s=0.2))
    released.set()
    assert (str(error), error.status) == ("timed out after 0.2 s", None)
    assert time.monotonic() - started < 1.0


def test_the_timeout_bounds_the_whole_call_not_each_read(server: Server) -> None:
    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        for _ in range(100):  # a byte every 50 ms: each read is quick, the body takes 5 s
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.05)

    server.answers["/slow"] = trickle
    started = time.monotonic()
    error = failure(lambda: http.get(server.base_url + "/slow", timeout_s=0.3))
    assert str(error) == "timed out after 0.3 s"
    assert time.monotonic() - started < 1.0


def test_headers_trickling_a_byte_at_a_time_are_bounded_by_the_timeout_too(server: Server) -> None:
    stop = threading.Event()

    def trickle_headers(handler: BaseHTTPRequestHandler) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
        for byte in head:  # a byte every 200 ms: the status line alone takes 3 s
            if stop.is_set():
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.2)

    server.answers["/trickle"] = trickle_headers
    started = time.monotonic()
    error = failure(lambda: http.get(server.base_url + "/trickle", timeout_s=1.0))
    elapsed = time.monotonic() - started
    stop.set()
    assert (str(error), error.status) == ("timed out after 1 s", None)
    assert elapsed < 3.0  # generous slack around the 1 s asked; the whole answer takes 15 s


def test_a_redirect_chain_shares_one_deadline(server: Server) -> None:
    def slow_redirect(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(0.4)
        handler.send_response(302)
        handler.send_header("Location", "/again")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.answers["/again"] = slow_redirect
    started = time.monotonic()
    error = failure(lambda: http.get(server.base_url + "/again", timeout_s=1.0))
    assert str(error) == "timed out after 1 s"
    assert time.monotonic() - started < 3.0  # each hop is quick; ten of them would be 4 s


def test_a_refused_connection_says_so() -> None:
    error = failure(lambda: http.get(f"http://127.0.0.1:{free_port()}/metrics"))
    assert (str(error), error.status) == ("connection refused", None)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "http:///x"])
def test_a_url_that_is_not_http_is_refused_before_any_request(url: str) -> None:
    with pytest.raises(http.InvalidURL) as raised:
        http.get(url)
    assert str(raised.value) == f"not an http(s) URL: {url!r}"
    with pytest.raises(http.InvalidURL):
        http.post_json(url, b"{}")


def test_a_body_past_the_cap_is_refused(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY_BYTES", 1000)
    server.answers["/declared"] = answer(200, b"x" * 1001)

    def undeclared(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()  # no Content-Length: the body runs until the server closes
        handler.wfile.write(b"x" * 5000)
        handler.close_connection = True

    server.answers["/undeclared"] = undeclared
    server.answers["/fits"] = answer(200, b"x" * 1000)
    for path in ("/declared", "/undeclared"):
        with pytest.raises(http.FetchError) as raised:
            http.get(server.base_url + path)
        assert str(raised.value) == "response larger than 1000 bytes"
    assert http.get(server.base_url + "/fits").body == b"x" * 1000


def test_a_json_post_sends_the_body_and_headers_as_given(server: Server) -> None:
    server.answers["/hook"] = answer(204)
    response = http.post_json(
        server.base_url + "/hook", b'{"text":"hi"}', headers={"X-Signature": "sha256=ab"}
    )
    assert response.status == 204
    [seen] = server.seen
    assert (seen.method, seen.body) == ("POST", b'{"text":"hi"}')
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["X-Signature"] == "sha256=ab"
    assert seen.headers["User-Agent"] == http.USER_AGENT


def test_a_json_post_may_override_the_content_type(server: Server) -> None:
    server.answers["/hook"] = answer(200)
    http.post_json(server.base_url + "/hook", b"{}", headers={"Content-Type": "text/json"})
    assert server.seen[0].headers["Content-Type"] == "text/json"


def test_a_rejected_post_carries_the_status(server: Server) -> None:
    server.answers["/hook"] = answer(410, b"gone")
    error = failure(lambda: http.post_json(server.base_url + "/hook", b"{}"))
    assert (str(error), error.status) == ("HTTP 410 Gone", 410)
