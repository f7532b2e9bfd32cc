"""`domino bench service`: the engine and the gateway as real processes under load.

Processes: the engine (`python -m engine_service`, its default settings, free
ports) and the gateway (`domino serve gateway`, default workers and threads),
started here and stopped at the end. The load comes from a separate process:
`h2load` (Debian `nghttp2-client`) for gRPC over HTTP/2, `wrk` for HTTP at
saturation; both are single-threaded here (``-t 1``), so on the 2-core machine
the load takes at most one core.

Paths:
- ``grpc_health``: gRPC `grpc.health.v1.Health/Check`, the floor of the stack;
- ``grpc_apply``: gRPC `domino.v1.Engine/Apply` on a mid-round 4-player Kozel state;
- ``grpc_health_compiled``, ``grpc_apply_compiled``: the same against a second
  engine on the mypyc-compiled build (build/compiled, when current), the build the
  engine image runs;
- ``bare_healthz``: the bare floor, ``GET /healthz`` of a minimal Flask app (`bench.bare_app`) on
  the gateway's own gunicorn settings (workers, gevent worker), loaded by the same wrk: what this
  host gives any Flask app; the REST paths are reported as shares of it (issue 40);
- ``bare_apply``: the same app's ``GET /apply``, the one engine call of a sealed apply (`JsonEngine/Apply`
  with a sealed 4-player Kozel state) and nothing around it: the floor of any route that makes that
  call, so ``rest_apply_sealed / bare_apply`` is what the gateway's own work (body, token, store,
  middleware) leaves of it;
- ``rest_healthz``: the gateway's ``GET /healthz`` (its middleware, no engine);
- ``rest_readyz``: REST ``GET /readyz`` (the engine's health as the gateway's watch of it last
  said: no engine call per request since issue 40); the gateway goes to the engine as the image
  ships it: the compiled one when there is one;
- ``rest_apply_transparent``: REST apply with the JSON state;
- ``rest_apply_sealed``: REST apply with a sealed state token: 4-player Kozel matches
  played from the deal to the round's end, each move with its match's latest token (the
  gateway on a live store of its own, a fresh SQLite file: `fresh_store`).

For each path: throughput at saturation (median of ``--repeats`` runs, the
paths compared interleaved, each pair's ratio taken from runs back to back), then
latency percentiles at half of that throughput (gRPC: ``h2load --rps`` and its
per-request log; REST: ``wrk --latency`` with 4 connections paced to the rate).
The REST paths run from wrk scripts (`bench.sealed_games`): sealed apply
plays many real sealed matches, each move with the latest token of its match,
because the gateway refuses a token once it is not the latest. Scale-out: REST
apply (sealed) against a gateway over one engine and one over two (the
gateway's client-side round-robin), interleaved at the same load.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import sealed_games
from bench.compiled import ROOT

Json = dict[str, Any]

GRPC_HEADERS = ("content-type: application/grpc", "te: trailers")
TARGETS = {
    "grpc_apply/grpc_health": 0.70,  # issue 27: at least 0.70, goal 0.9
    "rest_readyz/rest_healthz": 0.5,  # issue 40: at least 0.5 (0.24-0.27 with a Check per probe)
    "rest_apply_sealed/bare_healthz": 0.18,  # issue 40: at least 0.18 of the bare floor, goal 0.25
    "rest_p99_ms_at_half_load": 10.0,
    "kozel4_mid_round_proto_bytes": 200,
}


class BenchError(RuntimeError):
    pass


# ---------------------------------------------------------------- processes


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[str]
    address: str
    log: Path

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def _start(name: str, argv: list[str], env: dict[str, str], workdir: Path, key: str, cwd: Path = ROOT) -> Proc:
    """Start a server (in `cwd`) that prints one JSON line with its address on stdout; wait for it."""
    log = workdir / f"{name}.log"
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
                             env=env, cwd=str(cwd))
    assert popen.stdout is not None
    line = popen.stdout.readline()
    if not line:
        popen.wait(timeout=10)
        raise BenchError(f"{name} did not start: {log.read_text()[-2000:]}")
    info = json.loads(line)
    address = info.get(key) or next(v for v in info.values() if isinstance(v, str))
    return Proc(name, popen, address, log)


def start_engine(workdir: Path, index: int = 0, compiled: bool = False, tree: Path | None = None) -> Proc:
    """An engine with its default settings; `compiled`: with the mypyc-compiled rules and codec (the tree's
    build/compiled); `tree`: from that checkout's sources (`bench.ab_gateway`), else this one's."""
    env = dict(os.environ)
    # -P: the working directory must not come before PYTHONPATH (build/compiled), as in serve_all
    argv = [sys.executable, "-P", "-m", "engine_service", "--port", "0", "--metrics-port", "0"]
    paths = [str(tree)] if tree is not None else [env.get("PYTHONPATH", "")]
    if compiled:
        from bench.compiled import COMPILED

        paths.insert(0, str(COMPILED if tree is None else tree / "build" / "compiled"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return _start(f"engine{index}{'-compiled' if compiled else ''}", argv, env, workdir, "grpc")


#: The gateway's limits (`api_gateway.http.limits`) switched off: a bench's load comes from one address and opens
#: more tables and matches a minute than any one client may (the flood bench measures the limits themselves).
LIMITS_OFF = {name: "off" for name in ("GATEWAY_LIMIT_TABLES_PER_ADDRESS", "GATEWAY_LIMIT_SEEKS_PER_ADDRESS",
                                       "GATEWAY_LIMIT_SEEKS_PER_PLAYER", "GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL",
                                       "GATEWAY_LIMIT_SEALED_PER_ADDRESS", "GATEWAY_LIMIT_INBOX_PER_ADDRESS")}


def start_gateway(workdir: Path, engines: list[Proc], keys: str, index: int = 0,
                  env: dict[str, str] | None = None, tree: Path | None = None) -> Proc:
    """The gateway (gunicorn, default workers and threads) over one engine or several (round-robin);
    `env`: settings of its own (a token store, say); `tree`: from that checkout's sources, else this one's."""
    target = engines[0].address if len(engines) == 1 else "ipv4:" + ",".join(e.address for e in engines)
    env = {**os.environ, "GATEWAY_PORT": "0", "GATEWAY_METRICS_PORT": "0", "GATEWAY_ENGINE": target,
           "STATE_TOKEN_KEYS": keys, **({} if tree is None else {"PYTHONPATH": str(tree)}), **(env or {})}
    argv = [sys.executable, "-m", "clients.cli", "serve", "gateway"]
    proc = _start(f"gateway{index}", argv, env, workdir, "http", ROOT if tree is None else tree)
    _wait_ready(proc)
    return proc


def fresh_store(workdir: Path, index: int = 0) -> dict[str, str]:
    """Settings for a gateway's own live store and archive in `workdir` (SQLite files made at its start).

    Without them a gateway uses the defaults in $TMPDIR, which every earlier run and every other bench
    on the host shares: here a 213 MB store of their leftovers, on which a sealed apply cost the gateway
    ~6% more CPU (1,637 against 1,548 us, 3 runs each alternating) and which an older tree cannot open
    once a newer one upgraded its archive."""
    return {"GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / f'versions{index}.sqlite3'}",
            "GATEWAY_DATABASE": f"sqlite:///{workdir / f'archive{index}.sqlite3'}"}


def start_bare(workdir: Path, env: dict[str, str]) -> Proc:
    """The bare floor (`bench.bare_app`) under the gateway's gunicorn settings and environment `env`."""
    argv = [sys.executable, "-m", "gunicorn", "-c", "python:api_gateway.gunicorn_conf", "bench.bare_app:app"]
    return _start("bare", argv, {**env, "GATEWAY_PORT": "0", "GATEWAY_METRICS_PORT": "0"}, workdir, "http")


