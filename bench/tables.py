"""How soon a move reaches the other seats' streams at an online table (issue 24).

    domino bench tables [--moves N] [--streams N] [--clock-tables N] [--json]

A four-seat Kozel table, two people (seats 0 and 1, played here through their
credentials alone) and two greedy bots. Each person's event stream is open
(`GET /v1/matches/{id}/events`, Server-Sent Events). Whoever is to move applies
its first legal action by match id; the figure is the time from sending the
apply to the update with the apply's `seq` arriving on the *other* person's
stream (the bots' replies ride in the same update), p50 / p99 / worst. Rounds are
dealt as they end; a finished match is followed by "play again".

- **one gateway**: engine + gateway on their defaults (the embedded SQLite store);
- **two gateways on one Redis**: the apply goes to gateway A and the watching
  stream comes from gateway B, both on a `redis-server` started here: the path a
  move takes between the replicas of a cluster.
- **clocks** (issue 25): `--clock-tables` (40) tables with a 5 s move clock whose
  seat to move never moves, on each setup: the time from each clock's deadline to
  the timeout's update on the other person's stream, p50 / p99 / worst (the
  keepers look every 0.2 s).
- **memory**: `--streams` (1,000) seat streams held by one gateway worker
  (GATEWAY_WORKERS=1): the worker's RSS before, with them open, after one move
  reached every one, and once all are closed.

The two setups run one after the other in one run, so their ratio is the cost of
crossing gateways. Results to bench/results/tables.json.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.redis_server import RedisServer, free_port
from bench.service import LIMITS_OFF, BenchError, Proc, percentile, start_engine, start_gateway
from clients.serve_all import dev_token_keys

Json = dict[str, Any]

#: Seconds of the idle measure, with the streams open and nothing happening.
IDLE = 5.0
#: Seconds an update may take to reach the other stream before the run is called failed.
ARRIVAL_TIMEOUT = 10.0


def _request(base: str, method: str, path: str, body: Json | None = None, credential: str | None = None) -> Json:
    """One JSON call; a problem answer raises BenchError with its text."""
    headers = {"Content-Type": "application/json"}
    if credential:
        headers["Authorization"] = f"Bearer {credential}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            answer: Json = json.loads(resp.read())
            return answer
    except urllib.error.HTTPError as exc:
        raise BenchError(f"{method} {path}: {exc.code} {exc.read()[:500]!r}") from None


class Watch:
    """One seat's event stream, read on a thread: the arrival time of every event id."""

    def __init__(self, base: str, match_id: str, credential: str, keep_data: bool = False) -> None:
        parts = urlsplit(base)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        self.conn.request("GET", f"/v1/matches/{match_id}/events",
                          headers={"Authorization": f"Bearer {credential}", "Accept": "text/event-stream"})
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            raise BenchError(f"events: {self.response.status} {self.response.read()[:500]!r}")
        self.arrived: dict[int, float] = {}
        #: With `keep_data`: each event's wall-clock arrival and its data, by id.
        self.data: dict[int, tuple[float, Json]] = {}
        self.keep_data = keep_data
        self.ended = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        event_id: int | None = None
        kind = data = ""
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("id:"):
                    event_id = int(line[3:].strip())
                elif line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                elif line == "":
                    now = time.perf_counter()
                    with self.cond:
                        if event_id is not None:
                            self.arrived.setdefault(event_id, now)
                            if self.keep_data and data:
                                self.data.setdefault(event_id, (time.time(), json.loads(data)))
                        if kind in ("end", "closed"):
                            self.ended = True
                        self.cond.notify_all()
                    event_id, kind, data = None, "", ""
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # the stream ended, or `close` shut it under the reader (http.client then finds no file)
        with self.cond:
            self.ended = True
            self.cond.notify_all()

    def wait_for(self, seq: int) -> float:
        deadline = time.monotonic() + ARRIVAL_TIMEOUT
        with self.cond:
            while seq not in self.arrived:
                left = deadline - time.monotonic()
                if left <= 0 or self.ended:
                    raise BenchError(f"update {seq} never reached the other seat's stream")
                self.cond.wait(left)
            return self.arrived[seq]

    def close(self) -> None:
        try:
            sock = self.conn.sock
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def _table(act: str, clock: Json | None = None) -> tuple[str, list[str]]:
    """A Kozel table for two people and two greedy bots, both seats taken: its match id and credentials."""
    opened = _request(act, "POST", "/v1/tables", {
        "variant": "kozel", "players": 4, **({"clock": clock} if clock else {}),
        "seats": [{"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "greedy"},
                  {"kind": "bot", "level": "greedy"}]})
    table_id = opened["table_id"]
    credentials = []
    for invite in sorted(opened["invites"], key=lambda i: i["seat"]):
        joined = _request(act, "POST", f"/v1/tables/{table_id}/join", {"invite": invite["code"],
                                                                       "name": f"bench {invite['seat']}"})
        credentials.append(joined["credential"])
    match_id = joined["match_id"]
    if not match_id:
        raise BenchError("the table's match was not dealt when its last seat was taken")
    return match_id, credentials


def measure(act: str, watch: str, moves: int) -> Json:
    """`moves` applies through gateway `act`, each timed to its arrival on the other seat's stream
    read from gateway `watch` (the same gateway, or another on the same store)."""
    match_id, credentials = _table(act)
    watches = [Watch(watch, match_id, c) for c in credentials]
    delays: list[float] = []
    rounds = matches = 0
    try:
        while len(delays) < moves:
            legal = [_request(act, "GET", f"/v1/matches/{match_id}/legal", credential=c) for c in credentials]
            mover = next((s for s, answer in enumerate(legal) if answer["actions"]), None)
            if mover is None:
                seat = _request(act, "GET", f"/v1/matches/{match_id}/seat", credential=credentials[0])
                if seat["over"]:  # play again: a new match, new streams
                    for w in watches:
                        w.close()
                    again = _request(act, "POST", f"/v1/tables/{seat['table_id']}/again", {},
                                     credential=credentials[0])
                    match_id = again["table"]["match_id"]
                    watches = [Watch(watch, match_id, c) for c in credentials]
                    matches += 1
                else:
                    _request(act, "POST", f"/v1/matches/{match_id}/next-round", {}, credential=credentials[0])
                    rounds += 1
                continue
            sent = time.perf_counter()
            answer = _request(act, "POST", f"/v1/matches/{match_id}/apply", {"action": legal[mover]["actions"][0]},
                              credential=credentials[mover])
            delays.append(watches[1 - mover].wait_for(answer["seq"]) - sent)
    finally:
        for w in watches:
            w.close()
    delays.sort()
    return {"moves": len(delays), "rounds_dealt": rounds, "matches_again": matches,
            "p50_ms": round(percentile(delays, 50) * 1000, 2), "p99_ms": round(percentile(delays, 99) * 1000, 2),
            "max_ms": round(delays[-1] * 1000, 2)}


def clocks(act: str, watch: str, tables: int) -> Json:
    """`tables` tables with a 5 s move clock whose seat to move never moves: the time from each clock's
    deadline to the timeout's update arriving on the other person's stream (read from gateway `watch`)."""
    opened = [_table(act if i % 2 else watch, {"move": 5}) for i in range(tables)]
    logs: list[tuple[float, Watch]] = []
    try:
        for match_id, credentials in opened:
            latest = _request(watch, "GET", f"/v1/matches/{match_id}/seat", credential=credentials[0])
            running = latest["clocks"]["running"]
            logs.append((latest["clocks"]["deadline"], Watch(watch, match_id, credentials[1 - running],
                                                           keep_data=True)))
        lateness: list[float] = []
        for deadline, log in logs:
            end = time.monotonic() + max(0.0, deadline - time.time()) + ARRIVAL_TIMEOUT
            while time.monotonic() < end:
                with log.cond:
                    over = [t for t, data in log.data.values() if any(e["type"] == "match_ended"
                                                                       for e in data.get("events", ()))]
                    if over:
                        lateness.append(over[0] - deadline)
                        break
                    log.cond.wait(0.1)
            else:
                raise BenchError("a clock that ran out was not applied in time")
    finally:
        for _, log in logs:
            log.close()
    lateness.sort()
    return {"clocks": len(lateness), "p50_ms": round(percentile(lateness, 50) * 1000, 1),
            "p99_ms": round(percentile(lateness, 99) * 1000, 1), "max_ms": round(lateness[-1] * 1000, 1)}


def _rss_kib(pid: int) -> int:
    """A process's resident set (VmRSS), KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchError(f"no VmRSS for pid {pid}")


def _worker_pid(gateway: Proc) -> int:
    """The one gunicorn worker of a gateway started with GATEWAY_WORKERS=1 (the master's child)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = [int(c) for t in Path(f"/proc/{gateway.popen.pid}/task").iterdir()
                    for c in (t / "children").read_text().split()]
        if children:
            return children[0]
        time.sleep(0.1)
    raise BenchError("the gateway has no worker process")


def _open_raw(base: str, match_id: str, credential: str) -> socket.socket:
    """A seat stream on a bare socket, past its headers and its first event (the `view`)."""
    parts = urlsplit(base)
    sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=30)
    sock.sendall(f"GET /v1/matches/{match_id}/events HTTP/1.1\r\nHost: bench\r\n"
                 f"Authorization: Bearer {credential}\r\nAccept: text/event-stream\r\n\r\n".encode())
    got = b""
    while b"event: view" not in got or b"\n\n" not in got.split(b"event: view", 1)[1]:
        chunk = sock.recv(65536)
        if not chunk:
            raise BenchError(f"a stream closed before its first event: {got[:300]!r}")
        got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        raise BenchError(f"a stream was refused: {got[:300]!r}")
    return sock


