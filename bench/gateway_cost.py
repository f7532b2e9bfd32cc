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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("apply", "readyz"))
    parser.add_argument("n", type=int)
    parser.add_argument("--profile", action="store_true", help="cProfile the N requests, top functions by own time")
    parser.add_argument("--parts", action="store_true", help="CPU and wall time of the sealed path's parts")
    parser.add_argument("--gc-freeze", action="store_true", help="gc.freeze() once the app is made (as a worker would)")
    parser.add_argument("--compiled", action="store_true", help="the engine on the mypyc-compiled build")
    args = parser.parse_args()
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
