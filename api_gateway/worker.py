"""The gateway's gunicorn worker: gevent, with every read bounded in time and size.

Why not gunicorn's gthread worker: it gives each connection a thread while it
reads, so a handful of clients that send half a request and wait hold every
thread (issue 19: 8 such connections stopped the gateway, `/healthz` included,
for minutes). Here each connection is a greenlet, and a worker holds up to
GATEWAY_CONNECTIONS of them; a slow one costs a few kilobytes, not a thread.
What bounds a slow client:

- the request line and headers must arrive within GATEWAY_READ_TIMEOUT seconds
  (gunicorn's keep-alive timeout around its parser; an idle keep-alive
  connection is closed after the same time);
- the body is read here, in full, before the app runs: at most
  GATEWAY_MAX_BODY_BYTES (more is 413, for a chunked body too, which Werkzeug
  would silently cut at its limit), within GATEWAY_READ_TIMEOUT seconds again
  (slower is 408); the app then reads it from memory.

Every answer gunicorn itself writes (400 on a bad request line, 414, 431, 501 ...)
is RFC 9457 problem+json like the app's own plain HTTP errors (`about:blank`,
the status phrase as title), not gunicorn's HTML page.

gRPC: `grpc.experimental.gevent.init_gevent()` right after gevent's monkey
patching, before the app (and its engine channel) exists: without it grpcio's
completion queue is polled by a real thread that blocks the hub.
"""
from __future__ import annotations

import io
import json
import os
import socket
from typing import Any

import gevent
from gunicorn import util
from gunicorn.http.body import ChunkedReader
from gunicorn.workers.ggevent import GeventWorker

MEDIA_TYPE = "application/problem+json"
MAX_DETAIL = 1000


def problem_bytes(status: int, title: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer carrying a problem document; the connection closes after it."""
    body = json.dumps({"type": "about:blank", "title": title, "status": status,
                       "detail": detail[:MAX_DETAIL]}).encode()
    head = (f"HTTP/1.1 {status} {title}\r\nConnection: close\r\n"
            f"Content-Type: {MEDIA_TYPE}\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error` with a problem document instead of an HTML page."""
    answer_and_close(sock, problem_bytes(status_int, reason, mesg))


LINGER_SECONDS = 1.0
LINGER_BYTES = 1 << 20


def answer_and_close(sock: Any, answer: bytes) -> None:
    """Send an answer given before the request was read to its end, then read what the client
    still sends (bounded in time and bytes) before the socket closes: closing with unread bytes
    makes the kernel reset the connection, and the reset can destroy the answer in flight."""
    try:
        sock.sendall(answer)
        sock.shutdown(socket.SHUT_WR)
        with gevent.Timeout(LINGER_SECONDS, False):
            drained = 0
            while drained < LINGER_BYTES and (chunk := sock.recv(65536)):
                drained += len(chunk)
    except OSError:
        pass


class BodyRefused(Exception):
    """The body came too slowly or is too large: answered here, the connection closed."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


def read_body(req: Any, sock: Any, limit: int, seconds: float) -> bytes | None:
    """The request's whole body (None when it has none), or BodyRefused: 413 over `limit`
    bytes, 408 when it is not all there within `seconds`."""
    length = next((value for name, value in req.headers if name == "CONTENT-LENGTH"), None)
    chunked = isinstance(getattr(req.body, "reader", None), ChunkedReader)
    if length is not None and int(length) > limit:  # gunicorn has checked it is a number
        raise BodyRefused(413, "Content Too Large", f"the body is {length} bytes, more than {limit}")
    if not chunked and (length is None or int(length) == 0):
        return None
    if req._expected_100_continue:  # the client waits for this before sending the body
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        req._expected_100_continue = False
    parts: list[bytes] = []
    got = 0
    try:
        with gevent.Timeout(seconds):
            while got <= limit:
                chunk = req.body.read(limit + 1 - got)
                if not chunk:
                    break
                parts.append(chunk)
                got += len(chunk)
    except gevent.Timeout:
        raise BodyRefused(408, "Request Timeout", f"the body did not arrive within {seconds:g} s") from None
    if got > limit:
        raise BodyRefused(413, "Content Too Large", f"the body is more than {limit} bytes")
    return b"".join(parts)


class GatewayWorker(GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker with gRPC made gevent-aware, the body read under a deadline,
    and problem+json for the server layer's own errors (module docstring)."""

    def init_process(self) -> None:
        util.write_error = write_problem  # this worker process only; used by Worker.handle_error
        self.max_body = int(os.environ.get("GATEWAY_MAX_BODY_BYTES") or 262144)
        self.read_timeout = float(self.cfg.keepalive)  # GATEWAY_READ_TIMEOUT (gunicorn_conf)
        super().init_process()

    def patch(self) -> None:
        super().patch()
        from grpc.experimental import gevent as grpc_gevent

        grpc_gevent.init_gevent()

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> bool:
        try:
            body = read_body(req, sock, self.max_body, self.read_timeout)
        except BodyRefused as refused:
            self.log.info("refused a request body from %s: %s", addr[0] if addr else "?", refused.detail)
            answer_and_close(sock, problem_bytes(refused.status, refused.title, refused.detail))
            raise StopIteration() from None
        if body is not None:
            req.body = io.BytesIO(body)
        result: bool = super().handle_request(listener_name, req, sock, addr)
        return result