def _cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _store_trips(metrics: str) -> float | None:
    """The worker's live-store round trips so far (its metric; None where the gateway has no such metric)."""
    try:
        with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    found = re.findall(r"^domino_gateway_store_round_trips_total\{[^}]*\} (\S+)$", text, re.M)
    return sum(float(x) for x in found) if found else None


def _redis_commands(redis: RedisServer) -> int:
    import redis as client

    with client.Redis.from_url(redis.url) as conn:
        return int(conn.info("stats")["total_commands_processed"])


def memory(streams: int, log: Any, on_redis: bool = False) -> Json:
    """`streams` seat streams held by one gateway worker: its RSS before, with them open, and after a
    move reached every one of them; then all closed at once, and the worker's RSS once it let them go.
    While they are open and nothing happens (`IDLE` seconds): the worker's CPU, and what it asks the live
    store (its round trips; on Redis, the commands Redis served)."""
    import selectors

    with tempfile.TemporaryDirectory(prefix="bench-streams-") as tmp:
        workdir = Path(tmp)
        procs: list[Proc] = []
        socks: list[socket.socket] = []
        redis = RedisServer(workdir) if on_redis else None
        try:
            engine = start_engine(workdir)
            procs.append(engine)
            metrics = f"127.0.0.1:{free_port()}"
            gw = start_gateway(workdir, [engine], dev_token_keys(), env={
                "GATEWAY_WORKERS": "1", "GATEWAY_CONNECTIONS": str(streams + 100), "GATEWAY_STREAMS": str(streams),
                "GATEWAY_STREAMS_PER_ADDRESS": str(streams), "GATEWAY_STREAMS_PER_SEAT": str(streams),
                "GATEWAY_CONNECTIONS_PER_ADDRESS": "0", "GATEWAY_SPECTATE_KEEPALIVE": "30", **LIMITS_OFF,
                "GATEWAY_METRICS_PORT": metrics.rpartition(":")[2],
                "GATEWAY_TOKEN_STORE": redis.url if redis is not None else f"sqlite:///{workdir / 'live.sqlite3'}"})
            procs.append(gw)
            base = f"http://{gw.address}"
            worker = _worker_pid(gw)
            tables = [_table(base) for _ in range(max(1, streams // 100))]
            before = _rss_kib(worker)
            start = time.perf_counter()
            for i in range(streams):
                match_id, credentials = tables[i % len(tables)]
                socks.append(_open_raw(base, match_id, credentials[i // len(tables) % 2]))
            opened_s = time.perf_counter() - start
            held = _rss_kib(worker)
            print(f"{streams} streams open in {opened_s:.1f} s; worker RSS {before} -> {held} KiB", file=log)
            time.sleep(1.0)  # the feeds' first reads done
            cpu, trips, commands = _cpu_s(worker), _store_trips(metrics), _redis_commands(redis) if redis else 0
            time.sleep(IDLE)
            trips_after = _store_trips(metrics)
            idle = {"seconds": IDLE, "cpu_share": round((_cpu_s(worker) - cpu) / IDLE, 4),
                    "store_trips_per_s": None if trips is None or trips_after is None
                    else round((trips_after - trips) / IDLE, 2),
                    # less the INFO call of the measure itself
                    "redis_commands_per_s": None if redis is None
                    else round((_redis_commands(redis) - commands - 1) / IDLE, 2)}
            print(f"idle with them open: {idle}", file=log)
            # one move at every table: every stream must get its update
            sel = selectors.DefaultSelector()
            for sock in socks:
                sock.setblocking(False)
                sel.register(sock, selectors.EVENT_READ)
            for match_id, credentials in tables:
                for credential in credentials:
                    legal = _request(base, "GET", f"/v1/matches/{match_id}/legal", credential=credential)
                    if legal["actions"]:
                        _request(base, "POST", f"/v1/matches/{match_id}/apply", {"action": legal["actions"][0]},
                                 credential=credential)
                        break
            updated: set[int] = set()
            deadline = time.monotonic() + 30
            while len(updated) < len(socks) and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=1):
                    ready: Any = key.fileobj  # one of `socks`
                    if b"event: update" in ready.recv(65536):
                        updated.add(ready.fileno())
            after_move = _rss_kib(worker)
            for sock in socks:
                sel.unregister(sock)
                sock.close()
            socks.clear()
            time.sleep(2)
            released = _rss_kib(worker)
            return {"streams": streams, "open_s": round(opened_s, 2), "updated": len(updated), "idle": idle,
                    "rss_kib": {"before": before, "held": held, "after_move": after_move, "closed": released},
                    "kib_per_stream": round((held - before) / streams, 1)}
        finally:
            for sock in socks:
                sock.close()
            if redis is not None:
                redis.stop()
            for proc in reversed(procs):
                proc.stop()


def run(moves: int = 200, streams: int = 1000, clock_tables: int = 40, tiny: bool = False,
        log: Any = sys.stderr) -> Json:
    """Both setups, one after the other, then the memory of `streams` open streams, on this machine."""
    moves = 10 if tiny else moves
    streams = 40 if tiny else streams
    clock_tables = 4 if tiny else clock_tables
    result: Json = {"kind": "tables", "moves_per_setup": moves, "clock_tables": clock_tables}
    print(f"{streams} seat streams on one gateway worker ...", file=log)
    result["memory"] = memory(streams, log)
    print(f"{streams} seat streams on one gateway worker on Redis ...", file=log)
    result["memory_redis"] = memory(streams, log, on_redis=True)
    with tempfile.TemporaryDirectory(prefix="bench-tables-") as tmp:
        workdir = Path(tmp)
        procs: list[Proc] = []
        redis: RedisServer | None = None
        try:
            engine = start_engine(workdir)
            procs.append(engine)
            keys = dev_token_keys()  # one key for every gateway: a token sealed by one opens on another
            # every stream of the bench comes from one address: the per-address caps would refuse most
            lifted = {"GATEWAY_STREAMS_PER_ADDRESS": "100000", "GATEWAY_CONNECTIONS_PER_ADDRESS": "0", **LIMITS_OFF}
            one = start_gateway(workdir, [engine], keys, index=0,
                                env={"GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'live.sqlite3'}", **lifted})
            procs.append(one)
            print(f"one gateway (SQLite): {moves} moves ...", file=log)
            result["one_gateway"] = measure(f"http://{one.address}", f"http://{one.address}", moves)
            print(f"one gateway (SQLite): {clock_tables} turn clocks run out ...", file=log)
            result["clocks_one_gateway"] = clocks(f"http://{one.address}", f"http://{one.address}", clock_tables)
            redis = RedisServer(workdir)
            shared = {"GATEWAY_TOKEN_STORE": redis.url, **lifted}
            a = start_gateway(workdir, [engine], keys, index=1, env=shared)
            b = start_gateway(workdir, [engine], keys, index=2, env=shared)
            procs += [a, b]
            print(f"two gateways on one Redis: {moves} moves ...", file=log)
            result["two_gateways"] = measure(f"http://{a.address}", f"http://{b.address}", moves)
            print(f"two gateways on one Redis: {clock_tables} turn clocks run out ...", file=log)
            result["clocks_two_gateways"] = clocks(f"http://{a.address}", f"http://{b.address}", clock_tables)
        finally:
            for proc in reversed(procs):
                proc.stop()
            if redis is not None:
                redis.stop()
    result["p50_two_over_one"] = round(result["two_gateways"]["p50_ms"] / result["one_gateway"]["p50_ms"], 2)
    return result


def format_text(r: Json) -> str:
    lines = [f"tables: apply -> the update on the other seat's stream, {r['moves_per_setup']} moves each"]
    for name, label in (("one_gateway", "one gateway (SQLite)"), ("two_gateways", "two gateways on one Redis")):
        m = r[name]
        lines.append(f"  {label}: p50 {m['p50_ms']} ms, p99 {m['p99_ms']} ms, worst {m['max_ms']} ms "
                     f"({m['rounds_dealt']} rounds dealt, {m['matches_again']} matches again)")
    lines.append(f"  p50 two gateways / one: x{r['p50_two_over_one']}")
    for name, label in (("clocks_one_gateway", "one gateway"), ("clocks_two_gateways", "two gateways on Redis")):
        c = r[name]
        lines.append(f"  turn clocks run out, {label}: applied {c['p50_ms']} ms after the deadline (p50), "
                     f"p99 {c['p99_ms']} ms, worst {c['max_ms']} ms ({c['clocks']} clocks)")
    for name, label in (("memory", "SQLite"), ("memory_redis", "Redis")):
        if name in r and "idle" in r[name]:
            idle = r[name]["idle"]
            lines.append(f"  {r[name]['streams']} seat streams idle on one worker ({label}), {idle['seconds']} s: "
                         f"CPU {idle['cpu_share']:.1%} of a core, store round trips/s {idle['store_trips_per_s']}"
                         + (f", Redis commands/s {idle['redis_commands_per_s']}" if label == "Redis" else ""))
    m = r["memory"]
    rss = m["rss_kib"]
    lines.append(f"  {m['streams']} seat streams on one worker: RSS {rss['before']} -> {rss['held']} KiB held "
                 f"({m['kib_per_stream']} KiB a stream), {rss['after_move']} after a move reached "
                 f"{m['updated']} of them, {rss['closed']} once all closed")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench tables`'s own flags."""
    p.add_argument("--moves", type=int, default=200, help="applies timed per setup (default 200)")
    p.add_argument("--streams", type=int, default=1000, help="seat streams one worker holds for the memory "
                   "figure (default 1000)")
    p.add_argument("--clock-tables", type=int, default=40, help="tables whose turn clock runs out, per setup "
                   "(default 40)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench tables` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(moves=args.moves, streams=args.streams, clock_tables=args.clock_tables, tiny=args.tiny, log=log)
