"""A gateway app in process serving N sealed applies (or N /readyz): for cProfile and callgrind.

    python -P bench/gateway_cost.py apply 500 [--profile] [--compiled]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python -P bench/gateway_cost.py apply 500

The engine is a real one in its own process (`bench.service.start_engine`), so what
is counted is the gateway's own work: Flask and the request schema, opening and
sealing the token, the version store (a SQLite file, as `domino serve gateway`
uses by default), the gRPC client call and the answer. Prometheus runs in
multiprocess mode, as under gunicorn. The sealed matches are created and their
moves chosen before the counted part, whatever N is (so N=0 is the baseline:
instructions at N minus instructions at 0, over N, is one request; the sealed
answers are checked to be 200). Not counted: gunicorn's and gevent's share
(parsing the HTTP request, the hub), which the service bench measures.

In situ, the processes as `bench service` runs them (`situ`, SECONDS of load):

    python -P bench/gateway_cost.py situ 5 [--repeats 3] [--sample]

the engine and the gateway (gunicorn, its default 2 gevent workers, the SQLite store in a fresh file) started by
`bench.service`'s own starters, sealed applies of real 4-player Kozel matches from wrk at saturation
(`bench.sealed_games`, 16 connections), and each process's CPU (utime + stime, /proc) over the run
divided by the applies served: the engine, the gateway (master and workers), wrk. With `--sample`
each gateway worker samples its own Python stack every 0.5 ms of the process's CPU (SIGPROF, started
in the worker after gunicorn's fork, through a sitecustomize on the gateway's PYTHONPATH) and the run
prints each step's share of the samples and its microseconds of the gateway's CPU per apply (`STEPS`:
inclusive; the CPU of the worker's other threads, gRPC's and the engine call's waits', lands on the
step that waited for them, mostly the engine call).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GAMES = int(os.environ.get("GATEWAY_COST_GAMES", "40"))  # a Kozel round is 25-30 moves: 40 games, ~1000 applies


def _setup(compiled: bool) -> tuple[Any, Any, list[list[tuple[str, str, str]]]]:
    """The engine process, a gateway app on it (test client) and the games' moves (token filled in later)."""
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="gateway-cost-metrics-"))
    sys.path.insert(0, str(ROOT))
    from api_gateway.app import create_app
    from api_gateway.config import GatewayConfig
    from api_gateway.tokens import KeyRing
    from bench.service import start_engine
    from engine_service.rules import Match

    workdir = Path(tempfile.mkdtemp(prefix="gateway-cost-"))
    engine = start_engine(workdir, compiled=compiled)
    cfg = GatewayConfig(engine_target=engine.address, token_keys=KeyRing.generate("k"), metrics_port=None,
                        token_store=f"sqlite:///{workdir / 'versions.sqlite3'}", database=f"sqlite:///{workdir / 'a.db'}")
    client = create_app(cfg).test_client()
    games: list[list[tuple[str, str, str]]] = []
    for i in range(GAMES):
        created = client.post("/v1/matches", json={"variant": "kozel", "players": 4, "seed": i, "mode": "sealed"})
        assert created.status_code == 201, created.data
        body = created.get_json()
        match, _ = Match.new("kozel", 4, seed=i)
        rng = random.Random(i)
        moves = [(body["token"], "", "")]
        while match.legal_actions():
            action = rng.choice(match.legal_actions())
            moves.append(("", body["seat_keys"][match.to_move], action))
            match.apply(action)
        games.append(moves)
    return engine, client, games


def _applies(client: Any, games: list[list[tuple[str, str, str]]], n: int) -> int:
    """Play `n` sealed applies, game after game, each with the token of the answer before."""
    done = 0
    for moves in games:
        token = moves[0][0]
        for _, key, action in moves[1:]:
            if done == n:
                return done
            reply = client.post("/v1/matches/apply", json={"token": token, "seat_key": key, "action": action})
            assert reply.status_code == 200, reply.data
            token = reply.get_json()["token"]
            done += 1
    return done


PARTS = (("api_gateway.tokens", "KeyRing", "open"), ("api_gateway.tokens", "KeyRing", "seal"),
         ("api_gateway.matches", None, "principal_for"), ("api_gateway.matches", None, "_digest"),
         ("api_gateway.store.sqlite", "SqliteStore", "check"), ("api_gateway.store.sqlite", "SqliteStore", "advance"),
         ("api_gateway.engine", "Engine", "call"), ("api_gateway.matches", "Matches", "apply"),
         ("api_gateway.matches", None, "_sealed_answer"))


