"""Spectator streams under abuse and at a stop (issue 29), against real gateways on one and on two
gateways sharing a real Redis store.

- 2,100 streams opened and dropped: `/healthz` and `POST /v1/matches` keep answering within 1 s,
  each stream is answered (200, or 429 too-many-streams past a worker's caps), and once the
  clients leave the gateway holds none of their sockets (no CLOSE-WAIT) within seconds,
  without any event of the matches;
- SIGTERM with 300 streams open: every stream ends with `{"type":"closed","reason":"shutdown"}`
  and a whole chunked body, the requests in flight are answered, and the gateway exits within
  3 s (before: 16-17 s, streams reset); with two gateways the other one goes on serving;
- Ctrl-C on `domino serve all` (what `make run` starts) with 100 streams: the same, within 3 s;
- under Flask's threaded development server (`--dev`), a stream whose neighbour left still gets the
  match's news (feeds are shared only in gevent workers);
- a stream writes a keepalive line when it has nothing else to say, and the caps per match and
  per client address answer 429 with Retry-After;
- one address cannot take every connection of a worker: past its share it is answered 429 while
  other addresses are served.

The clients use loopback source addresses 127.0.0.x (Linux routes all of 127/8 to `lo`) to be
many addresses.
"""
from __future__ import annotations

import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bench.redis_server import RedisServer

from .conftest import REPO, TOKEN_KEYS, EngineProc, Gateway, free_port

pytestmark = pytest.mark.service

CREATE = json.dumps({"variant": "kozel", "players": 4, "seed": 7}).encode()
SHUTDOWN = b'{"type":"closed","reason":"shutdown"}\n'


def _address(gw: Gateway) -> tuple[str, int]:
    host, port = gw.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _source(i: int) -> str:
    """The i-th client address of a test (127.0.0.1, 127.0.0.2, ...)."""
    return f"127.0.{i // 250}.{i % 250 + 1}"


