"""The SDK's transport failures, each its typed error, against scripted servers (no gateway needed): what is
re-sent and what is not, an answer that is not the gateway's, and a seat's stream moving to the next address
with Last-Event-ID when its own gateway stops answering. tests/gateway/test_sdk_failover.py plays the same
against real gateways killed mid-move."""
from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from bench.local_http import LocalServer
from clients.sdk import (
    ConnectionLost,
    Gateways,
    RestClient,
    Retrying,
    StreamFailed,
    TransportError,
    Unreachable,
    UnreadableAnswer,
)
from clients.sdk.tables import EventStream

from .conftest import free_port

Script = Callable[["Handler", int], None]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, *args: object) -> None:
        return None

    def _serve(self) -> None:
        with self.server.lock:
            number = len(self.server.requests)
            self.server.requests.append({"method": self.command, "path": self.path,
                                         "last_event_id": self.headers.get("Last-Event-ID")})
        self.server.script(self, number)

    do_GET = do_POST = _serve

    def answer(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def hang_up(self) -> None:
        """The connection breaks with no answer (a gateway killed as it read the request)."""
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def stream(self, *seqs: int, end: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for seq in seqs:
            self.wfile.write(f"id: {seq}\nevent: update\ndata: {json.dumps({'seq': seq})}\n\n".encode())
        if end:
            self.wfile.write(f"id: {seqs[-1]}\nevent: end\ndata: {{}}\n\n".encode())
        self.wfile.flush()


class Server(LocalServer):
    def __init__(self, script: Script, port: int = 0) -> None:
        super().__init__(Handler, port)
        self.script = script
        self.requests: list[dict[str, str | None]] = []
        self.lock = threading.Lock()


@pytest.fixture
def serve(local_servers: Callable[[Server], Server]) -> Callable[[Script], Server]:
    """A scripted gateway serving for the test: `serve(script)`."""
    return lambda script: local_servers(Server(script))


VARIANTS = json.dumps({"variants": [{"name": "kozel"}]}).encode()


def test_a_get_whose_connection_broke_is_sent_again_a_post_never(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int) -> None:
        if number in (0, 2):
            h.hang_up()
        else:
            h.answer(200, VARIANTS)

    server = serve(script)
    api = RestClient(server.url, backoff=0.01)
    assert api.variants() == [{"name": "kozel"}]                   # the GET: hung up on, then answered
    with pytest.raises(ConnectionLost) as lost:                    # the POST: may have counted, not re-sent
        api.request("POST", "/v1/tables/t/join", {"name": "Anna"})
    assert lost.value.maybe_applied and lost.value.address == server.url
    assert isinstance(lost.value, TransportError) and isinstance(lost.value, OSError)
    assert [r["method"] for r in server.requests] == ["GET", "GET", "POST"]


def test_an_answer_that_is_not_the_gateways_is_its_own_error(serve: Callable[[Script], Server]) -> None:
    server = serve(lambda h, number: h.answer(200, b"<html>captive portal</html>", "text/html"))
    with pytest.raises(UnreadableAnswer) as unreadable:
        RestClient(server.url).variants()
    assert "not JSON" in str(unreadable.value) and len(server.requests) == 1


def test_a_call_moves_to_the_next_address_at_once_and_stays(serve: Callable[[Script], Server]) -> None:
    server = serve(lambda h, number: h.answer(200, VARIANTS))
    dead = f"http://127.0.0.1:{free_port()}"
    told: list[Retrying] = []
    api = RestClient([dead, server.url], retries=0, on_retry=told.append)
    assert api.variants() and api.variants() and api.url == server.url and api.urls == [dead, server.url]
    assert [(t.failed, t.address, t.wait) for t in told] == [(dead, server.url, 0.0)]   # no retry spent on it
    with pytest.raises(Unreachable):
        RestClient([dead, f"http://127.0.0.1:{free_port()}"], retries=1, backoff=0.01).variants()


def test_a_stream_whose_gateway_stops_answering_resumes_on_the_next_with_last_event_id(
        serve: Callable[[Script], Server]) -> None:
    """The first gateway streams 1..3 and dies (its port refuses from then on); the stream goes on from the
    second with Last-Event-ID 3, every event once."""
    second = serve(lambda h, number: h.stream(4, 5, 6, end=True))

    def die_after_three(h: Handler, number: int) -> None:
        first.stop()                  # its port refuses from now on
        h.stream(1, 2, 3)

    first = Server(die_after_three, free_port()).start()
    told: list[Retrying] = []
    gateways = Gateways([first.url, second.url], on_retry=told.append)
    with EventStream(gateways, "/v1/matches/m/events", "cred", backoff=0.01) as stream:
        seen = [(e.event, e.seq) for e in stream]
    assert seen == [("update", s) for s in range(1, 7)] + [("end", 6)]
    assert [r["last_event_id"] for r in second.requests] == ["3"] and gateways.current == second.url
    assert any(t.address == second.url and isinstance(t.error, Unreachable) for t in told)


def test_a_stream_with_every_address_down_gives_up_as_stream_failed() -> None:
    gateways = Gateways([f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"])
    with pytest.raises(StreamFailed), EventStream(gateways, "/v1/matches/m/events", None, reconnects=2,
                                                  backoff=0.01) as stream:
        next(stream)
