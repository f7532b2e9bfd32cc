"""`domino bench faults`: the engine's faults of issue 29 as figures, each against its calm twin.

Real processes with default settings (`domino bench service`'s engine and gateway), loopback only:

- ``flood``: 50 clients loop expert `suggest` and `hints` (4-player Kingdomino and Kozel) as fast as
  they are answered, Retry-After ignored (the worst client). Meanwhile a probe times ordinary calls
  (``POST /v1/matches``, Kozel) every 20 ms, and a second one a match with three expert bot seats
  every 0.2 s. Calm and flooded phases alternate (``--rounds``), so the machine's noise falls on
  both. Goal: ordinary p99 under 100 ms while flooded, and no 5xx to anyone.
- ``frozen``: two engines behind one gateway, 4 clients back to back; one engine SIGSTOPped for
  ``--freeze`` seconds (10). Goal: the throughput while frozen stays above half of before, and no
  request fails.
- ``bomb``: four bot-seat replay bombs at once (tests/gateway/replay_bomb.py: 72 moves of a
  4-player Kingdomino dynasty with three expert bot seats) against the gateway's 5 s deadline;
  the engine's CPU (its bot workers included) sampled every 0.1 s. Goal: idle within 1 s of the
  deadline.

`Flood`, `tree_cpu` and `bot_bodies` are shared with tests/gateway/test_gateway_engine_faults.py.
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import service
from bench.compiled import ROOT

Json = dict[str, Any]

FLOODERS = 50
ORDINARY = {"variant": "kozel", "players": 4}
#: Seat 1 leads (seed 3): three expert decisions before the person plays.
SEATED = {"variant": "kozel", "players": 4, "seed": 3, "bots": [{"seat": s, "level": "expert"} for s in (1, 2, 3)]}
BOMB = ROOT / "tests" / "gateway" / "data" / "kingdomino_replay_bomb.json"


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by process `pid` and every process under it (the engine's bot workers)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            tasks = list(Path(f"/proc/{p}/task").iterdir())
        except (FileNotFoundError, ProcessLookupError):
            continue  # gone meanwhile
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for task in tasks:  # each thread lists the children it started (a serving thread starts the workers)
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return total


def bot_bodies() -> list[tuple[str, Json]]:
    """Expert work for the flooders: a suggestion and the coach, in 4-player Kingdomino and Kozel."""
    from engine_service import calls

    kd, _ = calls.new_kingdomino(4, seed=3)
    kozel, _ = calls.new_match("kozel", 4, seed=3)
    return [("/v1/matches/suggest", {"state": kd.to_dict(), "level": "expert"}),
            ("/v1/matches/hints", {"state": kd.to_dict(), "seat": kd.to_move}),
            ("/v1/matches/suggest", {"state": kozel.to_dict(), "level": "expert"}),
            ("/v1/matches/hints", {"state": kozel.to_dict(), "seat": kozel.to_move})]


def _connect(address: str) -> http.client.HTTPConnection:
    host, port = address.rsplit(":", 1)
    return http.client.HTTPConnection(host, int(port), timeout=30)


def post(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[int, bytes, str | None]:
    """One POST on a kept-alive connection: status, body, Retry-After."""
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    reply = conn.getresponse()
    return reply.status, reply.read(), reply.getheader("Retry-After")


class Flood:
    """`clients` threads at `address` (host:port), each sending `bodies` in turn on its own connection as
    soon as the last one is answered, Retry-After ignored; every status is kept, and what failed (no answer
    within 30 s, a dropped connection: a stranded call) or was neither 200 nor 429."""

    def __init__(self, address: str, bodies: list[tuple[str, Json]], clients: int = FLOODERS) -> None:
        self.address = address
        self.bodies = [(path, json.dumps(body).encode()) for path, body in bodies]
        self.statuses: list[int] = []
        self.busy: list[Json] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(clients)]

    def _run(self, index: int) -> None:
        conn = _connect(self.address)
        while not self._stop.is_set():
            path, body = self.bodies[index % len(self.bodies)]
            index += 1
            try:
                status, data, retry_after = post(conn, path, body)
            except OSError as exc:
                self.failures.append(f"{path}: {type(exc).__name__} {exc}")
                conn.close()
                conn = _connect(self.address)
                continue
            self.statuses.append(status)
            if status == 429:
                self.busy.append({**json.loads(data), "retry-after": retry_after})
            elif status != 200:
                self.failures.append(f"{path}: {status} {data[:200]!r}")
        conn.close()

    def stranded(self) -> int:
        """Flooders still waiting for an answer (after `stop`)."""
        return sum(t.is_alive() for t in self._threads)

    def __enter__(self) -> Flood:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(40)


class Probe(threading.Thread):
    """`body` posted to /v1/matches every `pause` seconds on a connection of its own; each answer timed."""

    def __init__(self, address: str, body: Json, pause: float) -> None:
        super().__init__(daemon=True)
        self.address, self.body, self.pause = address, json.dumps(body).encode(), pause
        self.samples: list[tuple[float, float, int]] = []  # (sent at, seconds, status)
        self.stopping = threading.Event()

    def run(self) -> None:
        conn = _connect(self.address)
        while not self.stopping.wait(self.pause):
            sent = time.monotonic()
            try:
                status = post(conn, "/v1/matches", self.body)[0]
            except OSError:
                status = 0
                conn.close()
                conn = _connect(self.address)
            self.samples.append((sent, time.monotonic() - sent, status))
        conn.close()

    def between(self, start: float, end: float) -> list[tuple[float, int]]:
        return [(s, st) for t, s, st in self.samples if start <= t < end]


def _latency(samples: list[tuple[float, int]]) -> Json:
    times = sorted(s for s, _ in samples)
    return {"n": len(times), "p50_ms": round(service.percentile(times, 50) * 1000, 1),
            "p99_ms": round(service.percentile(times, 99) * 1000, 1), "max_ms": round(times[-1] * 1000, 1),
            "not_2xx": sum(1 for _, st in samples if not 200 <= st < 300)}


def _flood(workdir: Path, seconds: float, rounds: int, keys: str, log: Any) -> Json:
    procs: list[service.Proc] = []
    try:
        engine = service.start_engine(workdir)
        procs.append(engine)
        gateway = service.start_gateway(workdir, [engine], keys)
        procs.append(gateway)
        ordinary, seated = Probe(gateway.address, ORDINARY, 0.02), Probe(gateway.address, SEATED, 0.2)
        ordinary.start()
        seated.start()
        bodies = bot_bodies()
        calm: list[tuple[float, float]] = []
        flooded: list[tuple[float, float]] = []
        answered: dict[str, int] = {}
        failures: list[str] = []
        stranded = 0
        for i in range(rounds):
            log(f"flood round {i + 1}/{rounds}: {seconds:g} s calm, {seconds:g} s with {FLOODERS} expert flooders")
            start = time.monotonic()
            time.sleep(seconds)
            calm.append((start, time.monotonic()))
            with Flood(gateway.address, bodies) as flood:
                time.sleep(1.0)  # every flooder in its loop
                start = time.monotonic()
                time.sleep(seconds)
                flooded.append((start, time.monotonic()))
            stranded += flood.stranded()
            failures.extend(flood.failures)
            for status in flood.statuses:
                answered[str(status)] = answered.get(str(status), 0) + 1
        ordinary.stopping.set()
        seated.stopping.set()
        ordinary.join(30)
        seated.join(60)
    finally:
        for proc in reversed(procs):
            proc.stop()

    def phase(probe: Probe, windows: list[tuple[float, float]]) -> Json:
        return _latency([x for a, b in windows for x in probe.between(a, b)])

    o = {"calm": phase(ordinary, calm), "flooded": phase(ordinary, flooded)}
    result: Json = {"flooders": FLOODERS, "seconds": seconds, "rounds": rounds, "ordinary": o,
                    "seated": {"calm": phase(seated, calm), "flooded": phase(seated, flooded)},
                    "flooder_answers": answered, "flooder_failures": failures[:10], "stranded": stranded}
    result["ordinary_p99_flooded_over_calm"] = round(o["flooded"]["p99_ms"] / max(o["calm"]["p99_ms"], 0.1), 2)
    server_errors = sum(n for k, n in answered.items() if k.startswith("5")) + o["flooded"]["not_2xx"]
    result["goal"] = "ordinary p99 under 100 ms while flooded; no 5xx; no call stranded"
    result["goal_met"] = o["flooded"]["p99_ms"] < 100 and server_errors == 0 and not failures and stranded == 0
    return result


def _frozen(workdir: Path, freeze: float, keys: str, log: Any) -> Json:
    procs: list[service.Proc] = []
    done: list[tuple[float, int]] = []
    stop = threading.Event()
    try:
        a, b = service.start_engine(workdir, 1), service.start_engine(workdir, 2)
        procs += [a, b]
        gateway = service.start_gateway(workdir, [a, b], keys, 1)
        procs.append(gateway)
        body = json.dumps(ORDINARY).encode()

        def load() -> None:
            conn = _connect(gateway.address)
            while not stop.is_set():
                try:
                    status = post(conn, "/v1/matches", body)[0]
                except OSError:
                    status = 0
                    conn.close()
                    conn = _connect(gateway.address)
                done.append((time.monotonic(), status))

        threads = [threading.Thread(target=load, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        before = time.monotonic()
        time.sleep(3.0)
        log(f"frozen: one of two engines SIGSTOPped for {freeze:g} s")
        frozen_at = time.monotonic()
        a.popen.send_signal(signal.SIGSTOP)
        try:
            time.sleep(freeze)
        finally:
            a.popen.send_signal(signal.SIGCONT)
        thawed = time.monotonic()
        time.sleep(3.0)
        after = time.monotonic()
        stop.set()
        for t in threads:
            t.join(30)
    finally:
        for proc in reversed(procs):
            proc.stop()

    def rate(start: float, end: float) -> float:
        return round(sum(1 for t, _ in done if start <= t < end) / (end - start), 1)

    per_second = [rate(frozen_at + i, frozen_at + i + 1) for i in range(int(freeze))]
    result: Json = {"freeze_s": freeze, "before_req_per_s": rate(before, frozen_at),
              "frozen_req_per_s": rate(frozen_at, thawed), "after_req_per_s": rate(thawed + 1.0, after),
              "frozen_per_second": per_second, "failed": sum(1 for _, st in done if st != 201)}
    result["frozen_over_before"] = round(result["frozen_req_per_s"] / max(result["before_req_per_s"], 0.1), 2)
    result["goal"] = "throughput while frozen above half of before; no request failed"
    result["goal_met"] = result["frozen_over_before"] > 0.5 and result["failed"] == 0
    return result


def _bomb(workdir: Path, keys: str, log: Any, bombs: int = 4) -> Json:
    procs: list[service.Proc] = []
    answers: list[tuple[int, float]] = []
    samples: list[tuple[float, float]] = []
    body = BOMB.read_bytes()
    deadline_s = 5.0  # the gateway's default deadline (GATEWAY_ENGINE_TIMEOUT)
    try:
        engine = service.start_engine(workdir, 3)
        procs.append(engine)
        gateway = service.start_gateway(workdir, [engine], keys, 2)
        procs.append(gateway)

        def send() -> None:
            conn = _connect(gateway.address)
            start = time.monotonic()
            status = post(conn, "/v1/matches/replay", body)[0]
            answers.append((status, time.monotonic() - start))
            conn.close()

        log(f"bomb: {bombs} bot-seat replays of 72 moves at once, the gateway's deadline {deadline_s:g} s")
        start_cpu = tree_cpu(engine.popen.pid)
        threads = [threading.Thread(target=send, daemon=True) for _ in range(bombs)]
        sent = time.monotonic()
        for t in threads:
            t.start()
        while time.monotonic() < sent + deadline_s + 3.0:
            samples.append((time.monotonic() - sent, tree_cpu(engine.popen.pid)))
            time.sleep(0.1)
        for t in threads:
            t.join(30)
    finally:
        for proc in reversed(procs):
            proc.stop()
    busy_until = max((t for (t, c), (_, prev) in zip(samples[1:], samples) if c - prev > 0.02), default=0.0)
    result: Json = {"bombs": bombs, "deadline_s": deadline_s, "statuses": sorted(st for st, _ in answers),
              "answered_within_s": round(max(s for _, s in answers), 2) if answers else None,
              "engine_cpu_s": round(samples[-1][1] - start_cpu, 2) if samples else None,
              "busy_until_s": round(busy_until, 2),
              "idle_after_deadline_s": round(max(0.0, busy_until - deadline_s), 2)}
    result["goal"] = "the engine idle within 1 s of the deadline"
    result["goal_met"] = result["idle_after_deadline_s"] <= 1.0
    return result


def run(seconds: float = 10.0, rounds: int = 3, freeze: float = 10.0, log: Any = None) -> Json:
    """The three scenarios (module docstring)."""
    from clients.serve_all import dev_token_keys

    def say(text: str) -> None:
        if log is not None:
            print(text, file=log, flush=True)

    keys = dev_token_keys("bench")
    with tempfile.TemporaryDirectory(prefix="domino-bench-faults-") as tmp:
        workdir = Path(tmp)
        return {"kind": "faults", "flood": _flood(workdir, seconds, rounds, keys, say),
                "frozen": _frozen(workdir, freeze, keys, say), "bomb": _bomb(workdir, keys, say)}


def format_text(r: Json) -> str:
    f, z, b = r["flood"], r["frozen"], r["bomb"]
    o, s = f["ordinary"], f["seated"]
    met = {True: "met", False: "NOT met"}
    return "\n".join([
        f"flood: {f['flooders']} expert flooders, {f['rounds']} x {f['seconds']:g} s calm / flooded",
        f"  ordinary POST /v1/matches: calm p50 {o['calm']['p50_ms']} p99 {o['calm']['p99_ms']} ms, flooded p50 "
        f"{o['flooded']['p50_ms']} p99 {o['flooded']['p99_ms']} ms (x{f['ordinary_p99_flooded_over_calm']}), "
        f"{o['flooded']['not_2xx']} not 2xx of {o['flooded']['n']}",
        f"  a match with 3 expert bot seats: calm p50 {s['calm']['p50_ms']} ms, flooded p50 {s['flooded']['p50_ms']} "
        f"p99 {s['flooded']['p99_ms']} ms, {s['flooded']['not_2xx']} not 2xx",
        f"  flooders' answers {f['flooder_answers']}, stranded {f['stranded']}; goal ({f['goal']}): "
        f"{met[f['goal_met']]}",
        f"frozen: {z['before_req_per_s']} req/s before, {z['frozen_req_per_s']} with one of two engines frozen "
        f"{z['freeze_s']:g} s (x{z['frozen_over_before']}), {z['after_req_per_s']} after, {z['failed']} failed; "
        f"goal: {met[z['goal_met']]}",
        f"  per second while frozen: {z['frozen_per_second']}",
        f"bomb: {b['bombs']} at once, answers {b['statuses']} within {b['answered_within_s']} s, engine CPU "
        f"{b['engine_cpu_s']} s, busy until {b['busy_until_s']} s (deadline {b['deadline_s']:g} s): idle "
        f"{b['idle_after_deadline_s']} s after it; goal: {met[b['goal_met']]}",
    ])


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench faults`'s own flags."""
    p.add_argument("--seconds", type=float, default=10.0, help="length of one calm or flooded phase (default 10)")
    p.add_argument("--rounds", type=int, default=3, help="calm / flooded phases, interleaved (default 3)")
    p.add_argument("--freeze", type=float, default=10.0, help="seconds one engine is SIGSTOPped (default 10)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench faults` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(seconds=2.0 if args.tiny else args.seconds, rounds=1 if args.tiny else args.rounds,
               freeze=3.0 if args.tiny else args.freeze, log=log)
