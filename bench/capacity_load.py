"""The load tool of `domino bench capacity`: people at 4-seat tables, in one gevent process.

    python -m bench.capacity_load      # commands on stdin, one JSON object a line; answers likewise on stdout

Every person holds its seat's event stream (`GET /v1/matches/{id}/events`, Server-Sent Events, on a raw
socket of its own) and acts through a small pool of keep-alive connections. A table's greenlet waits a
human pause (uniformly 2-4 s, `pace`) and then does what a person's app would: the seat to move (`to_move`
of the latest `view` on its stream) applies the first of its `legal` actions (`POST .../apply`, by
credential); a round that is over is dealt again (`next-round`), a match that is over is played again
(`again`, new streams). Each apply is timed from its sending to the update with its `seq` on each of
the three *other* seats' streams. No bots: every seat is a person.

Commands (the controller, `bench.capacity`, sends them; each is answered by one line):

- ``{"cmd": "seat", "tables": N, "gateways": ["host:port", ...], "playing": true}``: N more tables;
  seat s of table t streams and acts through gateway (t + s) mod len(gateways);
- ``{"cmd": "measure", "seconds": S}``: the samples of S seconds: every delay (ms), apply times,
  moves, failures, and this process's own CPU seconds;
- ``{"cmd": "pause"}`` / ``{"cmd": "resume"}``: the tables stop (resume) moving, streams stay open;
- ``{"cmd": "probe", "moves": N, "rate": R}``: while paused, N single moves at random tables, R a second;
- ``{"cmd": "floor", "url": "http://host:port/healthz", "connections": C, "seconds": S}``: GET as fast
  as C keep-alive connections can, with this same HTTP client: the bare floor's requests per second;
- ``{"cmd": "clear"}``: every table left, its streams closed (for the next setup);
- ``{"cmd": "quit"}``.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402  (after the patch: the standard library's sockets are gevent's)
import random  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import deque  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import gevent.pool  # noqa: E402
from gevent.fileobject import FileObjectPosix  # noqa: E402

Json = dict[str, Any]

#: Seconds an update may take to reach a stream before it counts as a failure.
ARRIVAL_TIMEOUT = 10.0
#: A pooled connection idle longer than this is dropped, not reused (the gateway closes keep-alive at 5 s).
KEEPALIVE_S = 3.0
#: Tables opened at once by one `seat` command.
OPENING = 32
#: Failure texts kept per window (the count is exact).
KEPT_FAILURES = 20


class CallFailed(RuntimeError):
    """A call answered other than 2xx, a connection lost mid-call, or an update that never came."""


# ---------------------------------------------------------------- HTTP/1.1, keep-alive


class Connection:
    """One keep-alive HTTP/1.1 connection: a request, then its whole answer (Content-Length or chunked)."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.used = time.monotonic()

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise CallFailed("the connection closed mid-answer")
        self.buf += chunk

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._more()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def call(self, method: str, path: str, body: bytes | None = None, credential: str | None = None
             ) -> tuple[int, bytes, bool]:
        """Send one request; its status, body, and whether the server keeps the connection."""
        head = [f"{method} {path} HTTP/1.1", "Host: bench"]
        if credential:
            head.append(f"Authorization: Bearer {credential}")
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
        while b"\r\n\r\n" not in self.buf:
            self._more()
        header, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        if "content-length" in fields:
            answer = self._take(int(fields["content-length"]))
        elif fields.get("transfer-encoding") == "chunked":
            parts = []
            while size := int(self._line().split(b";")[0], 16):
                parts.append(self._take(size))
                self._take(2)
            self._take(2)
            answer = b"".join(parts)
        else:
            raise CallFailed(f"{method} {path}: an answer of no known length")
        self.used = time.monotonic()
        return status, answer, fields.get("connection", "").lower() != "close"

    def close(self) -> None:
        self.sock.close()


