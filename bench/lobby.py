"""The lobby and quick play at a crowded host (issue 36): what a lobby page and a seek cost with many
public tables open, and whether quick play still pairs and fills when other kinds of table crowd the lobby.

    domino bench lobby [--tables N] [--foreign N]

On each store (one gateway on the embedded SQLite file; one on a Redis started here), through the REST
API only (so the same bench runs on an older tree for a before-and-after):

1. `--tables` (20,000) public 4-player Osel tables are opened, with a seat free each;
2. a lobby page (`GET /v1/tables?limit=50`, and `?variant=osel`, and the page after by its cursor) is timed
   20 times each, p50 / worst;
3. quick play among them: `--foreign` (120, more than the 100 rows seek used to read) newer public tables of
   another kind, then two people seek 2-player Kozel (each seek timed): the second must be seated at the
   first's table; a third seeks with ``bots_after: 1`` alone and must be dealt a match with bots within 10 s.

Results to bench/results/lobby.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.redis_server import RedisServer
from bench.service import LIMITS_OFF, BenchError, Proc, start_engine, start_gateway
from clients.serve_all import dev_token_keys

Json = dict[str, Any]
PAGE_TIMES = 20


def _call(base: str, method: str, path: str, body: Json | None = None) -> tuple[float, Json]:
    """One JSON call: its time (ms) and answer; a problem raises BenchError with its text."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            answer = json.load(resp)
    except urllib.error.HTTPError as exc:
        raise BenchError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from None
    return (time.perf_counter() - started) * 1000, answer


def _timed(base: str, path: str) -> Json:
    times = [_call(base, "GET", path)[0] for _ in range(PAGE_TIMES)]
    return {"p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2)}


def measure(base: str, tables: int, foreign: int, log: Any) -> Json:
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:  # concurrent creates: the fill is not what is measured
        list(pool.map(lambda _: _call(base, "POST", "/v1/tables", {"variant": "osel", "players": 4, "public": True}),
                      range(tables)))
    print(f"  {tables} public tables opened in {time.monotonic() - started:.0f} s", file=log)
    result: Json = {"tables": tables}
    result["lobby_page"] = _timed(base, "/v1/tables?limit=50")
    result["lobby_page_variant"] = _timed(base, "/v1/tables?variant=osel&limit=50")
    cursor = _call(base, "GET", "/v1/tables?variant=osel&limit=50")[1]["next_cursor"]
    result["lobby_next_page"] = _timed(base, f"/v1/tables?variant=osel&limit=50&cursor={cursor}")
    for _ in range(foreign):
        _call(base, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "public": True})
    seek = {"variant": "kozel", "players": 2}
    first_ms, first = _call(base, "POST", "/v1/seek", {**seek, "name": "Anna"})
    second_ms, second = _call(base, "POST", "/v1/seek", {**seek, "name": "Boris"})
    result["seek_ms"] = [round(first_ms, 2), round(second_ms, 2)]
    result["paired"] = first["opened"] and not second["opened"] and second["table_id"] == first["table_id"]
    alone = _call(base, "POST", "/v1/seek", {"variant": "kozel", "players": 3, "name": "Clara", "bots_after": 1})[1]
    deadline = time.monotonic() + 10
    filled = False
    while time.monotonic() < deadline and not filled:
        time.sleep(0.2)
        filled = _call(base, "GET", f"/v1/tables/{alone['table_id']}")[1]["match_id"] is not None
    result["filled"] = filled
    return result


def run(tables: int = 20000, foreign: int = 120, tiny: bool = False, log: Any = sys.stderr) -> Json:
    tables = 200 if tiny else tables
    result: Json = {"kind": "lobby", "foreign_tables": foreign}
    with tempfile.TemporaryDirectory(prefix="bench-lobby-") as tmp:
        workdir = Path(tmp)
        procs: list[Proc] = []
        redis: RedisServer | None = None
        try:
            engine = start_engine(workdir)
            procs.append(engine)
            keys = dev_token_keys()
            one = start_gateway(workdir, [engine], keys, index=0,
                                env={"GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'live.sqlite3'}", **LIMITS_OFF})
            procs.append(one)
            print("one gateway (SQLite) ...", file=log)
            result["sqlite"] = measure(f"http://{one.address}", tables, foreign, log)
            redis = RedisServer(workdir)
            on_redis = start_gateway(workdir, [engine], keys, index=1, env={"GATEWAY_TOKEN_STORE": redis.url, **LIMITS_OFF})
            procs.append(on_redis)
            print("one gateway (Redis) ...", file=log)
            result["redis"] = measure(f"http://{on_redis.address}", tables, foreign, log)
        finally:
            for proc in reversed(procs):
                proc.stop()
            if redis is not None:
                redis.stop()
    return result


def format_text(r: Json) -> str:
    lines = [f"lobby and quick play with {r['sqlite']['tables']} public tables open"]
    for name in ("sqlite", "redis"):
        m = r[name]
        lines.append(f"  {name}: lobby page p50 {m['lobby_page']['p50_ms']} ms (worst {m['lobby_page']['max_ms']}), "
                     f"of one variant {m['lobby_page_variant']['p50_ms']} ms, the next page "
                     f"{m['lobby_next_page']['p50_ms']} ms; seeks {m['seek_ms'][0]} and {m['seek_ms'][1]} ms; "
                     f"after {r['foreign_tables']} foreign tables: paired {m['paired']}, filled {m['filled']}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench lobby`'s own flags."""
    p.add_argument("--tables", type=int, default=20000, help="public tables opened first (default 20000)")
    p.add_argument("--foreign", type=int, default=120, help="public tables of another kind before the seeks "
                   "(default 120)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench lobby` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(tables=args.tables, foreign=args.foreign, tiny=args.tiny, log=log)
