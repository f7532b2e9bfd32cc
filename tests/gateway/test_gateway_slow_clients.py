"""Hostile clients at the server layer, against a real gateway (loopback only, bounded).

- 1,000 connections that send half a request and wait (half the headers, or the headers and
  half the body) do not keep `/healthz` or `POST /v1/matches` from answering within 1 s, and
  the gateway closes each of them once GATEWAY_READ_TIMEOUT has passed (the half-sent bodies
  with a 408 problem);
- the errors the server layer answers before the app runs are problem+json: a request line
  too long (414), too many or too large headers (431), a bad request line (400), a body over
  the limit (413, chunked too, where the app alone would have seen a cut body);
- SIGTERM to the gateway: every request already sent completes.
"""
from __future__ import annotations

import json
import selectors
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .conftest import EngineProc, Gateway, launch_gateway

# The two tests that judge time run alone (`serial`); the answers' shapes do not, and share one gateway.
pytestmark = pytest.mark.service

READ_TIMEOUT = 2
CREATE = json.dumps({"variant": "kozel", "players": 4, "seed": 7}).encode()


def _address(gateway: Gateway) -> tuple[str, int]:
    host, port = gateway.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _request(path: str, body: bytes | None = None, *, extra: str = "") -> bytes:
    method = "GET" if body is None else "POST"
    head = f"{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{extra}"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + (body or b"")


def _exchange(address: tuple[str, int], raw: bytes, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read the whole answer (the server closes): status, headers, body."""
    with socket.create_connection(address, timeout=timeout) as conn:
        conn.sendall(raw)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _timed(address: tuple[str, int], raw: bytes) -> tuple[float, int]:
    start = time.monotonic()
    status, _, _ = _exchange(address, raw, timeout=5.0)
    return time.monotonic() - start, status


@pytest.fixture(scope="module")
def gateway(engine_proc: EngineProc) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2", "--read-timeout", str(READ_TIMEOUT),
                        "--max-body-bytes", "4096")
    yield gw
    assert gw.stop() == 0


@pytest.mark.serial
def test_a_thousand_half_sent_requests_do_not_slow_the_others(gateway: Gateway) -> None:
    address = _address(gateway)
    half_headers = b"POST /v1/matches HTTP/1.1\r\nHost: test\r\nContent-Type: appl"
    half_body = _request("/v1/matches", CREATE)[:-len(CREATE) // 2]
    attackers: list[socket.socket] = []
    try:
        for i in range(1000):
            conn = socket.create_connection(address, timeout=5)
            conn.sendall(half_headers if i % 2 else half_body)
            attackers.append(conn)
        opened = time.monotonic()
        probes = []
        while time.monotonic() - opened < READ_TIMEOUT * 0.8:  # all 1,000 still open and waiting
            probes.append(_timed(address, _request("/healthz")))
            probes.append(_timed(address, _request("/v1/matches", CREATE)))
        assert [status for _, status in probes] == [200, 201] * (len(probes) // 2)
        assert max(seconds for seconds, _ in probes) < 1.0, probes

        # The gateway hangs up on every one of them once the read timeout has passed.
        answers: dict[int, bytes] = {}
        selector = selectors.DefaultSelector()
        for index, conn in enumerate(attackers):
            conn.setblocking(False)
            selector.register(conn, selectors.EVENT_READ, index)
        deadline = time.monotonic() + READ_TIMEOUT * 4 + 5
        while len(answers) < len(attackers) and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                conn = attackers[key.data]
                try:
                    chunk = conn.recv(65536)
                except (ConnectionResetError, BlockingIOError):
                    chunk = b""
                answers[key.data] = answers.get(key.data, b"") + chunk
                if not chunk:
                    selector.unregister(conn)
        assert len(answers) == 1000
        slow_bodies = [answers[i] for i in range(0, 1000, 2)]
        assert all(a.startswith(b"HTTP/1.1 408 ") and b"application/problem+json" in a for a in slow_bodies)
        assert all(answers[i] == b"" for i in range(1, 1000, 2))  # half headers: closed, nothing to answer
        assert gateway.get("/healthz").status == 200
    finally:
        for conn in attackers:
            conn.close()


@pytest.mark.parametrize("raw,status", [
    pytest.param(_request("/v1/variants?" + "x" * 9000), 414, id="request-line-too-long"),
    pytest.param(_request("/healthz", extra="".join(f"X-{i}: y\r\n" for i in range(150))), 431, id="too-many-headers"),
    pytest.param(_request("/healthz", extra="X-Big: " + "y" * 9000 + "\r\n"), 431, id="header-too-large"),
    pytest.param(b"GET\x00 / HTTP/1.1\r\nHost: t\r\n\r\n", 400, id="bad-request-line"),
    pytest.param(b"GET / HTTP/9.9\r\nHost: t\r\n\r\n", 400, id="bad-http-version"),
    pytest.param(_request("/v1/matches", b"{" + b" " * 5000 + b"}"), 413, id="content-length-over-limit"),
    pytest.param(b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                 + b"".join(b"400\r\n" + b" " * 1024 + b"\r\n" for _ in range(5)) + b"0\r\n\r\n",
                 413, id="chunked-over-limit"),
])
def test_server_layer_errors_are_problem_details(gateway: Gateway, raw: bytes, status: int) -> None:
    got, headers, body = _exchange(_address(gateway), raw)
    assert got == status
    assert headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = json.loads(body)
    assert problem["status"] == status and problem["type"] == "about:blank" and problem["title"]


def test_a_chunked_body_within_the_limit_is_read_whole(gateway: Gateway) -> None:
    chunks = [CREATE[:10], CREATE[10:]]
    raw = (b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
           + b"".join(f"{len(c):x}\r\n".encode() + c + b"\r\n" for c in chunks) + b"0\r\n\r\n")
    status, _, body = _exchange(_address(gateway), raw)
    assert status == 201, body
    assert json.loads(body)["state"]["variant"] == "kozel"


@pytest.mark.serial
def test_sigterm_lets_every_request_already_sent_complete(start_gateway: Callable[..., Gateway],
                                                          engine_proc: EngineProc) -> None:
    gateway = start_gateway(engine_proc.address, "--workers", "1")
    address = _address(gateway)
    conns = []
    for i in range(60):
        conn = socket.create_connection(address, timeout=30)
        conn.sendall(_request("/v1/matches", CREATE) if i % 2 else _request("/v1/variants"))
        conns.append(conn)
    gateway.proc.send_signal(signal.SIGTERM)
    statuses: list[int] = []
    lock = threading.Lock()

    def read(conn: socket.socket) -> None:
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        finally:
            conn.close()
        with lock:
            statuses.append(int(data.split(b" ", 2)[1]) if data else 0)

    readers = [threading.Thread(target=read, args=(conn,)) for conn in conns]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(30)
    assert sorted(statuses) == [200] * 30 + [201] * 30, statuses
    assert gateway.proc.wait(30) == 0