class Pool:
    """Keep-alive connections to one gateway, reused last-in first-out; a new one when none is free."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.free: deque[Connection] = deque()

    def call(self, method: str, path: str, body: Json | None = None, credential: str | None = None) -> Json:
        """One JSON call; anything but a 2xx answer raises CallFailed with its text."""
        conn = None
        while self.free:
            candidate = self.free.pop()
            if time.monotonic() - candidate.used < KEEPALIVE_S:
                conn = candidate
                break
            candidate.close()
        try:
            conn = conn or Connection(self.address)
            status, answer, keep = conn.call(method, path, None if body is None else json.dumps(body).encode(),
                                             credential)
        except OSError as exc:
            if conn is not None:
                conn.close()
            raise CallFailed(f"{method} {path}: {exc}") from None
        except CallFailed:
            if conn is not None:
                conn.close()
            raise
        if keep:
            self.free.append(conn)
        else:
            conn.close()
        if not 200 <= status < 300:
            raise CallFailed(f"{method} {path}: {status} {answer[:300]!r}")
        result: Json = json.loads(answer) if answer else {}
        return result


# ---------------------------------------------------------------- a seat's stream


class Stream:
    """One seat's event stream on a socket of its own: the latest event's data, and when each id arrived."""

    def __init__(self, address: str, match_id: str, credential: str, on_failure: Any) -> None:
        host, _, port = address.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=None)
        self.sock.sendall(f"GET /v1/matches/{match_id}/events HTTP/1.1\r\nHost: bench\r\n"
                          f"Authorization: Bearer {credential}\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.arrived: dict[int, float] = {}
        self.last_id = -1
        self.last_data = b""
        self.end_seen = False  # `end` came: the match is over, the stream closes
        self.ended = False  # nothing more will come
        self.closing = False
        self.on_failure = on_failure
        self.news = gevent.event.Event()
        self.first = gevent.event.Event()
        self.reader = gevent.spawn(self._read)

    def _read(self) -> None:
        raw = b""
        try:
            while b"\r\n\r\n" not in raw:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise CallFailed("a stream closed before its headers")
                raw += chunk
            header, _, raw = raw.partition(b"\r\n\r\n")
            if not header.startswith(b"HTTP/1.1 200"):
                raise CallFailed(f"a stream was refused: {header[:200]!r} {raw[:200]!r}")
            payload = b""
            while True:  # chunked transfer: size line, that many bytes, CRLF
                while b"\r\n" in raw:
                    size_line, _, rest = raw.partition(b"\r\n")
                    size = int(size_line.split(b";")[0], 16)
                    if len(rest) < size + 2:
                        break
                    payload += rest[:size]
                    raw = rest[size + 2:]
                    while b"\n\n" in payload:
                        event, _, payload = payload.partition(b"\n\n")
                        self._event(event)
                    if size == 0:
                        if self.end_seen:
                            return
                        raise CallFailed("the stream ended")
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise CallFailed("the stream closed")
                raw += chunk
        except (OSError, CallFailed, ValueError) as exc:
            if not self.closing and not self.end_seen:
                self.on_failure(f"stream: {exc}")
        finally:
            self.ended = True
            self.first.set()
            self.news.set()

    def _event(self, event: bytes) -> None:
        now = time.perf_counter()
        event_id: int | None = None
        kind = b""
        data = b""
        for line in event.split(b"\n"):
            if line.startswith(b"id:"):
                event_id = int(line[3:])
            elif line.startswith(b"event:"):
                kind = line[6:].strip()
            elif line.startswith(b"data:"):
                data = line[5:].strip()
        if kind == b"end":
            self.end_seen = True
        elif kind == b"closed":
            raise CallFailed(f"the gateway closed the stream: {data[:200]!r}")
        if event_id is not None and data:
            self.arrived[event_id] = now
            if len(self.arrived) > 16:
                del self.arrived[min(self.arrived)]
            self.last_id, self.last_data = event_id, data
            self.first.set()
            news, self.news = self.news, gevent.event.Event()
            news.set()

    def view(self) -> Json:
        """The seat's latest view (of the last event with data)."""
        latest: Json = json.loads(self.last_data)["view"]
        return latest

    def wait_for(self, seq: int) -> float:
        """When the update with id `seq` arrived (perf_counter); CallFailed past ARRIVAL_TIMEOUT."""
        deadline = time.monotonic() + ARRIVAL_TIMEOUT
        while seq not in self.arrived:
            if self.last_id > seq:
                raise CallFailed(f"update {seq} skipped")
            left = deadline - time.monotonic()
            if left <= 0 or self.ended:
                raise CallFailed(f"update {seq} never reached a seat's stream")
            self.news.wait(left)
        return self.arrived[seq]

    def close(self) -> None:
        self.closing = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


# ---------------------------------------------------------------- people at a table


class Samples:
    """What one measuring window saw."""

    def __init__(self) -> None:
        self.delays_ms: list[float] = []
        self.apply_ms: list[float] = []
        self.moves = 0
        self.failures = 0
        self.failure_texts: list[str] = []

    def fail(self, text: str) -> None:
        self.failures += 1
        if len(self.failure_texts) < KEPT_FAILURES:
            self.failure_texts.append(text)


class Load:
    """All the tables of this process, their pools and the window's samples."""

    def __init__(self, pace: tuple[float, float]) -> None:
        self.pace = pace
        self.tables: list[Table] = []
        self.pools: dict[str, Pool] = {}
        self.samples = Samples()
        self.playing = gevent.event.Event()
        self.playing.set()
        self.rng = random.Random(40)

    def pool(self, address: str) -> Pool:
        if address not in self.pools:
            self.pools[address] = Pool(address)
        return self.pools[address]


