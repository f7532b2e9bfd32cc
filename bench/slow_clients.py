"""`domino bench slow-clients`: the gateway under a slow-client attack, against itself calm.

One engine and one gateway (default settings) as real processes. First calm:
`/readyz` and sealed apply at saturation (wrk, as `domino bench service`). Then
an attacker holds N connections (default 1,000) that each send half a request and
wait (half of them half the headers, half the headers and half the body), opening
a new one whenever the gateway closes one. First a probe times `GET /healthz` and
`POST /v1/matches` every 0.2 s for 12 s (the goal: every one under 1 s); then the
two paths are saturated again while the attack goes on. Reported: the probes'
worst and p99 times, throughput under attack over calm, and how the gateway ended
the attacking connections (408 problem, or closed).
"""
from __future__ import annotations

import argparse
import json
import selectors
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import service

Json = dict[str, Any]

#: How long the probe runs under the attack (alone: the goal is about the attack, not about load).
PROBE_SECONDS = 12.0

CREATE = json.dumps({"variant": "kozel", "players": 4, "seed": 7}).encode()
HALF_HEADERS = b"POST /v1/matches HTTP/1.1\r\nHost: attack\r\nContent-Type: appl"
HALF_BODY = (b"POST /v1/matches HTTP/1.1\r\nHost: attack\r\nContent-Type: application/json\r\n"
             + f"Content-Length: {len(CREATE)}\r\n\r\n".encode() + CREATE[: len(CREATE) // 2])


class Attack(threading.Thread):
    """Holds `connections` half-sent requests open, replacing each one the server ends."""

    def __init__(self, address: tuple[str, int], connections: int) -> None:
        super().__init__(daemon=True)
        self.address, self.connections = address, connections
        self.stopping = threading.Event()
        self.opened = 0
        self.ended: dict[str, int] = {}
        self.open_failed = 0

    def _open(self, selector: selectors.BaseSelector, index: int) -> None:
        try:
            conn = socket.create_connection(self.address, timeout=5)
            conn.sendall(HALF_BODY if index % 2 else HALF_HEADERS)
        except OSError:
            self.open_failed += 1
            return
        conn.setblocking(False)
        selector.register(conn, selectors.EVENT_READ, index)
        self.opened += 1

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        for index in range(self.connections):
            self._open(selector, index)
        while not self.stopping.is_set():
            for key, _ in selector.select(timeout=0.2):
                conn: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                how = data.split(b"\r\n", 1)[0].decode("latin-1") if data else "closed"
                self.ended[how] = self.ended.get(how, 0) + 1
                selector.unregister(conn)
                conn.close()
                self._open(selector, key.data)
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]


class Probe(threading.Thread):
    """Times a health check and a match creation, each on a fresh connection, every 0.2 s."""

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.stopping = threading.Event()
        self.seconds: list[float] = []
        self.failures: list[str] = []

    def _one(self, raw: bytes, expect: bytes) -> None:
        start = time.monotonic()
        try:
            with socket.create_connection(self.address, timeout=10) as conn:
                conn.sendall(raw)
                answer = conn.recv(64)
            if not answer.startswith(b"HTTP/1.1 " + expect):
                self.failures.append(answer[:40].decode("latin-1"))
        except OSError as exc:
            self.failures.append(type(exc).__name__)
        self.seconds.append(time.monotonic() - start)

    def run(self) -> None:
        health = b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
        create = (b"POST /v1/matches HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\n" + f"Content-Length: {len(CREATE)}\r\n\r\n".encode() + CREATE)
        while not self.stopping.wait(0.2):
            self._one(health, b"200")
            self._one(create, b"201")


def _throughput(paths: list[service.Path_], seconds: float, workdir: Path) -> Json:
    return {p.name: service._saturate(p, seconds, workdir) for p in paths}


def run(connections: int = 1000, seconds: float = 5.0, log: Any = None) -> Json:
    """The calm and attacked figures (module docstring)."""
    from clients.serve_all import dev_token_keys

    def say(text: str) -> None:
        if log is not None:
            print(text, file=log, flush=True)

    procs: list[service.Proc] = []
    with tempfile.TemporaryDirectory(prefix="domino-bench-slow-") as tmp:
        workdir = Path(tmp)
        try:
            engine = service.start_engine(workdir)
            procs.append(engine)
            gateway = service.start_gateway(workdir, [engine], dev_token_keys("bench"))
            procs.append(gateway)
            host, port = gateway.address.rsplit(":", 1)
            address = (host, int(port))
            paths = [p for p in service._rest_paths(gateway, workdir, seconds * 2, None)
                     if p.name in ("rest_readyz", "rest_apply_sealed")]
            say(f"calm: saturating {', '.join(p.name for p in paths)} for {seconds:g} s each")
            calm = _throughput(paths, seconds, workdir)
            attack, probe = Attack(address, connections), Probe(address)
            say(f"attack: {connections} half-sent requests, reconnecting; probing every 0.2 s for "
                f"{PROBE_SECONDS:g} s (past the read timeout, as the gateway ends and the attacker reopens)")
            attack.start()
            time.sleep(1.0)
            probe.start()
            time.sleep(PROBE_SECONDS)
            probe.stopping.set()
            probe.join(15)
            say(f"attack: saturating {', '.join(p.name for p in paths)} again while it goes on")
            attacked = _throughput(paths, seconds, workdir)
            attack.stopping.set()
            attack.join(15)
        finally:
            for proc in reversed(procs):
                proc.stop()
    times = sorted(probe.seconds)
    return {
        "connections": connections,
        "seconds": seconds,
        "calm_req_per_s": {k: v["req_per_s"] for k, v in calm.items()},
        "attacked_req_per_s": {k: v["req_per_s"] for k, v in attacked.items()},
        "attacked_over_calm": {k: round(attacked[k]["req_per_s"] / max(calm[k]["req_per_s"], 1e-9), 3)
                               for k in calm},
        "failed_requests": {k: calm[k].get("failed", 0) + attacked[k].get("failed", 0) for k in calm},
        "probes": len(times),
        "probe_failures": probe.failures,
        "probe_max_s": round(times[-1], 4) if times else None,
        "probe_p99_s": round(service.percentile(times, 99), 4) if times else None,
        "attack_opened": attack.opened,
        "attack_open_failed": attack.open_failed,
        "attack_ended_by_gateway": attack.ended,
        "goal": "every probe under 1 s while the attack holds its connections",
        "goal_met": bool(times) and times[-1] < 1.0 and not probe.failures,
    }


def format_text(r: Json) -> str:
    lines = [f"slow clients: {r['connections']} half-sent requests held open (reconnecting)"]
    for name, calm in r["calm_req_per_s"].items():
        lines.append(f"  {name}: {calm:.0f} req/s calm, {r['attacked_req_per_s'][name]:.0f} under attack "
                     f"(x{r['attacked_over_calm'][name]:.2f}), failed {r['failed_requests'][name]}")
    lines.append(f"  probes (healthz + create, fresh connections): {r['probes']}, worst {r['probe_max_s']} s, "
                 f"p99 {r['probe_p99_s']} s, failures {len(r['probe_failures'])}")
    lines.append(f"  attacking connections opened {r['attack_opened']}, ended by the gateway: "
                 f"{r['attack_ended_by_gateway']}")
    lines.append(f"  goal ({r['goal']}): {'met' if r['goal_met'] else 'NOT met'}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench slow-clients`'s own flags."""
    p.add_argument("--connections", type=int, default=1000, help="attacking connections held open (default 1000)")
    p.add_argument("--seconds", type=float, default=5.0, help="length of one load run (default 5)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench slow-clients` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(connections=100 if args.tiny else args.connections, seconds=1.0 if args.tiny else args.seconds,
               log=log)
