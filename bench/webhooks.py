"""Issue 38's figures for webhooks (docs/notifications.md, "Measured"):

- **latency**, event -> receiver (a table every `--pace` seconds, then the same as fast as one client opens
  them: a burst faster than the sender, which queues): a real gateway (gunicorn, one worker, SQLite) with webhooks to a receiver
  on this host (it verifies every signature, as a host app's server would); tables of two vouched players,
  each dealt (its last join: two ``table-dealt``) and resigned (two ``resigned``, two ``match-over``). A
  delivery's latency is its arrival at the receiver minus the moment the call that made it returned (the
  change is in the store by then): what an app's server waits after the player's call.
- **throughput**, deliveries per second of one worker's sender: the sender (`notify.sender.Sender`, its
  thread as in a worker) draining an outbox (SQLite) of N deliveries to the same receiver, in this process.
- **cost to play**: sequential hosted applies (a seat's move at an online table: POST
  /v1/matches/{id}/apply) on one gateway, at tables of guests (nobody to tell: the notifier reads the
  table and finds nobody) and at tables of vouched players (each move read, the seats' presence, the events
  made; their turns told when away), interleaved; the wall time per apply (p50, p99) and the gateway's CPU
  (its processes' utime + stime from /proc) per move, each setting's median of the repeats. A move is three
  calls here (the seat's latest, its legal actions, the apply): the CPU per move counts all three, the same
  in both settings, so their difference is the notifier's.

    domino bench webhooks [--tables 30] [--pace 0.1] [--deliveries 2000] [--applies 300] [--repeats 3] [--tiny]
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import jwt
from standardwebhooks import Webhook

from bench.local_http import LocalServer, answering
from bench.service import LIMITS_OFF, percentile, start_engine, start_gateway

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
SECRET = "whsec_" + base64.b64encode(b"b" * 32).decode()
PLAYER_SECRET = b"w" * 32


@dataclass
class Receiver:
    """A host app's endpoint: verifies each delivery's signature, notes when it arrived."""

    arrived: list[tuple[float, Json]] = field(default_factory=list)
    bad: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    hook: Webhook = field(default_factory=lambda: Webhook(SECRET))
    server: LocalServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"{self.server.url}/hooks"

    def receive(self, headers: dict[str, str], body: bytes) -> int:
        now = time.time()
        try:
            payload = self.hook.verify(body, headers)
        except Exception:  # noqa: BLE001 - counted, reported
            with self.lock:
                self.bad += 1
            return 400
        with self.lock:
            self.arrived.append((now, payload))
        return 204

    def start(self) -> Receiver:
        self.server = LocalServer(answering(self.receive)).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


class Client:
    """Calls to one gateway (urllib, JSON)."""

    def __init__(self, address: str) -> None:
        self.base = f"http://{address}"

    def call(self, method: str, path: str, body: Any = None, credential: str | None = None) -> Json:
        headers = {"Content-Type": "application/json"}
        if credential:
            headers["Authorization"] = f"Bearer {credential}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                found: Json = json.loads(reply.read() or b"{}")
                return found
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from None


def assertion(user: str) -> str:
    now = int(time.time())
    return jwt.encode({"sub": user, "iat": now, "exp": now + 3600}, PLAYER_SECRET, algorithm="HS256",
                      headers={"kid": "k1"})


@dataclass
class Table:
    table_id: str
    match_id: str
    host_key: str
    credentials: list[str]
    dealt_at: float


def open_table(client: Client, vouched: bool, n: int) -> Table:
    opened = client.call("POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                                "seats": [{"kind": "open"}, {"kind": "open"}]})
    credentials = []
    for invite in opened["invites"]:
        body: Json = {"invite": invite["code"]}
        if vouched:
            body["player"] = assertion(f"bench{n}-{invite['seat']}-{os.getpid()}")
        joined = client.call("POST", f"/v1/tables/{opened['table_id']}/join", body)
        credentials.append(joined["credential"])
    return Table(opened["table_id"], joined["match_id"], opened["host_key"], credentials, time.time())


def wait(check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not within {timeout} s")
        time.sleep(0.02)


def latency(client: Client, receiver: Receiver, tables: int, pace: float) -> Json:
    """Each delivery's arrival minus the return of the call that made it (deal: the last join; resign), a
    table every `pace` seconds (0: as fast as one client calls, a burst the sender queues)."""
    made: dict[tuple[str, str], float] = {}
    for n in range(tables):
        time.sleep(pace)
        table = open_table(client, True, n)
        made[(table.table_id, "table-dealt")] = made[(table.table_id, "invite-taken")] = table.dealt_at
        client.call("POST", f"/v1/matches/{table.match_id}/resign", {}, table.credentials[0])
        made[(table.table_id, "resigned")] = made[(table.table_id, "match-over")] = time.time()
    expected = tables * 7  # per table: dealt x2, invite taken, resigned x2, match over x2

    def arrived() -> bool:
        with receiver.lock:
            return len(receiver.arrived) >= expected
    wait(arrived)
    with receiver.lock:
        delays = sorted((at - made[(p["data"]["table_id"], p["type"])]) * 1000 for at, p in receiver.arrived
                        if (p["data"]["table_id"], p["type"]) in made)
    return {"deliveries": len(delays), "pace_s": pace, "p50_ms": round(percentile(delays, 50), 1),
            "p99_ms": round(percentile(delays, 99), 1), "max_ms": round(delays[-1], 1), "bad": receiver.bad}


def throughput(receiver: Receiver, deliveries: int) -> Json:
    """One sender draining an outbox of `deliveries` to the receiver: deliveries per second."""
    sys.path.insert(0, str(ROOT))
    from api_gateway.notify.endpoints import Endpoint, Reach
    from api_gateway.notify.outbox import Delivery, SqliteOutbox
    from api_gateway.notify.sender import Sender

    with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as tmp:
        outbox = SqliteOutbox(str(Path(tmp) / "live.notify.sqlite3"))
        now = time.time()
        body = json.dumps({"type": "your-turn", "timestamp": "2026-12-06T05:00:00Z",
                           "data": {"table_id": "t" * 32, "match_id": "m" * 32, "seat": 1, "player": "app:anna",
                                    "seq": 12}}).encode()
        outbox.put([Delivery(f"msg_{i:032x}", "k1", body, due=now, created=now) for i in range(deliveries)])
        with receiver.lock:
            receiver.arrived.clear()
        sender = Sender(outbox, {"k1": Endpoint("k1", receiver.url, (SECRET,))}, Reach(insecure=True))
        started = time.perf_counter()
        while outbox.next_due() is not None:
            sender.send_due()
        spent = time.perf_counter() - started
        outbox.close()
    with receiver.lock:
        got = len(receiver.arrived)
    return {"deliveries": deliveries, "received": got, "seconds": round(spent, 2),
            "per_second": round(deliveries / spent), "bad": receiver.bad}


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _family(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            pids += _family(int(child))
    return pids


def play(client: Client, vouched: bool, applies: int, pids: list[int], first: int) -> Json:
    """`applies` moves at tables of vouched players or of guests: wall ms per apply, gateway CPU us per apply."""
    walls: list[float] = []
    cpu = _cpu(pids)
    n = first
    table = open_table(client, vouched, n)
    while len(walls) < applies:
        latest = client.call("GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key)
        if latest["over"]:
            n += 1
            table = open_table(client, vouched, n)
            continue
        if latest["turn"] is None:
            client.call("POST", f"/v1/matches/{table.match_id}/next-round", {}, table.credentials[0])
            continue
        seat = latest["turn"]
        legal = client.call("GET", f"/v1/matches/{table.match_id}/legal", credential=table.credentials[seat])
        started = time.perf_counter()
        client.call("POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                    table.credentials[seat])
        walls.append((time.perf_counter() - started) * 1000)
    spent = _cpu(pids) - cpu
    walls.sort()
    return {"p50_ms": round(percentile(walls, 50), 2), "p99_ms": round(percentile(walls, 99), 2),
            "gateway_cpu_us_per_apply": round(spent / applies * 1e6)}


def _median(rows: list[Json], key: str) -> float:
    values = sorted(float(r[key]) for r in rows)
    return values[len(values) // 2]


def run(tables: int = 30, deliveries: int = 2000, applies: int = 300, repeats: int = 3, tiny: bool = False,
        pace: float = 0.1, log: TextIO = sys.stderr) -> Json:
    if tiny:
        tables, deliveries, applies, repeats = 3, 100, 30, 1
    from clients.serve_all import dev_token_keys

    receiver = Receiver().start()
    result: Json = {"load_average_before": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as tmp:
        workdir = Path(tmp)
        engine = start_engine(workdir)
        env = {**LIMITS_OFF, "GATEWAY_WORKERS": "1", "GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'live.sqlite3'}",
               "GATEWAY_DATABASE": f"sqlite:///{workdir / 'archive.sqlite3'}",
               "GATEWAY_PLAYER_KEYS": f"k1:{base64.b64encode(PLAYER_SECRET).decode()}",
               "GATEWAY_WEBHOOKS": f"k1={receiver.url}|{SECRET}", "GATEWAY_WEBHOOK_INSECURE": "true"}
        gateway = start_gateway(workdir, [engine], dev_token_keys("bench"), env=env)
        try:
            client = Client(gateway.address)
            print(f"webhooks: latency over {tables} tables", file=log, flush=True)
            result["latency"] = latency(client, receiver, tables, pace)
            with receiver.lock:
                receiver.arrived.clear()
            result["latency_burst"] = latency(client, receiver, tables, 0.0)
            pids = _family(gateway.popen.pid)
            rows: dict[str, list[Json]] = {"guests": [], "vouched": []}
            for rep in range(repeats):
                for name in ("guests", "vouched"):  # interleaved: the machine's drift falls on both
                    row = play(client, name == "vouched", applies, pids, rep * 10_000 + len(rows[name]) * 1000)
                    rows[name].append(row)
                    print(f"webhooks: {name} round {rep + 1}: {row}", file=log, flush=True)
            result["play"] = {name: {k: _median(r, k) for k in r[0]} | {"runs": r} for name, r in rows.items()}
        finally:
            gateway.stop()
            engine.stop()
    print(f"webhooks: one sender draining {deliveries} deliveries", file=log, flush=True)
    result["throughput"] = throughput(receiver, deliveries)
    receiver.stop()
    result["load_average_after"] = round(os.getloadavg()[0], 1)
    guests, vouched = result["play"]["guests"], result["play"]["vouched"]
    result["cost_cpu_us_per_apply"] = vouched["gateway_cpu_us_per_apply"] - guests["gateway_cpu_us_per_apply"]
    return result


def format_text(r: Json) -> str:
    lat, burst, thr = r["latency"], r["latency_burst"], r["throughput"]
    g, v = r["play"]["guests"], r["play"]["vouched"]
    return "\n".join([
        f"webhooks: event -> receiver over {lat['deliveries']} deliveries, a table each {lat['pace_s']} s: p50 "
        f"{lat['p50_ms']} ms, p99 {lat['p99_ms']} ms, worst {lat['max_ms']} ms ({lat['bad']} bad signatures)",
        f"  the same tables as fast as one client opens them: p50 {burst['p50_ms']} ms, p99 {burst['p99_ms']} ms, "
        f"worst {burst['max_ms']} ms",
        f"  one worker's sender: {thr['per_second']:,} deliveries/s ({thr['received']} of {thr['deliveries']} received "
        f"in {thr['seconds']} s)",
        f"  hosted apply, guests (nobody told): p50 {g['p50_ms']} ms, p99 {g['p99_ms']} ms, gateway CPU "
        f"{g['gateway_cpu_us_per_apply']:,.0f} us/move (seat + legal + apply)",
        f"  hosted apply, vouched players + webhooks: p50 {v['p50_ms']} ms, p99 {v['p99_ms']} ms, gateway CPU "
        f"{v['gateway_cpu_us_per_apply']:,.0f} us/move (+{r['cost_cpu_us_per_apply']:,.0f} us)",
        f"  load average {r['load_average_before']} before, {r['load_average_after']} after (a shared machine)",
    ])


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench webhooks`'s own flags."""
    p.add_argument("--tables", type=int, default=30, help="tables dealt and resigned for the latency (default 30)")
    p.add_argument("--deliveries", type=int, default=2000, help="deliveries one sender drains (default 2000)")
    p.add_argument("--applies", type=int, default=300, help="hosted applies per setting and repeat (default 300)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (default 3)")
    p.add_argument("--pace", type=float, default=0.1, help="seconds between the latency's tables (default 0.1)")


def run_args(args: argparse.Namespace, log: TextIO) -> Json:
    """`domino bench webhooks` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(args.tables, args.deliveries, args.applies, args.repeats, args.tiny, args.pace, log=log)