class Table:
    """Four people at one Kozel table: their credentials, streams, and the table's greenlet."""

    def __init__(self, load: Load, number: int, gateways: list[str]) -> None:
        self.load = load
        self.seat_gateways = [gateways[(number + s) % len(gateways)] for s in range(4)]
        self.host = load.pool(gateways[number % len(gateways)])
        self.credentials: list[str] = []
        self.streams: list[Stream] = []
        self.table_id = self.match_id = ""
        self.busy = False
        self.greenlet: gevent.Greenlet | None = None

    def _pool(self, seat: int) -> Pool:
        return self.load.pool(self.seat_gateways[seat])

    def open(self) -> None:
        """Open the table, take its four seats by their invites, and open the four streams."""
        opened = self.host.call("POST", "/v1/tables", {"variant": "kozel", "players": 4,
                                                       "seats": [{"kind": "open"}] * 4})
        self.table_id = opened["table_id"]
        joined: Json = {}
        for invite in sorted(opened["invites"], key=lambda i: i["seat"]):
            joined = self._pool(invite["seat"]).call("POST", f"/v1/tables/{self.table_id}/join",
                                                     {"invite": invite["code"], "name": f"person {invite['seat']}"})
            self.credentials.append(joined["credential"])
        self._watch(joined["match_id"])

    def _watch(self, match_id: str) -> None:
        self.match_id = match_id
        self.streams = [Stream(self.seat_gateways[s], match_id, self.credentials[s], self._stream_failed)
                        for s in range(4)]
        for stream in self.streams:
            if not stream.first.wait(ARRIVAL_TIMEOUT) or stream.last_id < 0:
                raise CallFailed("a stream's first event never came")

    def _stream_failed(self, text: str) -> None:
        self.load.samples.fail(text)  # the window of now, not of when the stream opened

    def close(self) -> None:
        for stream in self.streams:
            stream.close()

    def play(self) -> None:
        """Moves at a human pace while the load plays; a failure is counted and the table plays on."""
        rng = self.load.rng
        gevent.sleep(rng.uniform(0, self.load.pace[1]))  # the tables do not start in step
        while True:
            self.load.playing.wait()
            gevent.sleep(rng.uniform(*self.load.pace))
            if self.load.playing.is_set():
                self.step()

    def step(self) -> None:
        if self.busy:
            return
        self.busy = True
        samples = self.load.samples
        try:
            self._step(samples)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, a failed move, counted and named
            samples.fail(f"{type(exc).__name__}: {exc} {self._where()}")
        finally:
            self.busy = False

    def _where(self) -> str:
        """Where the streams are against the match (for a failure's text): each stream's last id, the match's seq."""
        try:
            seq = self._pool(0).call("GET", f"/v1/matches/{self.match_id}/seat", credential=self.credentials[0])["seq"]
        except (CallFailed, KeyError, ValueError) as exc:
            seq = f"unknown ({exc})"
        return f"(match {self.match_id[:8]}: streams at {[s.last_id for s in self.streams]}, the match at {seq})"

    def _step(self, samples: Samples) -> None:
        view = self.streams[0].view()
        if view["match_over"]:
            for stream in self.streams:
                stream.close()
            again = self._pool(0).call("POST", f"/v1/tables/{self.table_id}/again", {},
                                       credential=self.credentials[0])
            self._watch(again["table"]["match_id"])
            return
        if view["round_over"]:
            dealt = self._pool(0).call("POST", f"/v1/matches/{self.match_id}/next-round", {},
                                       credential=self.credentials[0])
            for stream in self.streams:
                stream.wait_for(dealt["seq"])
            return
        mover = view["to_move"]
        legal = self.streams[mover].view()["legal"] or self._pool(mover).call(
            "GET", f"/v1/matches/{self.match_id}/legal", credential=self.credentials[mover])["actions"]
        sent = time.perf_counter()
        answer = self._pool(mover).call("POST", f"/v1/matches/{self.match_id}/apply", {"action": legal[0]},
                                        credential=self.credentials[mover])
        answered = time.perf_counter()
        seq = answer["seq"]
        delays = [(self.streams[s].wait_for(seq) - sent) * 1000 for s in range(4) if s != mover]
        self.streams[mover].wait_for(seq)  # its latest view is this move's, for the next step
        if samples is self.load.samples:  # not a window that ended meanwhile
            samples.moves += 1
            samples.apply_ms.append(round((answered - sent) * 1000, 3))
            samples.delays_ms += [round(d, 3) for d in delays]


