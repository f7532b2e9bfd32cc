"""`domino soak`: every variant, both modes, for minutes, against a real engine and gateway; memory watched.

Starts an engine and a gateway (`domino serve all`'s processes, on free ports),
then a few client threads play whole matches over REST, one after another:
every preset and player count in turn, transparent (the state carried back
and forth) and sealed (each seat with its own key, always the latest token),
each move chosen at random among the legal ones. Every answer must be a 2xx.
Meanwhile the resident memory of the engine and of each gateway worker is
sampled. At the end:

- no request failed;
- memory is flat once warm: at the end at most 10% above its level after the
  warm-up (the first fifth of the run), and no steady climb (the least-squares
  slope over the rest of the run, times its length, under 10% too);
- the engine stays under 150 MiB and each gateway worker under 200 MiB.

``domino soak --minutes 10`` (the default) is the long run; the test suite runs
one minute (tests/gateway/test_gateway_soak.py). Prints progress every
``--progress`` seconds and a summary (``--json``: one JSON object); exit status
1 when a check fails.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.serve_all import dev_token_keys

Json = dict[str, Any]
ENGINE_LIMIT_MIB = 150
WORKER_LIMIT_MIB = 200
GROWTH = 0.10
MAX_MOVES = 400  # a whole match of the longest preset plays far fewer per round; matches stop at one round


class SoakError(RuntimeError):
    pass


def _read_line(proc: subprocess.Popen[str], what: str, timeout: float = 30) -> Json:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("{"):
            found: Json = json.loads(line)
            return found
        if not line and proc.poll() is not None:
            break
    raise SoakError(f"{what} did not start")


def rss_mib(pid: int) -> float:
    """Resident memory of a process, MiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@dataclass