def _time_parts() -> dict[str, list[float]]:
    """Wrap each of `PARTS` to add up its own thread's CPU time (and wall time) per call."""
    import functools
    import importlib

    spent: dict[str, list[float]] = {}
    for module_name, owner_name, name in PARTS:
        module = importlib.import_module(module_name)
        owner: Any = getattr(module, owner_name) if owner_name else module
        inner = getattr(owner, name)
        cell = spent.setdefault(name, [0.0, 0.0, 0])

        def timed(*a: Any, _inner: Any = inner, _cell: list[float] = cell, **k: Any) -> Any:
            t, w = time.thread_time(), time.perf_counter()
            try:
                return _inner(*a, **k)
            finally:
                _cell[0] += time.thread_time() - t
                _cell[1] += time.perf_counter() - w
                _cell[2] += 1
        setattr(owner, name, functools.wraps(inner)(timed))
    return spent


#: Steps of a sealed apply in the gateway worker, by a frame of the sampled stack ("path suffix:function").
STEPS = (("gevent's server, gunicorn's HTTP parsing and writing, Flask and the route", "gunicorn/workers/base_async.py:handle"),
         ("Flask: the request in the app (middleware, the view)", "flask/app.py:wsgi_app"),
         ("the body's schema (webargs, marshmallow)", "webargs/core.py:parse"),
         ("Matches.apply (the sealed call below the route)", "api_gateway/matches.py:apply"),
         ("  the engine call (gRPC client, its wait on a native thread)", "api_gateway/engine.py:call"),
         ("  the store: check", "api_gateway/store/sqlite.py:check"),
         ("  the store: advance (receipt, public line, wake-ups)", "api_gateway/store/sqlite.py:advance"),
         ("  the token: open", "api_gateway/tokens.py:open"),
         ("  the token: seal", "api_gateway/tokens.py:seal"),
         ("  the seat key", "api_gateway/tokens.py:principal_for"),
         ("metrics (prometheus_client, multiprocess files)", "prometheus_client/"),
         ("gevent's hub (outside any request)", "gevent/hub.py:run"))

