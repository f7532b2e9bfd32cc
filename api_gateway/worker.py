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

What bounds one client address: at most GATEWAY_CONNECTIONS_PER_ADDRESS connections of
one peer address in a worker (three quarters of its connections by default); one more is answered
`429` problem+json with Retry-After, written here before its request is read, and
closed (issue 29: 5,000 half-sent requests from one address took every connection of
both workers and pushed probes to 5.7-9.6 s).

Stopping (SIGTERM; `domino serve all` forwards Ctrl-C as SIGTERM): the worker stops
accepting at once, ends every spectator stream with its `closed`/`shutdown` line
(`api_gateway.streams`), lets the requests in flight finish (their answers say
`Connection: close`), closes the keep-alive connections waiting for a next request,
and exits as soon as none is left (checked every 50 ms; gunicorn's own worker checked
every second, and streams never ended by themselves, so every stop with a stream ran
into the graceful timeout and the streams were reset without a closing line).

Every answer gunicorn itself writes (400 on a bad request line, 414, 431, 501 ...)
is RFC 9457 problem+json like the app's own plain HTTP errors (`about:blank`,
the status phrase as title), not gunicorn's HTML page.

gRPC: grpcio's gevent mode right after gevent's monkey patching, before the app
(and its engine channel) exists: without it grpcio's completion queue is polled by a
real thread that blocks the hub. With it, each call in flight waits on one of
`api_gateway.engine_waits`' native threads (ten at most).
"""
from __future__ import annotations

import io
import json
import socket
import time
import warnings
from typing import Any

import gevent
from gevent.event import Event
from gevent.pool import Pool
from gevent.server import StreamServer
from gunicorn import util
from gunicorn.http.body import ChunkedReader
from gunicorn.workers.ggevent import GeventWorker

from api_gateway.config import from_env

MEDIA_TYPE = "application/problem+json"
#: gevent's MonkeyPatchWarning when the one module with names taken from ssl before the patch is PyJWT's jwks_client.
JWKS_ONLY_WARNING = (r"Monkey-patching ssl after ssl has already been imported .*"
                     r"Modules that had direct imports \(NOT patched\): \['jwt\.jwks_client \([^)]*\)'\]\.")
MAX_DETAIL = 1000


def problem_bytes(status: int, title: str, detail: str, extra_headers: str = "") -> bytes:
    """A whole HTTP/1.1 answer carrying a problem document; the connection closes after it.
    `extra_headers`: more header lines, each ending with CRLF."""
    body = json.dumps({"type": "about:blank", "title": title, "status": status,
                       "detail": detail[:MAX_DETAIL]}).encode()
    head = (f"HTTP/1.1 {status} {title}\r\nConnection: close\r\n{extra_headers}"
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


def refuse_and_close(sock: Any, answer: bytes) -> None:
    """Answer a connection refused before its request is read, and close it without waiting: what the
    client has sent so far is read first (unread bytes at the close would make the kernel reset the
    connection, and the reset can destroy the answer in flight), but nothing more is waited for, so
    a burst of refusals holds no place of the worker's pool (lingering 0.25 s each, 5,000 connections
    from one address queued up behind their refusals, and the probes of other addresses with them)."""
    try:
        sock.sendall(answer)
        sock.shutdown(socket.SHUT_WR)
        raw = getattr(sock, "_sock", sock)  # gevent's socket would wait for more
        drained = 0
        while drained < LINGER_BYTES:
            chunk = raw.recv(65536, socket.MSG_DONTWAIT)
            if not chunk:
                break
            drained += len(chunk)
    except OSError:  # BlockingIOError: nothing more for now
        pass


#: How often a stopping worker looks whether its connections are done.
STOP_CHECK = 0.05


class _Listener:
    """What gunicorn's connection handler asks of its listening socket (its name), which stays
    answerable once the socket is closed: a connection accepted just before a stop is still served."""

    def __init__(self, name: Any) -> None:
        self._name = name

    def getsockname(self) -> Any:
        return self._name


class GatewayWorker(GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker with gRPC made gevent-aware, the body read under a deadline,
    problem+json for the server layer's own errors, a per-address connection share and a quick,
    clean stop (module docstring)."""

    def init_process(self) -> None:
        util.write_error = write_problem  # this worker process only; used by Worker.handle_error
        cfg = from_env()
        self.max_body = cfg.max_body_bytes
        self.read_timeout = float(self.cfg.keepalive)  # GATEWAY_READ_TIMEOUT (gunicorn_conf)
        self.address_share = cfg.connections_per_address
        self.retry_after = max(1, cfg.retry_after)
        self.per_address: dict[str, int] = {}
        self.open: dict[Any, Any] = {}   # connection greenlet -> its socket
        self.busy: set[Any] = set()      # the greenlets inside a request (the others wait for one)
        self.stopping: Event | None = None
        self.stopped_cleanly = False
        super().init_process()

    def patch(self) -> None:
        with warnings.catch_warnings():
            # gunicorn patches in the worker, after the master imported ssl; gevent then warns of each module
            # that took a name from ssl before. The start's checks (the player keys) import PyJWT, whose
            # jwks_client takes `SSLContext` for a type hint only (PyJWKClient, never used here, is handed a
            # context): nothing unpatched runs. Any other module named in the warning still shows it.
            warnings.filterwarnings("ignore", message=JWKS_ONLY_WARNING)
            super().patch()
        from api_gateway import engine_waits

        engine_waits.install()  # a call waits for its completion on a native thread, one each

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        """One connection: refused at once past the address's share, else served (and counted)."""
        host = str(addr[0]) if isinstance(addr, tuple) and addr else ""
        held = self.per_address.get(host, 0)
        if self.address_share and held >= self.address_share:
            self._refuse(client, host)
            return
        self.per_address[host] = held + 1
        me = gevent.getcurrent()
        self.open[me] = client
        try:
            super().handle(listener, client, addr)
        finally:
            self.open.pop(me, None)
            self.busy.discard(me)
            left = self.per_address[host] - 1
            if left:
                self.per_address[host] = left
            else:
                del self.per_address[host]

    def _refuse(self, client: Any, host: str) -> None:
        from api_gateway.metrics import CONNECTIONS_REFUSED  # imported by the app after the fork already

        CONNECTIONS_REFUSED.labels(reason="address-share").inc()
        self.log.debug("refused a connection from %s: %d held", host, self.address_share)
        try:
            client.setblocking(1)
            refuse_and_close(client, problem_bytes(
                429, "Too Many Requests",
                f"this gateway worker holds {self.address_share} connections of your address, its most; "
                "close some, or try again after Retry-After seconds",
                f"Retry-After: {self.retry_after}\r\n"))
        finally:
            util.close(client)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> bool:
        me = gevent.getcurrent()
        self.busy.add(me)
        try:
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
        finally:
            self.busy.discard(me)

    # ------------------------------------------------------------------ stopping

    def handle_exit(self, sig: int, frame: Any) -> None:
        """SIGTERM: stop now (`run` does the work, woken here)."""
        self.alive = False
        if self.stopping is not None:
            gevent.spawn(self.stopping.set)  # out of the signal handler, as gunicorn does for SIGQUIT

    def handle_quit(self, sig: int, frame: Any) -> None:
        """SIGINT / SIGQUIT (a quick stop): the streams get their closing line first."""
        from api_gateway.streams import stop_all

        def quit_soon() -> None:
            stop_all()
            gevent.sleep(0.1)  # the closing lines go out
            GeventWorker.handle_quit(self, sig, frame)  # spawns gunicorn's quick exit

        gevent.spawn(quit_soon)

    def run(self) -> None:
        """gunicorn's gevent `run` (one server per listening socket, a pool of GATEWAY_CONNECTIONS
        each), with the quick stop of the module docstring."""
        self.stopping = Event()
        servers: list[tuple[StreamServer, Any, _Listener]] = []
        for s in self.sockets:
            s.setblocking(1)
            name = _Listener(s.getsockname())
            server = StreamServer(s, handle=lambda client, addr, name=name: self.handle(name, client, addr),
                                  spawn=Pool(self.worker_connections))
            if self.cfg.workers > 1:
                server.max_accept = 1
            server.start()
            servers.append((server, s, name))
        while self.alive:
            self.notify()
            self.stopping.wait(1.0)
        from api_gateway.streams import stop_all

        stop_all()
        for server, listener, name in servers:
            self._stop_accepting(server, listener, name)
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            if all(server.pool.free_count() == server.pool.size for server, _, _ in servers):
                self.stopped_cleanly = True  # gunicorn_conf.worker_exit: leave at once
                return
            self._close_idle()
            self.notify()
            gevent.sleep(STOP_CHECK)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server, _, _ in servers:
            server.stop(timeout=1)

    def _stop_accepting(self, server: StreamServer, listener: Any, name: _Listener) -> None:
        """Close the listening socket, first taking every connection already in its accept queue: the
        kernel resets those left there when it closes (with `reuse_port` each worker has its own queue),
        and their requests, sent before the stop, would be lost."""
        server.stop_accepting()
        try:
            listener.setblocking(False)
            while True:
                try:
                    client, addr = listener.accept()
                except OSError:  # BlockingIOError: the queue is empty
                    break
                server.pool.spawn(self.handle, name, client, addr)
        finally:
            server.close()

    def _close_idle(self) -> None:
        """End the connections waiting for a next request (keep-alive, or half sent): their reads see
        the end of input and gunicorn closes them. Those inside a request finish it first."""
        for greenlet, sock in list(self.open.items()):
            if greenlet not in self.busy:
                try:
                    sock.shutdown(socket.SHUT_RD)
                except OSError:
                    pass