class Services:
    engine: subprocess.Popen[str]
    gateway: subprocess.Popen[str]
    url: str

    def stop(self) -> None:
        for proc in (self.gateway, self.engine):
            if proc.poll() is None:
                proc.terminate()
        for proc in (self.gateway, self.engine):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start(workdir: Path, workers: int) -> Services:
    env = {**os.environ, "STATE_TOKEN_KEYS": dev_token_keys("soak"),
           "GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'versions.sqlite3'}"}
    engine = subprocess.Popen([sys.executable, "-P", "-m", "engine_service", "--port", "0", "--metrics-port", "off",
                               "--no-log-calls"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=env)
    address = _read_line(engine, "the engine")["grpc"]
    gateway = subprocess.Popen([sys.executable, "-m", "api_gateway", "--port", "0", "--engine", address,
                                "--workers", str(workers)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env)
    try:
        url = "http://" + _read_line(gateway, "the gateway")["http"]
    except SoakError:
        engine.kill()
        raise
    return Services(engine, gateway, url)


@dataclass
class Tally:
    requests: int = 0
    matches: int = 0
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, n: int = 1) -> None:
        with self.lock:
            self.requests += n


class Player:
    """One client thread: whole matches, one preset after another, transparent and sealed in turn."""

    def __init__(self, url: str, presets: list[tuple[str, int]], seed: int, tally: Tally) -> None:
        self.url = url
        self.presets = presets
        self.rng = random.Random(seed)
        self.tally = tally

    def post(self, path: str, body: Json, expect: int = 200) -> Json:
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                answer: Json = json.loads(reply.read())
                status = reply.status
        except urllib.error.HTTPError as err:
            status, answer = err.code, {"detail": err.read()[:300].decode(errors="replace")}
        except OSError as exc:
            status, answer = 0, {"detail": str(exc)}
        self.tally.count()
        if status != expect:
            raise SoakError(f"{path}: HTTP {status}: {answer.get('detail')}")
        return answer

    def transparent(self, variant: str, players: int) -> None:
        state = self.post("/v1/matches", {"variant": variant, "players": players}, 201)["state"]
        for _ in range(MAX_MOVES):
            legal = self.post("/v1/matches/legal", {"state": state})
            if not legal["actions"]:
                break
            state = self.post("/v1/matches/apply", {"state": state,
                                                    "action": self.rng.choice(legal["actions"])})["state"]
        self.post("/v1/matches/view", {"state": state, "seat": 0})

    def sealed(self, variant: str, players: int) -> None:
        created = self.post("/v1/matches", {"variant": variant, "players": players, "mode": "sealed"}, 201)
        token, keys, mover = created["token"], created["seat_keys"], created["view"]["to_move"]
        for _ in range(MAX_MOVES):
            legal = self.post("/v1/matches/legal", {"token": token, "seat_key": keys[mover]})
            if not legal["actions"]:
                break
            answer = self.post("/v1/matches/apply", {"token": token, "seat_key": keys[mover],
                                                     "action": self.rng.choice(legal["actions"])})
            token, mover = answer["token"], answer["view"]["to_move"]
        self.post("/v1/matches/view", {"token": token, "seat_key": created["host_key"]})

    def run(self, until: float) -> None:
        i = self.rng.randrange(len(self.presets))
        while time.monotonic() < until:
            variant, players = self.presets[i % len(self.presets)]
            try:
                (self.sealed if i % 2 else self.transparent)(variant, players)
                with self.tally.lock:
                    self.tally.matches += 1
            except SoakError as exc:
                with self.tally.lock:
                    self.tally.failures.append(f"{variant} {players}p {'sealed' if i % 2 else 'transparent'}: {exc}")
            i += 1


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (t, y) points, y per second."""
    if len(points) < 3:
        return 0.0
    ts = [t for t, _ in points]
    ys = [y for _, y in points]
    mt, my = statistics.fmean(ts), statistics.fmean(ys)
    den = sum((t - mt) ** 2 for t in ts)
    return 0.0 if den == 0 else sum((t - mt) * (y - my) for t, y in points) / den


def judge(samples: dict[str, list[tuple[float, float]]], seconds: float, limit_mib: dict[str, float]) -> list[str]:
    """The memory checks on each process's (time, MiB) samples; the problems found."""
    problems = []
    for name, points in samples.items():
        if not points:
            problems.append(f"{name}: no memory samples")
            continue
        peak = max(y for _, y in points)
        if peak > limit_mib[name]:
            problems.append(f"{name}: {peak:.0f} MiB, over its {limit_mib[name]:.0f} MiB")
        warm = [(t, y) for t, y in points if t >= seconds / 5]
        if len(warm) < 3:
            continue
        base = statistics.fmean(y for _, y in warm[:3])
        end = statistics.fmean(y for _, y in warm[-3:])
        if end > base * (1 + GROWTH):
            problems.append(f"{name}: {base:.1f} -> {end:.1f} MiB after warm-up (over {GROWTH:.0%})")
        climb = _slope(warm) * (warm[-1][0] - warm[0][0])
        if climb > base * GROWTH:
            problems.append(f"{name}: climbs {climb:.1f} MiB over the run after warm-up (over {GROWTH:.0%})")
    return problems


def run(minutes: float, threads: int = 4, workers: int = 2, progress: float = 30.0, log: Any = None) -> Json:
    from engine_service.rules import PRESETS

    log = sys.stderr if log is None else log
    presets = [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]
    seconds = minutes * 60
    with tempfile.TemporaryDirectory(prefix="domino-soak-") as tmp:
        services = start(Path(tmp), workers)
        tally = Tally()
        samples: dict[str, list[tuple[float, float]]] = {}
        limits: dict[str, float] = {}
        try:
            begin = time.monotonic()
            until = begin + seconds
            players = [Player(services.url, presets, 1000 + i, tally) for i in range(threads)]
            runners = [threading.Thread(target=p.run, args=(until,), daemon=True) for p in players]
            for t in runners:
                t.start()
            next_report = begin + progress
            while any(t.is_alive() for t in runners):
                now = time.monotonic() - begin
                samples.setdefault("engine", []).append((now, rss_mib(services.engine.pid)))
                limits["engine"] = ENGINE_LIMIT_MIB
                for i, pid in enumerate(sorted(children(services.gateway.pid))):
                    samples.setdefault(f"gateway worker {i + 1}", []).append((now, rss_mib(pid)))
                    limits[f"gateway worker {i + 1}"] = WORKER_LIMIT_MIB
                if time.monotonic() >= next_report:
                    memory = ", ".join(f"{k} {v[-1][1]:.0f} MiB" for k, v in samples.items())
                    print(f"soak: {now:.0f}/{seconds:.0f} s, {tally.requests} requests, {tally.matches} matches, "
                          f"{len(tally.failures)} failures; {memory}", file=log, flush=True)
                    next_report += progress
                time.sleep(1.0)
            for t in runners:
                t.join()
            elapsed = time.monotonic() - begin
            if services.engine.poll() is not None or services.gateway.poll() is not None:
                tally.failures.append("a service died during the soak")
        finally:
            services.stop()
    problems = judge(samples, seconds, limits) + [f"request failed: {f}" for f in tally.failures[:20]]
    return {
        "minutes": minutes, "seconds": round(elapsed, 1), "threads": threads, "gateway_workers": workers,
        "requests": tally.requests, "matches": tally.matches, "failures": len(tally.failures),
        "req_per_s": round(tally.requests / elapsed, 1),
        "memory_mib": {name: {"first": round(points[0][1], 1), "peak": round(max(y for _, y in points), 1),
                              "last": round(points[-1][1], 1)} for name, points in samples.items() if points},
        "problems": problems, "ok": not problems,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="domino soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="how long to play (default 10)")
    p.add_argument("--threads", type=int, default=4, help="client threads playing matches (default 4)")
    p.add_argument("--workers", type=int, default=2, help="gateway worker processes (default 2)")
    p.add_argument("--progress", type=float, default=30.0, help="seconds between progress lines (default 30)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = p.parse_args(argv)
    result = run(args.minutes, args.threads, args.workers, args.progress)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"soak: {result['seconds']} s, {result['requests']} requests ({result['req_per_s']}/s), "
              f"{result['matches']} matches, {result['failures']} failures")
        for name, m in result["memory_mib"].items():
            print(f"  {name}: {m['first']} -> peak {m['peak']} -> last {m['last']} MiB")
        print("ok" if result["ok"] else "FAILED:\n  " + "\n  ".join(result["problems"]))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