#: The sampler a gateway worker runs with `situ --sample` (a sitecustomize: imported by every process that
#: has its directory on PYTHONPATH, armed only in gunicorn's forked workers, cleared by SIGRTMIN+1).
SAMPLER = """
import os
_dir = os.environ.get("GATEWAY_COST_SAMPLES")
if _dir:
    import collections, signal
    counts = collections.Counter()
    seen = [0]
    busy, clear = [False], [False]
    def _clear(signum, frame):  # the samples of one run only; after the write when one is under way
        if busy[0]:
            clear[0] = True
        else:
            counts.clear()
    def _sample(signum, frame):
        # a signal that comes while this handler runs returns at once: a sample taken inside the file's write
        # changed `counts` under its iteration, and the RuntimeError landed in the request or the worker
        if busy[0]:
            return
        busy[0] = True
        try:
            stack = []
            while frame is not None:
                stack.append(frame.f_code.co_filename + ":" + frame.f_code.co_name)
                frame = frame.f_back
            counts[";".join(stack)] += 1
            seen[0] += 1
            if seen[0] % 200 == 0:
                with open(os.path.join(_dir, "%d.folded" % os.getpid()), "w") as out:
                    out.writelines("%s %d\\n" % (k, v) for k, v in counts.items())
        finally:
            if clear[0]:
                counts.clear()
                clear[0] = False
            busy[0] = False
    def _start():
        signal.signal(signal.SIGPROF, _sample)
        signal.siginterrupt(signal.SIGPROF, False)  # system calls it interrupts restart, not fail with EINTR
        signal.signal(signal.SIGRTMIN + 1, _clear)
        signal.setitimer(signal.ITIMER_PROF, 0.0005, 0.0005)
    os.register_at_fork(after_in_child=_start)
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _with_children(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            pids += _with_children(int(child))
    return pids


def _steps(folder: Path, gateway_us: float) -> list[tuple[str, float, float]]:
    """Each step's share of the workers' samples and its microseconds of gateway CPU per apply."""
    total, hits = 0, dict.fromkeys((name for name, _ in STEPS), 0)
    for path in folder.glob("*.folded"):
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            total += int(count)
            for name, frame in STEPS:
                if frame in stack:
                    hits[name] += int(count)
    return [(name, hits[name] / max(total, 1), hits[name] / max(total, 1) * gateway_us) for name, _ in STEPS]


def in_situ(seconds: float, repeats: int, sample: bool) -> list[dict[str, float]]:
    """CPU per sealed apply of each process as `bench service` runs them (see the module's docstring)."""
    import resource
    import signal

    sys.path.insert(0, str(ROOT))
    from bench import sealed_games, service
    from clients.serve_all import dev_token_keys

    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="gateway-cost-situ-") as tmp:
        workdir = Path(tmp)
        samples = workdir / "samples"
        engine = service.start_engine(workdir)
        env = dict(os.environ)
        if sample:  # the gateway's processes only
            samples.mkdir()
            (workdir / "sitecustomize.py").write_text(SAMPLER)
            os.environ.update(GATEWAY_COST_SAMPLES=str(samples),
                              PYTHONPATH=os.pathsep.join(p for p in (str(workdir), env.get("PYTHONPATH")) if p))
        try:
            gateway = service.start_gateway(workdir, [engine], dev_token_keys("bench"),
                                            env={**service.LIMITS_OFF, **service.fresh_store(workdir)})
        finally:
            os.environ.clear()
            os.environ.update(env)
        try:
            base = f"http://{gateway.address}"
            for rep in range(repeats):
                script = sealed_games.sealed_script(sealed_games.make_games(
                    base, sealed_games.games_for(seconds, 1500), rep + 1))
                pids = _with_children(gateway.popen.pid)
                for pid in pids[1:] if sample else ():
                    os.kill(pid, signal.SIGRTMIN + 1)  # the samples of this run only
                engine_cpu, gateway_cpu = _cpu_seconds(engine.popen.pid), sum(map(_cpu_seconds, pids))
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                wrk_cpu = usage.ru_utime + usage.ru_stime
                run = sealed_games.run_wrk(base, script, workdir, seconds, 16)
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                n = run["requests"]
                row = {"req_per_s": run["req_per_s"], "failed": run["failed"], "applies": n,
                       "engine_us": (_cpu_seconds(engine.popen.pid) - engine_cpu) / n * 1e6,
                       "gateway_us": (sum(map(_cpu_seconds, pids)) - gateway_cpu) / n * 1e6,
                       "wrk_us": (usage.ru_utime + usage.ru_stime - wrk_cpu) / n * 1e6, "load": os.getloadavg()[0]}
                rows.append(row)
                print(f"situ: {row['req_per_s']:,.0f} sealed applies/s ({row['failed']} failed), CPU per apply: "
                      f"engine {row['engine_us']:,.0f} us, gateway {row['gateway_us']:,.0f} us, wrk "
                      f"{row['wrk_us']:,.0f} us; load average {row['load']:.1f}", file=sys.stderr, flush=True)
                if sample:
                    for name, share, us in _steps(samples, row["gateway_us"]):
                        print(f"  {name:76} {share * 100:5.1f}% {us:6,.0f} us", file=sys.stderr)
        finally:
            gateway.stop()
            engine.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("apply", "readyz", "situ"))
    parser.add_argument("n", type=int, help="requests (apply, readyz) or seconds of load (situ)")
    parser.add_argument("--repeats", type=int, default=1, help="situ: runs on the same processes")
    parser.add_argument("--sample", action="store_true", help="situ: sample the gateway workers' Python stacks")
    parser.add_argument("--profile", action="store_true", help="cProfile the N requests, top functions by own time")
    parser.add_argument("--parts", action="store_true", help="CPU and wall time of the sealed path's parts")
    parser.add_argument("--gc-freeze", action="store_true", help="gc.freeze() once the app is made (as a worker would)")
    parser.add_argument("--compiled", action="store_true", help="the engine on the mypyc-compiled build")
    args = parser.parse_args()
    if args.what == "situ":
        in_situ(args.n, args.repeats, args.sample)
        return 0
    spent = _time_parts() if args.parts else {}
    engine, client, games = _setup(args.compiled)
    if args.gc_freeze:
        import gc

        gc.freeze()
    for cell in spent.values():
        cell[:] = [0.0, 0.0, 0]
    try:
        import gc

        collected = [gc.get_stats()[g]["collections"] for g in range(3)]
        profiler = cProfile.Profile() if args.profile else None
        start = time.perf_counter()
        cpu = time.process_time()
        thread = time.thread_time()
        if profiler is not None:
            profiler.enable()
        if args.what == "apply":
            done = _applies(client, games, args.n)
        else:
            for _ in range(args.n):
                assert client.get("/readyz").status_code == 200
            done = args.n
        if profiler is not None:
            profiler.disable()
        cpu = time.process_time() - cpu
        thread = time.thread_time() - thread
        wall = time.perf_counter() - start
        collections = [gc.get_stats()[g]["collections"] - collected[g] for g in range(3)]
        if done:
            print(f"gc collections per 100 requests, generations 0/1/2: "
                  f"{'/'.join(f'{c * 100 / done:.1f}' for c in collections)}", file=sys.stderr)
            print(f"{args.what}: {done} requests, {wall / done * 1e6:.0f} us wall, {cpu / done * 1e6:.0f} us "
                  "gateway CPU per request", f"({thread / done * 1e6:.0f} us in the serving thread)", file=sys.stderr)
            for name, (t, w, calls) in spent.items():
                print(f"  {name:16} {calls / done:4.1f} calls, {t / done * 1e6:6.0f} us CPU, {w / done * 1e6:6.0f} us "
                      "wall per request", file=sys.stderr)
        if profiler is not None:
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(45)
    finally:
        engine.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