def _connect(gw: Gateway, source: str, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(_address(gw), timeout=timeout, source_address=(source, 0))


def _open_stream(gw: Gateway, match_id: str, source: str) -> socket.socket:
    """A spectator stream's request sent (not read)."""
    conn = _connect(gw, source)
    conn.sendall(f"GET /v1/matches/{match_id}/spectate HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    return conn


def _read_until(conns: list[socket.socket], done: Callable[[bytes], bool], seconds: float) -> list[bytes]:
    """What each connection sent until `done(received)` or its end of input, within `seconds` in all."""
    got = [b""] * len(conns)
    selector = selectors.DefaultSelector()
    for i, conn in enumerate(conns):
        conn.setblocking(False)
        selector.register(conn, selectors.EVENT_READ, i)
    left = len(conns)
    deadline = time.monotonic() + seconds
    while left and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            i = key.data
            try:
                chunk = conns[i].recv(65536)
            except (ConnectionResetError, BlockingIOError):
                chunk = b""
            got[i] += chunk
            if not chunk or done(got[i]):
                selector.unregister(conns[i])
                left -= 1
    selector.close()
    for conn in conns:
        conn.setblocking(True)
    return got


def _status(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/1.1 ") else 0


def _headers(raw: bytes) -> dict[str, str]:
    head = raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head)}


def _dechunk(raw: bytes) -> tuple[bytes, bool]:
    """The body of a chunked answer, and whether it ended properly (the last, empty chunk)."""
    body, rest = b"", raw.partition(b"\r\n\r\n")[2]
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body, True
        assert rest[size:size + 2] in (b"\r\n", b"\r", b""), rest[:size + 2]  # each chunk ends with CRLF
        body, rest = body + rest[:size], rest[size + 2:]
    return body, False


def _metric(gw: Gateway, name: str, labels: str = "") -> float:
    """One metric of a gateway's metrics port (every worker summed); `labels` as written, `{a="b"}`."""
    found = re.search(rf"^{re.escape(name + labels)} (\S+)$", gw.metrics(), flags=re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


def _close_wait(ports: set[int]) -> int:
    """Sockets in CLOSE-WAIT on these local ports (the gateways' side of connections their clients closed)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "08" and int(fields[1].rsplit(":", 1)[1], 16) in ports:
                count += 1
    return count


@dataclass
class Prober:
    """`/healthz` and `POST /v1/matches` on fresh connections from an address of their own, back to back."""

    gws: list[Gateway]
    seconds: list[float] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)  # the probes over 0.5 s: what, when (s from the start), how long
    failed: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        self.began = time.monotonic()
        i = 0
        while not self.stop.is_set():
            gw = self.gws[i % len(self.gws)]
            raw = (b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" if i % 2 else
                   b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\n"
                   b"Content-Length: " + str(len(CREATE)).encode() + b"\r\n\r\n" + CREATE)
            start = time.monotonic()
            try:
                with _connect(gw, "127.0.9.9", timeout=5) as conn:
                    conn.sendall(raw)
                    data = b""
                    while chunk := conn.recv(65536):
                        data += chunk
                status = _status(data)
            except OSError as exc:
                status = 0
                self.failed.append(repr(exc))
            took = time.monotonic() - start
            self.seconds.append(took)
            if took > 0.5:
                self.slow.append(f"{'healthz' if i % 2 else 'create'} at {start - self.began:.2f} s: {took:.2f} s")
            if status not in (200, 201):
                self.failed.append(f"{status}")
            i += 1
            time.sleep(0.05)

    def __enter__(self) -> Prober:
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)

    def figures(self) -> str:
        """The probes' count, p50, p99 and worst, for the printed summary (docs/reliability.md)."""
        ranked = sorted(self.seconds)
        return (f"{len(ranked)} probes, p50 {ranked[len(ranked) // 2] * 1000:.0f} ms, "
                f"p99 {ranked[min(len(ranked) - 1, len(ranked) * 99 // 100)] * 1000:.0f} ms, "
                f"worst {ranked[-1] * 1000:.0f} ms")


@pytest.fixture(params=["one-gateway", "two-gateways-redis"])
def gateways(request: pytest.FixtureRequest, engine_proc: EngineProc, start_gateway: Callable[..., Gateway],
             tmp_path: Path) -> Iterator[list[Gateway]]:
    """One gateway of 2 workers on its SQLite store, or two of 1 worker on one real redis-server."""
    env = {"STATE_TOKEN_KEYS": TOKEN_KEYS}
    if request.param == "one-gateway":
        yield [start_gateway(engine_proc.address, "--workers", "2",
                             env={**env, "GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path / 'versions.sqlite3'}"})]
        return
    server = RedisServer(tmp_path)
    try:
        yield [start_gateway(engine_proc.address, env={**env, "GATEWAY_TOKEN_STORE": server.url}) for _ in range(2)]
    finally:
        server.stop()


def _sealed_match(gw: Gateway) -> dict[str, Any]:
    reply = gw.post("/v1/matches", {"variant": "block", "players": 2, "mode": "sealed", "seed": 7})
    assert reply.status == 201, reply.body[:300]
    game: dict[str, Any] = reply.json
    return game


def _move(gw: Gateway, game: dict[str, Any]) -> dict[str, Any]:
    """The seat to move plays its first legal action: one more event for the spectators."""
    seat = game["view"]["to_move"]
    key = game["seat_keys"][seat]
    legal = gw.post("/v1/matches/legal", {"token": game["token"], "seat_key": key}).json["actions"]
    moved = gw.post("/v1/matches/apply", {"token": game["token"], "seat_key": key, "action": legal[0]})
    assert moved.status == 200, moved.body[:300]
    return {**moved.json, "seat_keys": game["seat_keys"]}


@pytest.mark.serial
def test_2100_streams_opened_and_dropped_leave_the_gateway_answering(gateways: list[Gateway]) -> None:
    games = [_sealed_match(gateways[0]) for _ in range(10)]
    ports = {_address(gw)[1] for gw in gateways}
    with Prober(gateways) as prober:
        time.sleep(0.3)
        started = time.monotonic()
        conns = []
        for i in range(2100):  # as in issue 29: 2,100 in 4 s
            conns.append(_open_stream(gateways[i % len(gateways)], games[i % 10]["match_id"], _source(i // 20)))
            if i % 105 == 104:
                time.sleep(max(0.0, started + (i + 1) / 2100 * 4 - time.monotonic()))
        opened = time.monotonic() - started
        # Each one answered: its status line (and, for a stream, the description that follows it).
        heads = _read_until(conns, lambda got: b"\r\n\r\n" in got and (not got.startswith(b"HTTP/1.1 200")
                                                                       or b"description" in got), 30)
        for conn in conns:
            conn.close()
        dropped = time.monotonic()
        while _close_wait(ports) and time.monotonic() - dropped < 10:
            time.sleep(0.1)
        freed = time.monotonic() - dropped
        lingering = _close_wait(ports)
        time.sleep(0.5)
    statuses = [_status(h) for h in heads]
    refused = [h for h in heads if _status(h) == 429]
    print(f"\n2,100 streams opened in {opened:.2f} s: {statuses.count(200)} 200, {len(refused)} 429; "
          f"no CLOSE-WAIT {freed:.2f} s after the drop; {prober.figures()}; over 0.5 s: {prober.slow}")
    assert statuses.count(200) + len(refused) == 2100, sorted(set(statuses))
    assert statuses.count(200) >= 400          # streams were held, not only refused
    for head in refused:
        body = json.loads(head.partition(b"\r\n\r\n")[2] or b"{}") if b"Content-Length" in head else {}
        assert _headers(head)["content-type"] == "application/problem+json"
        assert int(_headers(head)["retry-after"]) >= 1
        assert not body or (body["type"] == "/v1/problems/too-many-streams" and body["limit"] in
                            ("worker", "match", "address"))
    assert lingering == 0, f"{lingering} sockets still in CLOSE-WAIT 10 s after the clients left"
    assert freed < 5.0
    assert not prober.failed, prober.failed[:5]
    assert len(prober.seconds) >= 10 and max(prober.seconds) < 1.0, (prober.slow, opened, freed)
    # Every place was given back: the same addresses watch again, and see the next event at once.
    watch = _open_stream(gateways[-1], games[0]["match_id"], _source(0))
    (head,) = _read_until([watch], lambda got: b"description" in got, 5)
    assert _status(head) == 200
    _move(gateways[0], games[0])
    (more,) = _read_until([watch], lambda got: b"round_dealt" in got or b"played" in got, 5)
    assert b'"type":"played"' in more or b'"type":"drew"' in more or b'"type":"passed"' in more, more
    watch.close()


@pytest.mark.serial
def test_sigterm_ends_300_streams_with_their_line_and_exits_within_3_s(gateways: list[Gateway]) -> None:
    stopped, others = gateways[0], gateways[1:]
    games = [_sealed_match(stopped) for _ in range(2)]
    streams = [_open_stream(stopped, games[i % 2]["match_id"], _source(i // 10)) for i in range(300)]
    heads = _read_until(streams, lambda got: b"description" in got, 20)
    assert [_status(h) for h in heads] == [200] * 300, [h[:600] for h in heads if _status(h) != 200][:2]
    idle = []
    for i in range(5):  # keep-alive connections waiting for their next request
        conn = _connect(stopped, _source(100 + i))
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        idle.append(conn)
    assert all(_status(h) == 200 for h in _read_until(idle, lambda got: b"\r\n\r\n" in got, 5))
    survivor = [_open_stream(gw, games[0]["match_id"], _source(200)) for gw in others]
    assert all(_status(h) == 200 for h in _read_until(survivor, lambda got: b"description" in got, 5))
    in_flight = []
    for i in range(20):
        conn = _connect(stopped, _source(110 + i))
        conn.sendall(b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json"
                     b"\r\nContent-Length: " + str(len(CREATE)).encode() + b"\r\n\r\n" + CREATE)
        in_flight.append(conn)

    start = time.monotonic()
    stopped.proc.send_signal(signal.SIGTERM)
    rest = _read_until(streams + idle + in_flight, lambda got: False, 10)  # each to its end of input
    code = stopped.proc.wait(10)
    took = time.monotonic() - start
    print(f"\nSIGTERM with 300 streams: exit {code} after {took:.2f} s")
    assert code == 0
    assert took < 3.0
    for head, tail in zip(heads, rest[:300], strict=True):
        body, whole = _dechunk(head + tail)
        assert whole and body.endswith(SHUTDOWN), (head + tail)[-200:]
    assert all(b"HTTP/" not in tail for tail in rest[300:305])  # idle keep-alive: closed, nothing more written
    assert [_status(a) for a in rest[305:]] == [201] * 20  # requests in flight: answered
    for conn in streams + idle + in_flight:
        conn.close()
    # A rolling deploy: the other gateway keeps its stream and serves on.
    for gw in others:
        _move(gw, games[0])
    for conn in survivor:
        (more,) = _read_until([conn], lambda got: b'"seat"' in got, 5)
        assert b'"seat"' in more
        conn.close()
    for gw in others:
        assert gw.get("/healthz").status == 200


@pytest.mark.serial
def test_ctrl_c_on_serve_all_ends_its_streams_with_their_line_within_3_s() -> None:
    """`make run` is `domino serve all`: Ctrl-C reaches it alone, it forwards SIGTERM to the gateway."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ENGINE_", "GATEWAY_", "PROMETHEUS_")) and k != "STATE_TOKEN_KEYS"}
    proc = subprocess.Popen([sys.executable, "-m", "clients.cli", "serve", "all", "--engine-port", "0",
                             "--engine-metrics-port", "off", "--gateway-metrics-port", "off", "--port", str(port)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        while not re.match(r"gateway: http://", line := proc.stdout.readline()):
            assert line, "domino serve all did not start"
        gw = Gateway(proc, f"http://127.0.0.1:{port}", log=None)  # type: ignore[arg-type] - only its calls are used
        deadline = time.monotonic() + 30
        while gw.get("/readyz").status != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        game = _sealed_match(gw)  # sealed mode out of the box: a key made for the run
        streams = [_open_stream(gw, game["match_id"], _source(i // 10)) for i in range(100)]
        heads = _read_until(streams, lambda got: b"description" in got, 10)
        assert [_status(h) for h in heads] == [200] * 100
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest = _read_until(streams, lambda got: False, 10)
        code = proc.wait(10)
        took = time.monotonic() - start
        print(f"\nCtrl-C on domino serve all with 100 streams: exit {code} after {took:.2f} s")
        assert code == 0 and took < 3.0
        assert all(_dechunk(head + tail)[0].endswith(SHUTDOWN) for head, tail in zip(heads, rest, strict=True))
        for conn in streams:
            conn.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def test_the_development_server_streams_each_match_to_every_spectator(engine_proc: EngineProc) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "api_gateway", "--dev", "--port", "0", "--metrics-port", "off",
                             "--engine", engine_proc.address],
                            cwd=REPO, env={k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
                            | {"STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_SPECTATE_KEEPALIVE": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        gw = Gateway(proc, "http://" + json.loads(proc.stdout.readline())["http"], log=None)  # type: ignore[arg-type]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if gw.get("/healthz", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        game = _sealed_match(gw)
        first, second = (_open_stream(gw, game["match_id"], _source(i)) for i in range(2))
        assert [_status(h) for h in _read_until([first, second], lambda got: b"description" in got, 5)] == [200] * 2
        first.close()
        _read_until([second], lambda got: got.count(b"keepalive") >= 3, 10)  # the first one's thread is done
        _move(gw, game)
        (news,) = _read_until([second], lambda got: b'"seat"' in got, 5)
        assert b'"seat"' in news, news[-200:]
        second.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)


def test_keepalive_lines_and_the_caps_per_match_and_address(engine_proc: EngineProc,
                                                            start_gateway: Callable[..., Gateway]) -> None:
    gw = start_gateway(engine_proc.address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_SPECTATE_KEEPALIVE": "1",
                                                  "GATEWAY_STREAMS_PER_MATCH": "3", "GATEWAY_STREAMS_PER_ADDRESS": "2"})
    one, two = _sealed_match(gw), _sealed_match(gw)
    first = [_open_stream(gw, one["match_id"], _source(0)) for _ in range(2)]
    heads = _read_until(first, lambda got: got.count(b"keepalive") >= 2, 5)
    for head in heads:  # the description, then a keepalive line after each second without news, chunk by chunk
        body, _ = _dechunk(head)
        lines = [json.loads(line) for line in body.splitlines()]
        assert lines[0]["type"] == "description" and lines[-2:] == [{"type": "keepalive"}] * 2
    _move(gw, one)  # news after the keepalives (which the stream writes itself) in the same framing
    later = _read_until(first, lambda got: b'"seat"' in got.rpartition(b"keepalive")[2], 5)
    for head, news in zip(heads, later, strict=True):
        lines = [json.loads(line) for line in _dechunk(head + news)[0].splitlines()]
        assert lines[0]["type"] == "description" and "seat" in lines[-1], lines[-3:]

    def refused(match_id: str, source: str, limit: str) -> None:
        conn = _open_stream(gw, match_id, source)
        (head,) = _read_until([conn], lambda got: False, 5)
        conn.close()
        assert _status(head) == 429 and int(_headers(head)["retry-after"]) >= 1, head[:300]
        body = json.loads(head.partition(b"\r\n\r\n")[2])
        assert body["type"] == "/v1/problems/too-many-streams" and body["limit"] == limit, body

    refused(two["match_id"], _source(0), "address")   # a third stream of the same address
    third = _open_stream(gw, one["match_id"], _source(1))
    assert _status(_read_until([third], lambda got: b"description" in got, 5)[0]) == 200
    refused(one["match_id"], _source(2), "match")     # a fourth stream of the match
    assert _metric(gw, "domino_gateway_spectator_streams") == 3
    for conn in [*first, third]:
        conn.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:                # the places come back as the clients leave
        conn = _open_stream(gw, one["match_id"], _source(0))
        (head,) = _read_until([conn], lambda got: b"\r\n\r\n" in got, 5)
        conn.close()
        if _status(head) == 200:
            break
        time.sleep(0.1)
    assert _status(head) == 200
    deadline = time.monotonic() + 3
    while _metric(gw, "domino_gateway_spectator_streams") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _metric(gw, "domino_gateway_spectator_streams") == 0  # the last one, gone too, is noticed
    # HTTP/1.0: the body is not chunked (the connection ends it), the keepalive lines neither
    old = _connect(gw, _source(0))
    old.sendall(f"GET /v1/matches/{two['match_id']}/spectate HTTP/1.0\r\nHost: t\r\n\r\n".encode())
    (head,) = _read_until([old], lambda got: got.count(b"keepalive") >= 2, 5)
    old.close()
    assert head.startswith(b"HTTP/1.0 200") and "chunked" not in _headers(head).get("transfer-encoding", ""), head
    lines = [json.loads(line) for line in head.partition(b"\r\n\r\n")[2].splitlines()]
    assert lines[0]["type"] == "description" and lines[-2:] == [{"type": "keepalive"}] * 2, lines
    spec = gw.get("/openapi.json").json["paths"]["/v1/matches/{match_id}/spectate"]["get"]["responses"]
    assert "429" in spec and "Retry-After" in spec["429"]["headers"]


@pytest.mark.serial
def test_one_address_cannot_take_every_connection(gateways: list[Gateway]) -> None:
    """5,000 half-sent requests from one address: each worker holds its share (750 of its 1,000) and
    answers the rest 429; another address is served within 2 s meanwhile (before: 5.7-9.6 s)."""
    attackers: list[socket.socket] = []
    try:
        with Prober(gateways) as prober:
            start = time.monotonic()
            for i in range(5000):
                conn = _connect(gateways[i % len(gateways)], "127.0.0.1")
                conn.sendall(b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nContent-Type: appl")
                attackers.append(conn)
            opened = time.monotonic() - start
            answers = _read_until(attackers, lambda got: b"\r\n\r\n" in got, 3)
            held = sum(1 for a in answers if a == b"")
        refused = [a for a in answers if a]
        print(f"\n5,000 half-sent requests from one address in {opened:.2f} s: {held} held, {len(refused)} "
              f"answered 429; from another address: {prober.figures()}")
        assert all(_status(a) == 429 and int(_headers(a)["retry-after"]) >= 1
                   and _headers(a)["content-type"] == "application/problem+json" for a in refused)
        assert 1400 <= held <= 1500       # two workers' shares, and no more
        assert sum(_metric(gw, "domino_gateway_connections_refused_total", '{reason="address-share"}')
                   for gw in gateways) == len(refused)
        assert not prober.failed, prober.failed[:5]
        # Within 2 s (before the address shares: 5.7-9.6 s). Not 1 s: while 5,000 connections pour in, the
        # kernel may drop a probe's SYN from the full listen queue, and its retransmission alone waits 1 s
        # (a CI run's probe: 1.04 s; the others of that run and of six runs here: 150-213 ms at worst).
        assert max(prober.seconds) < 2.0, (prober.slow, opened)
    finally:
        for conn in attackers:
            conn.close()