def _wait_ready(gw: Proc, timeout: float = 20.0) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{gw.address}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError as exc:
            last = str(exc)
        time.sleep(0.2)
    raise BenchError(f"gateway at {gw.address} never became ready: {last}")


# ---------------------------------------------------------------- requests


MID_ROUND_SEED = 2024


def mid_round_kozel(seed: int = MID_ROUND_SEED) -> Any:
    """A mid-round 4-player Kozel match (half of a random round played) and the next action."""
    match, played = mid_round_kozel_moves(seed)
    return match, match.legal_actions()[0]


def mid_round_kozel_moves(seed: int = MID_ROUND_SEED) -> tuple[Any, list[tuple[int, str]]]:
    """`mid_round_kozel`'s match and the (seat, action) pairs that led there from the deal."""
    import random

    from engine_service.rules import Match

    rng = random.Random(seed)
    probe, _ = Match.new("kozel", 4, seed=seed)
    moves = 0
    actions = probe.legal_actions()
    while actions:
        probe.apply(rng.choice(actions))
        moves += 1
        actions = probe.legal_actions()
    rng = random.Random(seed)
    match, _ = Match.new("kozel", 4, seed=seed)
    played = []
    for _ in range(moves // 2):
        action = rng.choice(match.legal_actions())
        played.append((match.to_move, action))
        match.apply(action)
    return match, played


def grpc_frame(message: bytes) -> bytes:
    return b"\0" + len(message).to_bytes(4, "big") + message


def grpc_bodies() -> dict[str, tuple[str, bytes]]:
    """path name -> (gRPC method path, serialized request message)."""
    from domino.v1 import engine_pb2 as pb
    from grpc_health.v1 import health_pb2

    from engine_service.edge import wire

    match, action = mid_round_kozel()
    apply = pb.ApplyRequest(state=pb.MatchState.FromString(wire.encode_state(match)), action=action)
    return {
        "grpc_health": ("/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest().SerializeToString()),
        "grpc_apply": ("/domino.v1.Engine/Apply", apply.SerializeToString()),
    }


def check_grpc(address: str, method: str, body: bytes) -> int:
    """Call once with a real client (h2load cannot see grpc-status); returns the answer's size."""
    import grpc

    with grpc.insecure_channel(address) as channel:
        call: Any = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        answer: bytes = call(body, timeout=10)
    return len(answer)


# ---------------------------------------------------------------- load tools


def tools() -> dict[str, str | None]:
    return {"h2load": shutil.which("h2load"), "wrk": shutil.which("wrk")}


def _run(argv: list[str], timeout: float) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise BenchError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-1500:]}{done.stdout[-1500:]}")
    return done.stdout


