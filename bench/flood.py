"""An ordinary player's calls while one client floods the service (issue 37, item 7).

    domino bench flood [--seconds S] [--flooders N]

One client (address 127.0.0.2, `--flooders` threads in a process of its own, keep-alive
connections) sends, as fast as it is answered, in turn: `POST /v1/tables`, `POST /v1/seek` and
`POST /v1/matches/{id}/events/ticket` with one credential, the probes' flood (20,000 tables in
67 s, 2,000 seeks in 37 s, 5,000 tickets in 9.4 s). Meanwhile an ordinary player (127.0.0.1, one
connection, one call at a time) opens a four-seat Kozel table for two people and two greedy bots,
takes both seats and plays the seat to move (`POST /v1/matches/{id}/apply`, by credential) for a
few moves, then opens the next table: the figures are its create and apply times, p50 / p99.

Phases, each `--seconds` long, on a gateway (default workers) over one engine and a Redis of its
own (the cluster store; a fresh one per gateway):

- **calm**: limits off, no flood: the floor;
- **flood, limits off**: every `GATEWAY_LIMIT_*` set to off (what the probes met);
- **flood, limits on**: the defaults (`api_gateway.http.limits`).

Results to bench/results/flood.json. The machine is shared: the phases run back to back in one
run, so compare them with each other, not with another run's.
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.redis_server import RedisServer
from bench.service import LIMITS_OFF, BenchError, Proc, percentile, start_engine, start_gateway
from clients.serve_all import dev_token_keys

Json = dict[str, Any]

FLOODER = "127.0.0.2"
PLAYER = "127.0.0.1"
#: Every limit switched off: the gateway as the probes found it.
#: Moves the ordinary player makes at one table before opening the next.
MOVES_PER_TABLE = 6
KOZEL_TWO_PEOPLE = {"variant": "kozel", "players": 4, "seats": [
    {"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "greedy"}]}


class Client:
    """One keep-alive connection to the gateway from a loopback address of its own."""

    def __init__(self, address: str, source: str) -> None:
        host, _, port = address.rpartition(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))

    def call(self, method: str, path: str, body: Json | None = None, credential: str | None = None) -> tuple[int, Json]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if credential is not None:
            headers["Authorization"] = f"Bearer {credential}"
        try:
            self.conn.request(method, path, None if body is None else json.dumps(body), headers)
            reply = self.conn.getresponse()
            data = reply.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()  # reconnects on the next request
            return 0, {}
        return reply.status, (json.loads(data) if data.startswith(b"{") else {})

    def ok(self, method: str, path: str, body: Json | None = None, credential: str | None = None) -> Json:
        status, answer = self.call(method, path, body, credential)
        if status not in (200, 201):
            raise BenchError(f"{method} {path}: {status} {str(answer)[:300]}")
        return answer


def _seated(client: Client) -> tuple[str, list[str], float]:
    """A table of two people (both seats taken here) and two bots: its match id, the credentials, and the
    seconds the create took."""
    started = time.perf_counter()
    opened = client.ok("POST", "/v1/tables", KOZEL_TWO_PEOPLE)
    took = time.perf_counter() - started
    joined: Json = {}
    credentials = []
    for invite in sorted(opened["invites"], key=lambda i: i["seat"]):
        joined = client.ok("POST", f"/v1/tables/{opened['table_id']}/join", {"invite": invite["code"]})
        credentials.append(joined["credential"])
    return joined["match_id"], credentials, took


def ordinary_player(address: str, seconds: float) -> Json:
    """An ordinary player's tables and moves for `seconds`: its create and apply times."""
    client = Client(address, PLAYER)
    creates: list[float] = []
    applies: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        match_id, credentials, took = _seated(client)
        creates.append(took)
        for _ in range(MOVES_PER_TABLE):
            legal = [client.ok("GET", f"/v1/matches/{match_id}/legal", credential=c) for c in credentials]
            mover = next((s for s, answer in enumerate(legal) if answer["actions"]), None)
            if mover is None:  # the round is over: the next table
                break
            started = time.perf_counter()
            client.ok("POST", f"/v1/matches/{match_id}/apply", {"action": legal[mover]["actions"][0]},
                      credential=credentials[mover])
            applies.append(time.perf_counter() - started)
    return {"creates": _times(creates), "applies": _times(applies)}


def _times(xs: list[float]) -> Json:
    xs = sorted(xs)
    return {"n": len(xs), "p50_ms": round(percentile(xs, 50) * 1000, 1),
            "p99_ms": round(percentile(xs, 99) * 1000, 1)}


