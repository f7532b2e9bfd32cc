"""A local HTTP endpoint served from a thread: the benches' and the tests' stand-ins for what the gateway
calls out to (a host app's webhook endpoint, a browser's push service) and for a scripted gateway.

`LocalServer` listens on 127.0.0.1 (port 0: a free one), serves each connection on a daemon thread once
started, and stops with `stop`. `answering` makes the handler of an endpoint that takes POSTs and answers
each with a status and no body, from a function of the request's headers and body: a receiver writes only
what it checks and keeps.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["LocalServer", "Receive", "answering"]

#: A POST's headers (as sent) and body -> the status to answer it with.
Receive = Callable[[dict[str, str], bytes], int]


class LocalServer(ThreadingHTTPServer):
    """`handler`'s server on 127.0.0.1:`port`, each connection on a daemon thread."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> Self:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def answering(receive: Receive) -> type[BaseHTTPRequestHandler]:
    """A handler that answers each POST with `receive(headers, body)`'s status, an empty body, and no log line."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = receive(dict(self.headers.items()), body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
