"""The SDK's reading of a seat's Server-Sent Events (clients/sdk/tables.py) against a scripted server: the
text/event-stream format (comments, multi-line data, CRLF, retry), and resuming with Last-Event-ID after every
way a stream can stop early (the server closing mid-stream, `event: closed`, a silent connection, the client's
own drop) with no event missed and none twice; error answers raise their problem class. No gateway needed:
tests/gateway/test_sdk_tables.py plays the same against the real one."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from bench.local_http import LocalServer
from clients.sdk import Gateways, Seat, errors
from clients.sdk.tables import EventStream, parse_invite_link

Script = Callable[["Handler", int, int | None], None]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        last = self.headers.get("Last-Event-ID")
        with self.server.lock:
            number = len(self.server.requests)
            self.server.requests.append({"path": self.path, "last_event_id": last,
                                         "authorization": self.headers.get("Authorization")})
        self.server.script(self, number, int(last) if last is not None else None)

    def start(self, status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 200:
            self.send_header("Content-Type", "application/problem+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send(self, text: str) -> None:
        self.wfile.write(text.encode())
        self.wfile.flush()

    def event(self, seq: int, kind: str = "update", newline: str = "\n") -> None:
        data = {"seq": seq, "events": [{"type": "played", "seat": seq % 4, "action": f"{seq}"}]}
        self.send(f"id: {seq}{newline}event: {kind}{newline}data: {json.dumps(data)}{newline}{newline}")


class Server(LocalServer):
    def __init__(self, script: Script) -> None:
        super().__init__(Handler)
        self.script = script
        self.requests: list[dict[str, str | None]] = []
        self.lock = threading.Lock()


@pytest.fixture
def serve(local_servers: Callable[[Server], Server]) -> Callable[[Script], Server]:
    """A scripted gateway serving for the test: `serve(script)`."""
    return lambda script: local_servers(Server(script))


def stream(server: Server, **settings: object) -> EventStream:
    return EventStream(Gateways(server.url), "/v1/matches/abc/events", "the-credential", backoff=0.01, **settings)  # type: ignore[arg-type]


LAST = 9


def test_every_early_stop_resumes_with_last_event_id_none_missed_none_twice(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int, last: int | None) -> None:
        h.start(headers={"Cache-Control": "no-store"})
        if number == 0:          # the view, three updates, then the connection just ends
            h.send(": hello\n\nretry: 20\n")
            h.send('id: 0\nevent: view\ndata: {"seq": 0,\ndata:  "view": {"hand": ["1-1"]}}\n\n')
            for seq in (1, 2, 3):
                h.event(seq)
            h.send("id: 4\nevent: update\ndata: {\"seq\"")   # half an event: never handed out
        elif number == 1:        # CRLF lines, a keep-alive, then the server closes it early
            assert last is not None
            for seq in range(last + 1, 6):
                h.event(seq, newline="\r\n")
                h.send(": keepalive\r\n\r\n")
            h.send('event: closed\ndata: {"reason": "max-duration"}\n\n')
        elif number == 2:        # silent: the client gives up on it after its idle timeout
            h.send(": keepalive\n\n")
            time.sleep(1.5)
        else:                    # a server resending one the client has, then the rest and the end
            assert last is not None
            for seq in range(last, LAST + 1):
                h.event(seq)
            h.send(f"id: {LAST}\nevent: end\ndata: {{}}\n\n")

    server = serve(script)
    events = list(stream(server, idle_timeout=0.7))
    assert [e.event for e in events] == ["view"] + ["update"] * LAST + ["end"], events
    assert events[0].data == {"seq": 0, "view": {"hand": ["1-1"]}}
    assert [e.seq for e in events[1:-1]] == list(range(1, LAST + 1))
    assert [r["last_event_id"] for r in server.requests] == [None, "3", "5", "5"]
    assert {r["authorization"] for r in server.requests} == {"Bearer the-credential"}
    assert all("credential" not in str(r["path"]) for r in server.requests)


def test_the_clients_own_drop_loses_what_was_unread_and_resumes(serve: Callable[[Script], Server]) -> None:
    release = threading.Event()

    def script(h: Handler, number: int, last: int | None) -> None:
        h.start()
        first = 1 if last is None else last + 1
        for seq in range(first, first + 3 if number == 0 else LAST + 1):
            h.event(seq)
        if number == 0:
            release.wait(10)     # held open: only the client's drop ends it
            return
        h.send("event: end\ndata: {}\n\n")

    server = serve(script)
    events = stream(server)
    assert next(events).seq == 1
    events.drop()                # events 2 and 3 were sent, maybe buffered: they come again from the server
    rest = list(events)
    release.set()
    assert [e.seq for e in rest[:-1]] == list(range(2, LAST + 1)) and rest[-1].event == "end"
    assert [r["last_event_id"] for r in server.requests] == [None, "1"] and events.connections == 2


def test_a_drop_from_another_thread_wakes_the_reader(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int, last: int | None) -> None:
        h.start()
        if number == 0:
            h.event(1)
            time.sleep(5)
            return
        h.event(2)
        h.send("event: end\ndata: {}\n\n")

    server = serve(script)
    events = stream(server)
    assert next(events).seq == 1
    threading.Timer(0.3, events.drop).start()
    started = time.monotonic()
    assert [e.event for e in events] == ["update", "end"]
    assert time.monotonic() - started < 3


def test_an_error_answer_raises_its_class_and_503_is_retried(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int, last: int | None) -> None:
        if number == 0:
            h.start(503, json.dumps({"type": "/v1/problems/store-unavailable", "status": 503}).encode(),
                    {"Retry-After": "0"})
            return
        h.start(403, json.dumps({"type": "/v1/problems/sealed-forbidden", "status": 403, "title": "not yours",
                                 "detail": "a credential opens its own seat's stream"}).encode())

    server = serve(script)
    with pytest.raises(errors.SealedForbidden) as refused:
        next(stream(server))
    assert refused.value.status == 403 and len(server.requests) == 2


def test_a_stream_that_keeps_dropping_gives_up_after_its_bound(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int, last: int | None) -> None:
        h.start()

    server = serve(script)
    with pytest.raises(errors.TransportError):
        next(stream(server, reconnects=3))
    assert len(server.requests) == 4


def test_invite_links_and_seats_keep_credentials_to_themselves() -> None:
    assert parse_invite_link("http://10.0.0.5:8080/play?table=ab12&invite=K7QM2XPD") == (
        "http://10.0.0.5:8080", "ab12", "K7QM2XPD")
    assert parse_invite_link("https://example.org/domino/play?invite=X&table=T") == (
        "https://example.org/domino", "T", "X")
    for bad in ("http://10.0.0.5:8080/play?table=ab12", "ab12", "ftp://h/play?table=a&invite=b"):
        with pytest.raises(ValueError):
            parse_invite_link(bad)
    from clients.sdk import RestClient
    seat = Seat(RestClient("http://127.0.0.1:9"), "ab12", 1, "secret-credential", "guest:x", "m1")
    assert "secret" not in repr(seat)
    assert "secret" not in repr(EventStream(Gateways("http://127.0.0.1:9"), "/v1/matches/m1/events",
                                            "secret-credential"))


def test_a_close_from_another_thread_ends_the_iteration_quietly(serve: Callable[[Script], Server]) -> None:
    def script(h: Handler, number: int, last: int | None) -> None:
        h.start()
        h.event(1)
        time.sleep(5)

    server = serve(script)
    events = stream(server)
    assert next(events).seq == 1
    threading.Timer(0.3, events.close).start()
    started = time.monotonic()
    assert list(events) == [] and time.monotonic() - started < 3
    assert len(server.requests) == 1
