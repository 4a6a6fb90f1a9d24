"""lib/http.py holds webhooks to public addresses: a URL is refused when saved if its host
is, in any spelling, or resolves to, an address that is not global; a POST resolves once,
refuses a private answer (each redirect hop too) and connects to the address it checked."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from lib import http
from tests.lib.test_http import Server, answer, server  # noqa: F401  # the loopback fixture

PRIVATE = (
    "webhook URL points to a private address ({}); set FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS=1 to allow"
)


def refusal(url: str) -> str:
    with pytest.raises(http.InvalidURL) as raised:
        http.check_public_url(url, allow_private=False)
    return str(raised.value)


def resolving(monkeypatch: pytest.MonkeyPatch, names: dict[str, list[str]]) -> list[str]:
    """socket.getaddrinfo answering `names` (each lookup pops the next address list when
    there are several); the names looked up, in order."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        addresses = names[host]
        address = addresses.pop(0) if len(addresses) > 1 else addresses[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://10.0.0.5/hook", "10.0.0.5"),
        ("http://127.0.0.1:8080/", "127.0.0.1"),
        ("http://localhost/", "127.0.0.1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[::1]/", "::1"),
        ("http://[fd12:3456::1]/", "fd12:3456::1"),
        ("http://[fe80::1]/", "fe80::1"),
        ("http://0.0.0.0/", "0.0.0.0"),  # noqa: S104  # an address refused, not bound
        ("http://224.0.0.251/", "224.0.0.251"),
        ("http://240.0.0.1/", "240.0.0.1"),
        ("http://100.64.0.1/", "100.64.0.1"),
        ("http://[2002:7f00:1::]/", "2002:7f00:1::"),  # 6to4 around 127.0.0.1
    ],
)
def test_a_url_to_an_address_that_is_not_public_is_refused_when_saved(
    url: str, address: str
) -> None:
    assert refusal(url) == PRIVATE.format(address)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://example.com/", "http:///x"])
def test_a_url_that_is_not_http_with_a_host_is_refused(url: str) -> None:
    assert refusal(url) == f"webhook URL must be an http(s) URL with a host, got {url!r}"


def test_a_name_that_resolves_inside_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    resolving(monkeypatch, {"hooks.example.com": ["192.168.1.20"]})
    assert refusal("https://hooks.example.com/x") == PRIVATE.format("192.168.1.20")


def test_a_public_address_and_a_name_resolving_to_one_are_accepted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolving(monkeypatch, {"hooks.example.com": ["93.184.215.14"]})
    http.check_public_url("https://hooks.example.com/services/T0/B0/x", allow_private=False)
    http.check_public_url("http://93.184.215.14:8443/hook", allow_private=False)
    http.check_public_url("http://[2606:4700:4700::1111]/", allow_private=False)


def test_allowing_private_addresses_still_asks_for_http() -> None:
    http.check_public_url("http://127.0.0.1:9/", allow_private=True)
    with pytest.raises(http.InvalidURL):
        http.check_public_url("file:///etc/passwd", allow_private=True)


def test_a_post_to_a_loopback_receiver_is_refused_before_anything_is_sent(server: Server) -> None:  # noqa: F811
    server.answers["/hook"] = answer(200)
    with pytest.raises(http.PrivateAddress) as raised:
        http.post_json(server.base_url + "/hook", b"{}", allow_private=False)
    assert str(raised.value) == PRIVATE.format("127.0.0.1")
    assert server.seen == []


def test_a_redirect_to_a_private_address_is_refused_at_that_hop(
    server: Server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first hop is let through (as if public); its redirect points at 10.1.2.3.
    monkeypatch.setattr(http, "is_public", lambda address: address == "127.0.0.1")

    def moved(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(307)
        handler.send_header("Location", "http://10.1.2.3/inside")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.answers["/hook"] = moved
    with pytest.raises(http.PrivateAddress) as raised:
        http.post_json(server.base_url + "/hook", b"{}", allow_private=False)
    assert str(raised.value) == PRIVATE.format("10.1.2.3")
    assert [s.path for s in server.seen] == ["/hook"]


def test_the_checked_address_is_the_one_connected_to_with_the_name_as_host(
    server: Server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A rebinding DNS: the first answer is checked (and passes, as public here), a second
    # lookup would get 10.9.9.9; the connection goes to the first and the Host stays the name.
    monkeypatch.setattr(http, "is_public", lambda address: address == "127.0.0.1")
    asked = resolving(monkeypatch, {"hook.test": ["127.0.0.1", "10.9.9.9"]})
    server.answers["/hook"] = answer(200, b"ok")
    port = server.base_url.rsplit(":", 1)[1]
    response = http.post_json(f"http://hook.test:{port}/hook", b'{"a": 1}', allow_private=False)
    assert response.body == b"ok"
    assert asked == ["hook.test"]
    assert server.seen[0].headers["Host"] == f"hook.test:{port}"


def test_a_name_that_does_not_resolve_when_sent_is_a_one_line_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def getaddrinfo(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(http.FetchError) as raised:
        http.post_json("http://nowhere.test/hook", b"{}", allow_private=False)
    assert str(raised.value) == (
        "unreachable: cannot resolve nowhere.test: [Errno -2] Name or service not known"
    )
    # When saved, such a name passes: it is checked again when sent.
    http.check_public_url("http://nowhere.test/hook", allow_private=False)