def _flood(address: str, seconds: float, threads: int, answers: Any) -> None:
    """The flooding client (run in a process of its own): `threads` connections, each sending tables, seeks
    and tickets in turn for `seconds`; puts the count of answers by (request, status) on `answers`."""
    setup = Client(address, FLOODER)
    match_id, credentials, _ = _seated(setup)
    kinds: list[tuple[str, str, str, Json | None, str | None]] = [
        ("tables", "POST", "/v1/tables", {"variant": "kozel", "players": 4, "public": True}, None),
        ("seeks", "POST", "/v1/seek", {"variant": "kozel", "players": 4}, None),
        ("tickets", "POST", f"/v1/matches/{match_id}/events/ticket", None, credentials[0])]
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def flood(first: int) -> None:
        client = Client(address, FLOODER)
        mine: Counter[str] = Counter()
        i = first
        while time.monotonic() < end:
            kind, method, path, body, credential = kinds[i % len(kinds)]
            mine[f"{kind} {client.call(method, path, body, credential)[0]}"] += 1
            i += 1
        with lock:
            counts.update(mine)

    workers = [threading.Thread(target=flood, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    answers.put(dict(counts))


def phase(address: str, seconds: float, flooders: int) -> Json:
    """The ordinary player's figures for `seconds`, with `flooders` flooding threads (0: none)."""
    result: Json = {}
    flooder = None
    if flooders:
        answers: Any = multiprocessing.get_context("spawn").Queue()
        flooder = multiprocessing.get_context("spawn").Process(target=_flood, args=(address, seconds + 1, flooders,
                                                                                    answers))
        flooder.start()
        time.sleep(1.0)  # the flood is under way before the player's first call
    result.update(ordinary_player(address, seconds))
    if flooder is not None:
        counts: dict[str, int] = answers.get(timeout=60)
        flooder.join(30)
        result["flood"] = {kind: {status.split()[1]: n for status, n in sorted(counts.items())
                                  if status.split()[0] == kind}
                           for kind in ("tables", "seeks", "tickets")}
        result["flood_per_second"] = round(sum(counts.values()) / (seconds + 1))
    return result


def run(seconds: float, flooders: int, log: Any = sys.stderr) -> Json:
    result: Json = {"seconds": seconds, "flooders": flooders, "phases": {}}
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as tmp:
        workdir = Path(tmp)
        procs: list[Proc] = []
        redises: list[RedisServer] = []
        try:
            engine = start_engine(workdir)
            procs.append(engine)
            keys = dev_token_keys()

            def gateway(index: int, env: dict[str, str]) -> tuple[Proc, RedisServer]:
                redis = RedisServer(workdir)
                redises.append(redis)
                gw = start_gateway(workdir, [engine], keys, index=index,
                                   env={"GATEWAY_TOKEN_STORE": redis.url,
                                        "GATEWAY_DATABASE": f"sqlite:///{workdir / f'archive{index}.sqlite3'}",
                                        **env})
                procs.append(gw)
                return gw, redis

            setups: tuple[tuple[dict[str, str], tuple[tuple[str, int], ...]], ...] = (
                (LIMITS_OFF, (("calm", 0), ("flood, limits off", flooders))),
                ({}, (("flood, limits on", flooders),)))
            for index, (limits, phases) in enumerate(setups):
                gw, redis = gateway(index, limits)
                for name, threads in phases:
                    print(f"{name}: {seconds:.0f} s ...", file=log)
                    result["phases"][name] = phase(gw.address, seconds, threads)
                gw.stop()  # the next phase has the machine to itself
                redis.stop()
        finally:
            for proc in reversed(procs):
                proc.stop()
            for redis in redises:
                redis.stop()
    return result


def format_text(result: Json) -> str:
    lines = [f"An ordinary player's calls while one client floods ({result['flooders']} threads, "
             f"{result['seconds']:.0f} s a phase):", "",
             "| phase | flood req/s | flood answers (tables; seeks; tickets) | create p50 / p99 ms | "
             "apply p50 / p99 ms |", "|---|---|---|---|---|"]
    for name, p in result["phases"].items():
        flood = p.get("flood")
        answered = "; ".join(", ".join(f"{n} x {status}" for status, n in flood[kind].items())
                             for kind in ("tables", "seeks", "tickets")) if flood else "-"
        c, a = p["creates"], p["applies"]
        lines.append(f"| {name} | {p.get('flood_per_second', 0)} | {answered} | {c['p50_ms']} / {c['p99_ms']} "
                     f"(n {c['n']}) | {a['p50_ms']} / {a['p99_ms']} (n {a['n']}) |")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench flood`'s own flags."""
    p.add_argument("--seconds", type=float, default=20.0, help="length of one phase (default 20)")
    p.add_argument("--flooders", type=int, default=8, help="the flooding client's threads (default 8)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench flood` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(seconds=3.0 if args.tiny else args.seconds, flooders=2 if args.tiny else args.flooders, log=log)
