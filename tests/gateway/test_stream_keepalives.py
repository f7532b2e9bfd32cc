"""A worker's keepalive writer (`api_gateway.streams.Keepalives`) on real sockets (socket pairs): each quiet stream's
line written straight to its socket, framed as the server frames the body, when due and only while its stream
waits; a full socket hands the rest to its stream, a closed one ends it. The gateways' stream tests
(test_gateway_streams.py: chunked and HTTP/1.0 framing, news after keepalives; test_tables_streams.py: a reader
that stops reading) run it under gunicorn."""
from __future__ import annotations

import socket
from collections.abc import Iterator

import gevent
import pytest
from gevent.event import Event

from api_gateway.streams import Keepalives, body_framing

LINE = b": keepalive\n\n"
CHUNK = b"D\r\n: keepalive\n\n\r\n"  # 13 bytes, in a chunk of HTTP/1.1's chunked body


@pytest.fixture
def pairs() -> Iterator[list[tuple[socket.socket, socket.socket]]]:
    made: list[tuple[socket.socket, socket.socket]] = []
    yield made
    for server, client in made:
        server.close()
        client.close()


def _pair(made: list[tuple[socket.socket, socket.socket]]) -> tuple[socket.socket, socket.socket]:
    server, client = socket.socketpair()
    server.setblocking(False)  # as gevent keeps a worker's sockets
    client.settimeout(1)
    made.append((server, client))
    return server, client


def _read(client: socket.socket) -> bytes:
    client.setblocking(False)
    try:
        return client.recv(65536)
    except BlockingIOError:
        return b""
    finally:
        client.settimeout(1)


class Clock:
    """The writer's clock, moved by the test: no test here waits on time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_each_waiting_stream_gets_its_line_when_due_and_a_busy_one_none(
        pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    clock = Clock()
    keep = Keepalives(15.0, LINE, clock)
    (chunked, chunked_peer), (plain, plain_peer), (busy, busy_peer) = (_pair(pairs) for _ in range(3))
    quiet = [keep.add(chunked, True, Event(), start=False)]
    clock.now += 1
    quiet += [keep.add(plain, False, Event(), start=False), keep.add(busy, True, Event(), start=False)]
    quiet[0].parked = quiet[1].parked = True  # these two wait for news; the third is writing a line of its own
    clock.now += 10
    assert keep.write_due() == 4.0  # the first is due in 4 s
    assert _read(chunked_peer) == b"" and _read(plain_peer) == b""
    clock.now += 4
    assert keep.write_due() == 1.0 and _read(chunked_peer) == CHUNK and _read(plain_peer) == b""
    clock.now += 1
    assert keep.write_due() == 14.0  # the first again, a period after its line
    assert _read(plain_peer) == LINE and _read(busy_peer) == b""
    keep.wrote(quiet[0])  # its stream wrote a line (clock 1016): its keepalive is due a period from now, at 1031
    clock.now += 14
    assert keep.write_due() == 1.0 and _read(chunked_peer) == b"" and _read(plain_peer) == b""
    keep.remove(quiet[1])  # its stream ended
    clock.now += 1
    assert keep.write_due() == 15.0 and _read(chunked_peer) == CHUNK and _read(plain_peer) == b""
    assert not any(q.failed or q.pending for q in quiet)


def test_a_round_writes_a_batch_then_lets_the_worker_run(pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    clock = Clock()
    keep = Keepalives(15.0, LINE, clock)
    peers = []
    for _ in range(Keepalives.BATCH + 3):
        server, client = _pair(pairs)
        keep.add(server, True, Event(), start=False).parked = True
        peers.append(client)
    clock.now += 15
    assert keep.write_due() == 0.0  # more are due: the worker's other greenlets run first
    assert sum(_read(peer) == CHUNK for peer in peers) == Keepalives.BATCH
    assert keep.write_due() == 15.0 and all(_read(peer) in (b"", CHUNK) for peer in peers)


def test_a_full_socket_hands_the_rest_to_its_stream_and_a_closed_one_ends_it(
        pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    clock = Clock()
    keep = Keepalives(15.0, LINE, clock)
    (full, _), (closed, closed_peer) = _pair(pairs), _pair(pairs)
    for size in (4096, 1):  # a reader that stopped reading: not a byte more fits
        while True:
            try:
                full.send(b"x" * size)
            except BlockingIOError:
                break
    closed_peer.close()
    wakes = [Event(), Event()]
    quiet = [keep.add(full, True, wakes[0], start=False), keep.add(closed, True, wakes[1], start=False)]
    for q in quiet:
        q.parked = True
    clock.now += 15
    keep.write_due()
    # the full one: its stream is woken to write the line with the socket's sendall (within its timeout)
    assert wakes[0].is_set() and quiet[0].pending == CHUNK and not quiet[0].failed
    assert wakes[1].is_set() and quiet[1].failed  # the closed one: its stream ends


def test_a_stream_without_a_socket_or_a_body_is_never_written() -> None:
    clock = Clock()
    keep = Keepalives(15.0, LINE, clock)
    head = keep.add(object(), None, Event(), start=False)  # HEAD: the server writes no body
    none = keep.add(None, True, Event(), start=False)
    head.parked = none.parked = True
    clock.now += 30
    assert keep.write_due() == 15.0  # nothing kept (an object() would fail any write)
    assert not head.failed and not none.failed
    assert body_framing({"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.1"}) is True
    assert body_framing({"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.0"}) is False
    assert body_framing({"REQUEST_METHOD": "HEAD", "SERVER_PROTOCOL": "HTTP/1.1"}) is None


def test_the_writer_greenlet_writes_on_the_real_clock(pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    """The writer started with the first stream, on gevent's hub: a line within a few periods (no upper bound
    on time is judged: a loaded machine may run it late)."""
    keep = Keepalives(0.01, LINE)
    server, client = _pair(pairs)
    keep.add(server, True, Event()).parked = True
    got = b""
    for _ in range(500):
        gevent.sleep(0.01)
        got += _read(client)
        if got:
            break
    keep.stop()
    assert got.startswith(CHUNK)