# ---------------------------------------------------------------- commands


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _seat(load: Load, tables: int, gateways: list[str], playing: bool) -> Json:
    started = time.monotonic()
    failures_before = load.samples.failures
    if not playing:
        load.playing.clear()
    group = gevent.pool.Pool(OPENING)
    opened: list[Table] = []

    def one(number: int) -> None:
        table = Table(load, number, gateways)
        try:
            table.open()
        except (CallFailed, OSError, ValueError, KeyError) as exc:
            load.samples.fail(f"opening a table: {type(exc).__name__}: {exc}")
            table.close()
            return
        opened.append(table)

    for number in range(len(load.tables), len(load.tables) + tables):
        group.spawn(one, number)
    group.join()
    load.tables += opened
    for table in opened:
        table.greenlet = gevent.spawn(table.play)
    return {"tables": len(load.tables), "opened": len(opened), "seconds": round(time.monotonic() - started, 2),
            "failures": load.samples.failures - failures_before, "failure_texts": load.samples.failure_texts[-5:]}


def _measure(load: Load, seconds: float) -> Json:
    load.samples = Samples()
    cpu, started = _cpu_s(), time.monotonic()
    gevent.sleep(seconds)
    samples, load.samples = load.samples, Samples()
    return {"seconds": round(time.monotonic() - started, 3), "moves": samples.moves,
            "delays_ms": samples.delays_ms, "apply_ms": samples.apply_ms, "failures": samples.failures,
            "failure_texts": samples.failure_texts, "load_cpu_s": round(_cpu_s() - cpu, 3),
            "streams_open": sum(1 for t in load.tables for s in t.streams if not s.ended)}


def _probe(load: Load, moves: int, rate: float) -> Json:
    load.samples = Samples()
    cpu, started = _cpu_s(), time.monotonic()
    tables = load.rng.sample(load.tables, len(load.tables))  # each move at another table while there are some
    steps = [gevent.spawn_later(i / rate, tables[i % len(tables)].step) for i in range(moves)]
    gevent.joinall(steps)
    samples, load.samples = load.samples, Samples()
    return {"seconds": round(time.monotonic() - started, 3), "moves": samples.moves,
            "delays_ms": samples.delays_ms, "apply_ms": samples.apply_ms, "failures": samples.failures,
            "failure_texts": samples.failure_texts, "load_cpu_s": round(_cpu_s() - cpu, 3)}


def _floor(url: str, connections: int, seconds: float) -> Json:
    """GETs of `url` back to back on `connections` keep-alive connections for `seconds`."""
    address, _, path = url.removeprefix("http://").partition("/")
    counts = [0] * connections
    failures = [0]
    end = time.monotonic() + seconds

    def loop(k: int) -> None:
        conn = Connection(address)
        while time.monotonic() < end:
            status, _, keep = conn.call("GET", "/" + path)
            if status != 200 or not keep:
                failures[0] += 1
                conn.close()
                conn = Connection(address)
            counts[k] += 1
        conn.close()

    cpu, started = _cpu_s(), time.monotonic()
    gevent.joinall([gevent.spawn(loop, k) for k in range(connections)], raise_error=True)
    elapsed = time.monotonic() - started
    return {"requests": sum(counts), "req_per_s": round(sum(counts) / elapsed, 1), "failures": failures[0],
            "seconds": round(elapsed, 3), "load_cpu_s": round(_cpu_s() - cpu, 3)}


def _clear(load: Load) -> int:
    gevent.killall([t.greenlet for t in load.tables if t.greenlet is not None])
    for table in load.tables:
        table.close()
    cleared = len(load.tables)
    load.tables = []
    for pool in load.pools.values():
        while pool.free:
            pool.free.pop().close()
    load.pools = {}
    load.playing.set()
    return cleared


def serve(pace: tuple[float, float]) -> None:
    """Read commands from stdin until `quit` (or its end); answer each on stdout."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    load = Load(pace)
    commands = FileObjectPosix(sys.stdin.fileno(), "rb")
    print(json.dumps({"ready": True, "nofile": hard}), flush=True)
    for raw in commands:
        cmd: Json = json.loads(raw)
        what = cmd["cmd"]
        if what == "quit":
            break
        if what == "seat":
            out = _seat(load, cmd["tables"], cmd["gateways"], cmd.get("playing", True))
        elif what == "measure":
            out = _measure(load, cmd["seconds"])
        elif what == "pause":
            load.playing.clear()
            out = {"paused": True}
        elif what == "resume":
            load.playing.set()
            out = {"paused": False}
        elif what == "probe":
            out = _probe(load, cmd["moves"], cmd["rate"])
        elif what == "floor":
            out = _floor(cmd["url"], cmd["connections"], cmd["seconds"])
        elif what == "clear":
            out = {"cleared": _clear(load)}
        else:
            out = {"error": f"unknown command {what!r}"}
        print(json.dumps(out), flush=True)
    _clear(load)


if __name__ == "__main__":
    serve((float(sys.argv[1]), float(sys.argv[2])) if len(sys.argv) > 2 else (2.0, 4.0))