def _h2load_argv(url: str, seconds: float, clients: int, streams: int, body: Path | None,
                 headers: tuple[str, ...], h1: bool, rps: float | None, log: Path | None) -> list[str]:
    argv = ["h2load", "-t", "1", "-c", str(clients), "-m", str(streams),
            "-D", str(max(1, round(seconds))), "--warm-up-time", "1" if seconds >= 2 else "0"]
    if h1:
        argv.append("--h1")
    if body is not None:
        argv += ["-d", str(body)]
    for h in headers:
        argv += ["-H", h]
    if rps is not None:
        argv += ["--rps", f"{rps:.3f}"]
    if log is not None:
        argv += ["--log-file", str(log)]
    return argv + [url]


def _parse_h2load(out: str) -> Json:
    m = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", out)
    r = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                  r"(\d+) errored, (\d+) timeout", out)
    s = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if not (m and r and s):
        raise BenchError(f"cannot read h2load's output:\n{out[-2000:]}")
    failed = int(r.group(5)) + int(r.group(6)) + int(r.group(7)) + int(s.group(3)) + int(s.group(4))
    return {"req_per_s": float(m.group(3)), "requests": int(r.group(1)), "failed": failed}


def h2load_saturate(url: str, seconds: float, body: Path | None = None, headers: tuple[str, ...] = (),
                    h1: bool = False, clients: int = 4, streams: int = 10) -> Json:
    out = _run(_h2load_argv(url, seconds, clients, streams, body, headers, h1, None, None), seconds + 60)
    res = _parse_h2load(out)
    res["tool"] = f"h2load -c {clients} -m {streams}" + (" --h1" if h1 else "")
    return res


def percentile(sorted_xs: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_xs:
        return float("nan")
    k = max(0, min(len(sorted_xs) - 1, math.ceil(q / 100 * len(sorted_xs)) - 1))
    return sorted_xs[k]


def h2load_latency(url: str, seconds: float, rate: float, workdir: Path, body: Path | None = None,
                   headers: tuple[str, ...] = (), h1: bool = False, clients: int = 4) -> Json:
    """Latency percentiles at a fixed request rate (h2load --rps per client, per-request log)."""
    log = workdir / "h2load-latency.log"
    log.unlink(missing_ok=True)
    # One stream per connection: with more, h2load fires each tick's requests as one burst.
    argv = _h2load_argv(url, seconds, clients, 1, body, headers, h1, max(rate / clients, 0.1), log)
    out = _run(argv, seconds + 60)
    res = _parse_h2load(out)
    lat = sorted(int(line.split("\t")[2]) / 1000.0 for line in log.read_text().splitlines() if line.strip())
    res.update({
        "target_rate": rate,
        "p50_ms": percentile(lat, 50), "p90_ms": percentile(lat, 90), "p99_ms": percentile(lat, 99),
        "max_ms": lat[-1] if lat else float("nan"), "samples": len(lat),
        "tool": f"h2load -c {clients} --rps {rate / clients:.1f}" + (" --h1" if h1 else ""),
    })
    return res


# ---------------------------------------------------------------- the run


@dataclass
class Path_:
    name: str
    url: str
    body: Path | None
    headers: tuple[str, ...]
    grpc: bool
    #: REST only: the wrk script for a run, given the pacing delay (ms, None at saturation) and the
    #: highest rate the run may reach (sealed apply makes as many fresh matches as that needs).
    script: Callable[[float | None, float], str] | None = None
    rate_hint: float = 2000.0


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def _saturate(p: Path_, seconds: float, workdir: Path) -> Json:
    if p.grpc:
        return h2load_saturate(p.url, seconds, p.body, p.headers)
    assert p.script is not None
    res = sealed_games.run_wrk(p.url, p.script(None, p.rate_hint), workdir, seconds, 16)
    p.rate_hint = max(res["req_per_s"] * 1.5, 50.0)
    return res


def _latency(p: Path_, seconds: float, rate: float, workdir: Path) -> Json:
    """Latency percentiles at `rate` requests per second: h2load --rps (gRPC), paced wrk (REST)."""
    if p.grpc:
        return h2load_latency(p.url, seconds, rate, workdir, p.body, p.headers)
    assert p.script is not None
    clients = 4
    # wrk paces by a delay before each request, so a connection sends one per (delay + latency): a
    # short probe measures the latency at about this load, and the delay is set to leave `rate`.
    delay = clients * 1000.0 / rate
    probe = sealed_games.run_wrk(p.url, p.script(delay, rate), workdir, 1.0, clients)
    latency_ms = max(clients * 1000.0 / max(probe["req_per_s"], 1.0) - delay, 0.0)
    delay = max(clients * 1000.0 / rate - latency_ms, 0.0)
    res = sealed_games.run_wrk(p.url, p.script(delay, rate), workdir, seconds, clients, latency=True)
    res.update(target_rate=rate, tool=f"wrk -c {clients} --latency, paced to {rate:.0f} req/s")
    return res


def _interleaved(paths: list[Path_], seconds: float, repeats: int, workdir: Path, log: Any) -> dict[str, list[Json]]:
    runs: dict[str, list[Json]] = {p.name: [] for p in paths}
    for rep in range(repeats):
        k = rep % len(paths)
        for p in paths[k:] + paths[:k]:
            res = _saturate(p, seconds, workdir)
            if res["failed"]:
                raise BenchError(f"{p.name}: {res['failed']} failed requests at saturation")
            runs[p.name].append(res)
            print(f"bench service: {p.name} {res['req_per_s']:,.0f} req/s", file=log, flush=True)
    return runs


def _ratio(runs: dict[str, list[Json]], a: str, b: str) -> Json:
    rs = [x["req_per_s"] / y["req_per_s"] for x, y in zip(runs[a], runs[b])]
    return {"median": _median(rs), "min": min(rs), "max": max(rs), "n": len(rs)}


#: The REST ratios (issue 40): the hop to the engine (readyz / healthz), and each path's share of the bare floor;
#: the floor of a route that makes a sealed apply's engine call and nothing else (bare_apply / bare_healthz), and
#: what the gateway's own work around that call leaves of it (rest_apply_sealed / bare_apply).
REST_RATIOS = (("rest_readyz", "rest_healthz"), ("rest_healthz", "bare_healthz"),
               ("rest_apply_sealed", "bare_healthz"), ("rest_apply_transparent", "bare_healthz"),
               ("bare_apply", "bare_healthz"), ("rest_apply_sealed", "bare_apply"))


def _gateway_available() -> str | None:
    import importlib.util

    if importlib.util.find_spec("api_gateway") is None:
        return "the REST gateway is not installed"
    return None


def rest_routes() -> dict[str, str]:
    """The gateway's apply routes (where they live in the gateway's URL scheme)."""
    return {"apply": "/v1/matches/apply", "readyz": "/readyz", "healthz": "/healthz"}


def run(seconds: float = 5.0, tiny: bool = False, require_tools: bool = False, repeats: int = 3,
        grpc_only: bool = False, compiled: str = "auto", log: Any = None) -> Json:
    log = sys.stderr if log is None else log
    found = tools()
    missing = [name for name, path in found.items() if path is None]
    result: Json = {"kind": "service", "tools": found, "targets": TARGETS, "paths": {}, "ratios": {},
                    "latency": {}, "skipped": {}}
    if missing:
        why = (f"{' and '.join(missing)} not installed (Debian packages: "
               + ", ".join({"h2load": "nghttp2-client", "wrk": "wrk"}[m] for m in missing) + ")")
        if require_tools or not tiny:
            raise SystemExit(f"bench service: {why}")
        result["skipped"]["all"] = why
        return result
    if tiny:
        seconds, repeats = 1.0, 1
    started = time.time()
    loadavg_before = list(os.getloadavg())
    procs: list[Proc] = []
    with tempfile.TemporaryDirectory(prefix="domino-bench-") as tmp:
        workdir = Path(tmp)
        try:
            engine = start_engine(workdir)
            procs.append(engine)
            engines = {"": engine}
            from bench import compiled as compiled_copy

            usable, why = compiled_copy.status()
            if compiled == "no":
                usable, why = False, "disabled (--compiled no)"
            elif compiled == "yes" and not usable:
                raise SystemExit(f"bench service: --compiled yes, but {why}")
            result["compiled"] = {"used": usable, "why": why}
            if usable:
                engines["_compiled"] = start_engine(workdir, compiled=True)
                procs.append(engines["_compiled"])
            bodies = grpc_bodies()
            grpc_paths = []
            for suffix, proc in engines.items():
                for name, (method, message) in bodies.items():
                    answer = check_grpc(proc.address, method, message)
                    body = workdir / f"{name}.bin"
                    body.write_bytes(grpc_frame(message))
                    grpc_paths.append(Path_(name + suffix, f"http://{proc.address}{method}", body, GRPC_HEADERS,
                                            True))
                    result["paths"][name + suffix] = {"request_bytes": len(message), "answer_bytes": answer}
            runs = _interleaved(grpc_paths, seconds, repeats, workdir, log)
            result["ratios"]["grpc_apply/grpc_health"] = _ratio(runs, "grpc_apply", "grpc_health")
            if usable:
                result["ratios"]["grpc_apply_compiled/grpc_health_compiled"] = _ratio(
                    runs, "grpc_apply_compiled", "grpc_health_compiled")

            rest_paths: list[Path_] = []
            why_no_rest = "--grpc-only" if grpc_only else _gateway_available()
            if why_no_rest is None:
                # The gateway over the engine as the image ships it: on the compiled build when there is one.
                rest_engine = engines.get("_compiled", engine)
                result["rest_engine"] = rest_engine.name
                rest_paths = _rest_setup(workdir, rest_engine, procs, result, seconds)
                rest_runs = _interleaved(rest_paths, seconds, repeats, workdir, log)
                runs.update(rest_runs)
                for a, b in REST_RATIOS:
                    result["ratios"][f"{a}/{b}"] = _ratio(runs, a, b)
            else:
                result["skipped"]["rest"] = why_no_rest

            for p in grpc_paths + rest_paths:
                entry = result["paths"].setdefault(p.name, {})
                entry["saturation_req_per_s"] = _median([r["req_per_s"] for r in runs[p.name]])
                entry["saturation_runs"] = [round(r["req_per_s"], 1) for r in runs[p.name]]
                entry["tool"] = runs[p.name][0]["tool"]
                half = entry["saturation_req_per_s"] / 2
                lat = _latency(p, seconds, half, workdir)
                if lat["failed"]:
                    raise BenchError(f"{p.name}: {lat['failed']} failed requests at half load")
                result["latency"][p.name] = lat
                print(f"bench service: {p.name} at {half:,.0f} req/s: p50 {lat['p50_ms']:.2f} ms, "
                      f"p99 {lat['p99_ms']:.2f} ms", file=log, flush=True)

            if rest_paths:
                result["scale_out"] = _scale_out(workdir, procs, rest_engine, seconds, repeats, log,
                                                 result.pop("_keys"))
        finally:
            for proc in reversed(procs):
                proc.stop()
    result["settings"] = {"seconds": seconds, "repeats": repeats, "tiny": tiny, "cpus": os.cpu_count(),
                          "loadavg_before": loadavg_before,
                          "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                          "wall_seconds": round(time.time() - started, 1)}
    result["checks"] = _checks(result)
    return result


def _get(url: str) -> bytes:
    """A GET's answer; a `BenchError` unless it is a 200."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            data: bytes = resp.read()
            return data
    except urllib.error.HTTPError as exc:
        raise BenchError(f"GET {url}: {exc.code} {exc.read()[:300]!r}") from None


def _post(url: str, body: bytes, expect: int = 200) -> bytes:
    import urllib.request

    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        if resp.status != expect:
            raise BenchError(f"{url}: HTTP {resp.status}")
        answer: bytes = resp.read()
    return answer


def rest_bodies(base: str) -> tuple[bytes, bytes, int]:
    """The REST apply bodies (transparent, sealed) for the mid-round Kozel state, and the token's length.

    The sealed one is made through the gateway at `base` itself: a sealed match with the
    same seed, played to the same point with each seat's key.
    """
    match, played = mid_round_kozel_moves()
    action = match.legal_actions()[0]
    transparent = json.dumps({"state": match.to_dict(), "action": action}, separators=(",", ":")).encode()
    created = json.loads(_post(base + "/v1/matches", json.dumps(
        {"variant": "kozel", "players": 4, "seed": MID_ROUND_SEED, "mode": "sealed"}).encode(), expect=201))
    keys, token = created["seat_keys"], created["token"]
    for seat, move in played:
        token = json.loads(_post(base + rest_routes()["apply"], json.dumps(
            {"token": token, "seat_key": keys[seat], "action": move}).encode()))["token"]
    body = {"token": token, "seat_key": keys[match.to_move], "action": action}
    return transparent, json.dumps(body, separators=(",", ":")).encode(), len(token)


def _rest_paths(gw: Proc, workdir: Path, seconds: float, result: Json | None, suffix: str = "") -> list[Path_]:
    base = f"http://{gw.address}"
    transparent, _sealed, token_chars = rest_bodies(base)
    apply_url = base + rest_routes()["apply"]
    body = workdir / f"rest_apply_transparent{suffix}.json"
    body.write_bytes(transparent)
    answer = _post(apply_url, transparent)  # checked once: a 200 with the new state
    if b'"events"' not in answer:
        raise BenchError(f"rest_apply_transparent: unexpected answer {answer[:300]!r}")
    seeds = iter(range(1, 1_000_000))

    def sealed(delay_ms: float | None, rate: float) -> str:
        return sealed_games.sealed_script(sealed_games.make_games(base, sealed_games.games_for(seconds, rate),
                                                                  next(seeds)), delay_ms)

    paths = [
        Path_("rest_healthz", base + rest_routes()["healthz"], None, (), False,
              lambda delay, rate: sealed_games.fixed_script(None, delay)),
        Path_("rest_readyz", base + rest_routes()["readyz"], None, (), False,
              lambda delay, rate: sealed_games.fixed_script(None, delay)),
        Path_("rest_apply_transparent", apply_url, body, (), False,
              lambda delay, rate: sealed_games.fixed_script(body, delay)),
        Path_("rest_apply_sealed", base, None, (), False, sealed),
    ]
    if result is not None:
        result["paths"]["rest_healthz"] = {}
        result["paths"]["rest_readyz"] = {}
        result["paths"]["rest_apply_transparent"] = {"request_bytes": len(transparent), "answer_bytes": len(answer)}
        result["paths"]["rest_apply_sealed"] = {"request_bytes": len(_sealed)}
        result.setdefault("sizes", {})["kozel4_mid_round_sealed_token_chars"] = token_chars
    return paths


def _rest_setup(workdir: Path, engine: Proc, procs: list[Proc], result: Json, seconds: float) -> list[Path_]:
    from clients.serve_all import dev_token_keys

    keys = dev_token_keys("bench")
    gw = start_gateway(workdir, [engine], keys, env={**LIMITS_OFF, **fresh_store(workdir)})
    procs.append(gw)
    bare = start_bare(workdir, {**os.environ, "GATEWAY_ENGINE": engine.address, "STATE_TOKEN_KEYS": keys})
    procs.append(bare)
    result["_keys"] = keys
    result["paths"]["bare_healthz"] = {}
    result["paths"]["bare_apply"] = {"answer_bytes": len(_get(f"http://{bare.address}/apply"))}
    floors = [Path_(name, f"http://{bare.address}{route}", None, (), False,
                    lambda delay, rate: sealed_games.fixed_script(None, delay))
              for name, route in (("bare_healthz", "/healthz"), ("bare_apply", "/apply"))]
    return [*floors, *_rest_paths(gw, workdir, seconds, result)]


def _scale_out(workdir: Path, procs: list[Proc], engine: Proc, seconds: float, repeats: int, log: Any,
               keys: str) -> Json:
    """REST apply (sealed) at saturation: a gateway over `engine` vs one over it and a second like it."""
    one = next(p for p in procs if p.name == "gateway0")
    second = start_engine(workdir, 1, compiled=engine.name.endswith("-compiled"))
    procs.append(second)
    engines = [engine, second]
    two = start_gateway(workdir, engines, keys, 1, env={**LIMITS_OFF, **fresh_store(workdir, 1)})
    procs.append(two)
    path_one = next(p for p in _rest_paths(one, workdir, seconds, None, "-1") if p.name == "rest_apply_sealed")
    path_two = next(p for p in _rest_paths(two, workdir, seconds, None, "-2") if p.name == "rest_apply_sealed")
    path_one.name, path_two.name = "one_engine", "two_engines"
    runs = _interleaved([path_one, path_two], seconds, repeats, workdir, log)
    return {
        "path": "rest_apply_sealed",
        "one_engine_req_per_s": _median([r["req_per_s"] for r in runs["one_engine"]]),
        "two_engines_req_per_s": _median([r["req_per_s"] for r in runs["two_engines"]]),
        "ratio": _ratio(runs, "two_engines", "one_engine"),
    }


def _checks(result: Json) -> Json:
    checks: Json = {}
    for key, name in (("grpc_apply/grpc_health", "grpc_apply_vs_health"),
                      ("grpc_apply_compiled/grpc_health_compiled", "grpc_apply_vs_health_compiled")):
        r = result["ratios"].get(key)
        if r:
            checks[name] = {"value": r["median"], "target": TARGETS["grpc_apply/grpc_health"],
                            "met": r["median"] >= TARGETS["grpc_apply/grpc_health"]}
    for key, name in (("rest_readyz/rest_healthz", "rest_readyz_vs_healthz"),
                      ("rest_apply_sealed/bare_healthz", "rest_apply_sealed_vs_bare")):
        r = result["ratios"].get(key)
        if r:
            checks[name] = {"value": r["median"], "target": TARGETS[key], "met": r["median"] >= TARGETS[key]}
    rest = [v["p99_ms"] for k, v in result["latency"].items() if k.startswith("rest_")]
    if rest:
        checks["rest_p99_at_half_load_ms"] = {"value": max(rest), "target": TARGETS["rest_p99_ms_at_half_load"],
                                              "met": max(rest) < TARGETS["rest_p99_ms_at_half_load"]}
    return checks


def format_text(r: Json) -> str:
    if "all" in r["skipped"]:
        return f"bench service: skipped: {r['skipped']['all']}"
    lines = [f"{'path':<24} {'req/s (sat.)':>12} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}  at req/s"]
    for name, p in r["paths"].items():
        lat = r["latency"].get(name, {})
        lines.append(f"{name:<24} {p.get('saturation_req_per_s', float('nan')):>12,.0f} "
                     f"{lat.get('p50_ms', float('nan')):>8.2f} {lat.get('p90_ms', float('nan')):>8.2f} "
                     f"{lat.get('p99_ms', float('nan')):>8.2f}  {lat.get('req_per_s', float('nan')):,.0f}")
    for key, ratio in r["ratios"].items():
        lines.append(f"{key}: {ratio['median']:.2f} (min {ratio['min']:.2f}, max {ratio['max']:.2f})")
    if "scale_out" in r:
        s = r["scale_out"]
        lines.append(f"scale-out, two engines / one: {s['ratio']['median']:.2f}")
    for name, c in r.get("checks", {}).items():
        lines.append(f"check {name}: {c['value']:.3f} vs {c['target']} -> {'met' if c['met'] else 'NOT met'}")
    for name, why in r["skipped"].items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench service`'s own flags."""
    p.add_argument("--seconds", type=float, default=5.0, help="length of one load run (default 5)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved saturation runs per path (default 3)")
    p.add_argument("--grpc-only", action="store_true", help="only the engine's gRPC paths (no gateway)")
    p.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                   help="also an engine on build/compiled (mypyc): auto = when current")
    p.add_argument("--require-tools", action="store_true",
                   help="fail instead of skipping when h2load or wrk is missing")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench service` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(seconds=args.seconds, tiny=args.tiny, require_tools=args.require_tools, repeats=args.repeats,
               grpc_only=args.grpc_only, compiled=args.compiled, log=log)
