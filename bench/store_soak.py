"""`domino bench store-soak`: one host at saturation for half an hour, the live store's size and speed (issue 43).

    domino bench store-soak [--minutes M] [--matches N] [--every S] [--rate MOVES_PER_S] [--json]

One host as `domino bench peers` starts ours (bench/peers.py `start_ours`): the engine and the gateway
(its default workers) on the default SQLite live store, in a fresh directory. The load is the peers'
load tool (bench/peers/boardgameio/load.js, `--target ours`): `--matches` 2-player block matches at
once, each player on its own connections, both seats' streams open, random legal moves, a new table and
match as soon as one ends; at saturation (as fast as the gateway answers) unless `--rate` paces it.
So matches end and new ones start all the time, as in real play, and a store that holds its size must
let the finished matches' data go.

Every `--every` seconds (30) a sample: moves/s over the interval and the delay move -> other player
(p50/p99), the matches being played (the load tool's, and the store's hosted matches not over), the
store's bytes on disk (the database, its WAL and its shared-memory file, each), the finished matches
still in the live store, the tables and match versions it holds, the server's cores, the machine's load
average. At minute 2, every 10 minutes and at the end, the bytes of each table and index (SQLite's
`dbstat`): which one grows. The store is read by a read-only connection of this process, one short
read transaction a sample (a `dbstat` pass reads the whole file: up to seconds on a large store).

The verdict is the issue's: the store's bytes at the last minute within 1.5x of minute 2 at the same
number of matches being played, and moves/s over the last minute at least 0.9 of the second minute's.
Results to bench/results/store_soak.json (the samples and the verdict); progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from bench import save_json
from bench.peers import PEER_DIR, cpu_seconds, ensure_peer_installed, server_pids
from bench.service import LIMITS_OFF, BenchError, Proc, start_engine, start_gateway
from clients.serve_all import dev_token_keys

Json = dict[str, Any]

#: The issue's bounds: the store's bytes at the last minute over minute 2's, moves/s the same way.
MOST_GROWTH = 1.5
LEAST_SPEED = 0.9
#: The minute the last one is compared with (the issue's "minute 2"), in seconds.
BASELINE_S = 120.0
#: Seconds between two `dbstat` passes (besides the baseline's and the last sample's).
TABLES_EVERY = 600.0
#: `--tiny`, the test suite's soak: 2.5 minutes at a modest pace, the gateway's shortest lifetimes (a minute for
#: a match idle or finished and a table idle: GATEWAY_MATCH_TTL, GATEWAY_TABLE_IDLE), so that every finished
#: match's rows must leave the store within the run and its size level off well before its end.
TINY: Json = {"minutes": 2.5, "matches": 4, "every": 15.0, "rate": 40.0, "baseline_s": 90.0,
              "env": {"GATEWAY_MATCH_TTL": "60", "GATEWAY_TABLE_IDLE": "60"}}


def store_files(path: Path) -> Json:
    """Bytes on disk of the store's database, WAL and shared-memory file, each, and their sum."""
    sizes = {}
    for name, suffix in (("db", ""), ("wal", "-wal"), ("shm", "-shm")):
        try:
            sizes[name] = os.stat(f"{path}{suffix}").st_size
        except FileNotFoundError:
            sizes[name] = 0
    sizes["total"] = sizes["db"] + sizes["wal"] + sizes["shm"]
    return sizes


def store_rows(path: Path, now: float, tables: bool = False) -> Json:
    """What the live store holds, from one short read transaction: matches being played and finished ones
    (hosted_s2's `over`), match versions and those expired but not yet swept, tables, pages in use and free;
    with `tables`, the bytes of each table and index (`dbstat`, which reads every page)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, isolation_level=None)
    try:
        conn.execute("BEGIN")
        live, finished = conn.execute(
            "SELECT COALESCE(SUM(over = 0), 0), COALESCE(SUM(over = 1), 0) FROM hosted_s2").fetchone()
        versions, expired = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(expires < ?), 0) FROM versions_s1", (now,)).fetchone()
        rows: Json = {"live_matches": live, "finished_matches": finished, "versions": versions,
                      "expired_unswept": expired,
                      "tables": conn.execute("SELECT COUNT(*) FROM tables_s2").fetchone()[0],
                      "page_count": conn.execute("PRAGMA page_count").fetchone()[0],
                      "freelist_count": conn.execute("PRAGMA freelist_count").fetchone()[0]}
        if tables:
            rows["table_bytes"] = {name: size for name, size in conn.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")}
        conn.execute("COMMIT")
        return rows
    finally:
        conn.close()


def judge(samples: list[Json], baseline_s: float = BASELINE_S) -> Json:
    """The issue's check on the samples: the store's bytes (database + WAL + shm) at the last sample within
    `MOST_GROWTH` of those at `baseline_s` (the load holds its matches at once: the matches being played, in
    the store and in the load tool, are reported beside); moves/s over the minute
    before the last sample at least `LEAST_SPEED` of those over the minute before `baseline_s` (a shorter
    window when the samples are closer than a minute to the start)."""
    if len(samples) < 2:
        raise BenchError("the soak took fewer than two samples")
    last = samples[-1]
    base = min(samples, key=lambda s: abs(s["t"] - baseline_s))
    if base is last:
        raise BenchError(f"the soak ended before its baseline at {baseline_s:.0f} s")
    span = min(60.0, base["t"])

    def window(at: Json) -> tuple[float, float, float]:
        """Moves, seconds and server CPU-seconds over the `span` before the sample `at`."""
        before = min((s for s in samples if s["t"] <= at["t"] - span + 1e-6), key=lambda s: at["t"] - span - s["t"],
                     default=None)
        moves0, t0 = (before["moves"], before["t"]) if before is not None else (0, 0.0)
        cpu, previous = 0.0, 0.0
        for s in samples:
            if t0 < s["t"] <= at["t"]:
                cpu += s.get("server_cores", 0.0) * (s["t"] - previous)
            previous = s["t"]
        return at["moves"] - moves0, at["t"] - t0, cpu

    def rate(at: Json) -> float:
        moves, seconds, _ = window(at)
        return moves / seconds if seconds > 0 else 0.0

    def cost(at: Json) -> float | None:
        moves, _, cpu = window(at)
        return round(cpu / moves * 1000, 2) if moves else None

    growth = last["bytes"]["total"] / base["bytes"]["total"] if base["bytes"]["total"] else float("inf")
    base_rate, last_rate = rate(base), rate(last)
    speed = last_rate / base_rate if base_rate else 0.0
    return {
        "baseline_t": base["t"], "last_t": last["t"],
        "bytes": {"baseline": base["bytes"]["total"], "last": last["bytes"]["total"], "ratio": round(growth, 3),
                  "most": MOST_GROWTH, "held": growth <= MOST_GROWTH},
        "moves_per_s": {"baseline": round(base_rate, 1), "last": round(last_rate, 1), "ratio": round(speed, 3),
                        "least": LEAST_SPEED, "held": speed >= LEAST_SPEED},
        # the host's own cost per move, which a busy machine's other work does not lower (moves/s it does)
        "server_cpu_s_per_1000_moves": {"baseline": cost(base), "last": cost(last)},
        "live_matches": {"baseline": base["store"]["live_matches"], "last": last["store"]["live_matches"],
                         "playing_baseline": base["playing"], "playing_last": last["playing"]},
        "finished_matches": {"baseline": base["store"]["finished_matches"], "last": last["store"]["finished_matches"]},
        "held": growth <= MOST_GROWTH and speed >= LEAST_SPEED,
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def _progress_line(s: Json) -> str:
    b, st = s["bytes"], s["store"]
    return (f"store-soak {s['t']:6.0f} s: {s['moves_per_s']:6.1f} moves/s (p99 {s['delay_ms']['p99']} ms), "
            f"{s['playing']} playing, store {_mb(b['total'])} MB (db {_mb(b['db'])}, wal {_mb(b['wal'])}, "
            f"shm {_mb(b['shm'])}), {st['finished_matches']} finished and {st['live_matches']} live matches kept, "
            f"{st['tables']} tables, server {s['server_cores']} cores, load {s['loadavg'][0]:.2f}")


def start_host(workdir: Path, env: dict[str, str] | None = None) -> list[Proc]:
    """The engine, then the gateway over it as bench/peers.py starts ours (default workers, the SQLite live
    store and the archive in `workdir`, the per-address caps lifted: every player is 127.0.0.1), with the
    settings `env` on top: [engine, gateway]."""
    engine = start_engine(workdir)
    try:
        gateway = start_gateway(workdir, [engine], dev_token_keys(), env={
            "GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'live.sqlite3'}",
            "GATEWAY_DATABASE": f"sqlite:///{workdir / 'archive.sqlite3'}",
            "GATEWAY_STREAMS_PER_ADDRESS": "100000", "GATEWAY_CONNECTIONS_PER_ADDRESS": "0", **LIMITS_OFF,
            **(env or {})})
    except BaseException:
        engine.stop()
        raise
    return [engine, gateway]


def soak(server: list[Proc], store: Path, minutes: float, matches: int, every: float, rate: float | None,
         baseline_s: float, log: TextIO) -> Json:
    """Drive load.js against `server` for `minutes`, sampling every `every` seconds: the samples and load.js's
    own report."""
    seconds = minutes * 60 + every / 2  # its last tick at `minutes`, before the window's end
    argv = ["node", "load.js", "--target", "ours", "--url", f"http://{server[-1].address}", "--matches",
            str(matches), "--warmup", "0", "--seconds", str(seconds), "--progress", str(every),
            *(["--rate", str(rate)] if rate else [])]
    popen = subprocess.Popen(argv, cwd=PEER_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert popen.stdout is not None and popen.stderr is not None
    pids = server_pids(server)
    samples: list[Json] = []
    report: Json | None = None
    cpu0 = t0 = 0.0
    moves0 = 0
    dbstat_at = -TABLES_EVERY
    baseline_done = False
    for line in popen.stdout:
        line = line.strip()
        if line == "window-start":
            cpu0 = cpu_seconds(pids)
        elif line.startswith("progress "):
            tick = json.loads(line.removeprefix("progress "))
            cpu = cpu_seconds(pids)
            t = round(float(tick["t"]), 1)
            due = (not baseline_done and t >= baseline_s - every / 2) or t - dbstat_at >= TABLES_EVERY
            if due:
                dbstat_at, baseline_done = t, baseline_done or t >= baseline_s - every / 2
            sample = {"t": t, "moves": tick["moves"], "moves_per_s": round((tick["moves"] - moves0) / (t - t0), 1),
                      "delay_ms": tick["delay_ms"], "playing": tick["playing"],
                      "matches_played": tick["matches_played"], "errors": tick["error_count"],
                      "bytes": store_files(store), "store": store_rows(store, time.time(), tables=due),
                      "archive_bytes": store_files(store.with_name("archive.sqlite3"))["total"],
                      "server_cores": round((cpu - cpu0) / (t - t0), 2), "loadavg": list(os.getloadavg()),
                      "server_cpu_s_per_1000_moves": round((cpu - cpu0) / (tick["moves"] - moves0) * 1000, 2)
                      if tick["moves"] > moves0 else None}
            samples.append(sample)
            print(_progress_line(sample), file=log, flush=True)
            if tick["last_error"] and (not samples[:-1] or samples[-2]["errors"] < tick["error_count"]):
                print(f"store-soak: {tick['error_count']} errors so far, last: {tick['last_error']}", file=log)
            cpu0, t0, moves0 = cpu, t, tick["moves"]
        elif line.startswith("{"):
            report = json.loads(line)
    popen.wait(timeout=60)
    if report is None:
        raise BenchError(f"load.js gave no report: {popen.stderr.read()[-2000:]}")
    if samples and "table_bytes" not in samples[-1]["store"]:
        samples[-1]["store"]["table_bytes"] = store_rows(store, time.time(), tables=True)["table_bytes"]
    return {"samples": samples, "load_report": report}


def run(minutes: float = 30.0, matches: int = 32, every: float = 30.0, rate: float | None = None,
        baseline_s: float = BASELINE_S, env: dict[str, str] | None = None, log: TextIO = sys.stderr) -> Json:
    """The soak: one host (engine + gateway, default workers, SQLite store in a fresh directory; `env`:
    gateway settings of the run's own, none by default), `minutes` of load, its samples and the verdict."""
    if minutes * 60 < baseline_s + every:
        raise BenchError(f"--minutes {minutes}: the run must outlast its baseline ({baseline_s:.0f} s) by a sample")
    ensure_peer_installed(log)
    result: Json = {"kind": "store_soak", "minutes": minutes, "matches_at_once": matches, "every_s": every,
                    "rate": rate, "load": "saturation" if rate is None else f"{rate} moves/s",
                    "store": "SQLite (the gateway's default live store), fresh file",
                    "gateway_env": env or {}, "load_tool": "bench/peers/boardgameio/load.js --target ours",
                    "uptime_before": _uptime(), "loadavg_before": list(os.getloadavg()),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": _commit()}
    print(f"store-soak: {minutes} min, {matches} matches at once, {result['load']}, a sample every {every:.0f} s",
          file=log, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-store-soak-") as tmp:
        workdir = Path(tmp)
        procs = start_host(workdir, env)
        try:
            result.update(soak(procs, workdir / "live.sqlite3", minutes, matches, every, rate, baseline_s, log))
        finally:
            for proc in reversed(procs):
                proc.stop()
    result["uptime_after"] = _uptime()
    result["loadavg_after"] = list(os.getloadavg())
    result["verdict"] = judge(result["samples"], baseline_s)
    return result


def save(result: Json, path: Path) -> None:
    """The results as JSON at `path` and the text report beside it (the same name, .txt)."""
    save_json(result, path)
    path.with_suffix(".txt").write_text(format_text(result) + "\n")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,
                          cwd=PEER_DIR).stdout.strip()


def format_text(r: Json) -> str:
    v = r["verdict"]
    lines = [f"domino bench store-soak: one host (engine + gateway, default workers, SQLite store), {r['minutes']} min, "
             f"{r['matches_at_once']} matches at once, {r['load']}, commit {r['commit']}",
             f"machine load before: {r['uptime_before']}", f"machine load after:  {r['uptime_after']}",
             f"{'t s':>6} {'moves/s':>8} {'p99 ms':>8} {'playing':>7} {'db MB':>8} {'wal MB':>7} {'shm MB':>7} "
             f"{'finished':>9} {'tables':>8} {'cores':>6} {'load':>5}"]
    for s in r["samples"]:
        b = s["bytes"]
        lines.append(f"{s['t']:6.0f} {s['moves_per_s']:8.1f} {s['delay_ms']['p99']!s:>8} {s['playing']:7d} "
                     f"{_mb(b['db']):>8} {_mb(b['wal']):>7} {_mb(b['shm']):>7} {s['store']['finished_matches']:9d} "
                     f"{s['store']['tables']:8d} {s['server_cores']:6.2f} {s['loadavg'][0]:5.2f}")
    for s in r["samples"]:
        if "table_bytes" in s["store"]:
            top = ", ".join(f"{name} {_mb(size)}" for name, size in list(s["store"]["table_bytes"].items())[:6])
            lines.append(f"bytes by table at {s['t']:.0f} s (MB): {top}")
    lines += [f"store bytes: {_mb(v['bytes']['last'])} MB at {v['last_t']:.0f} s against {_mb(v['bytes']['baseline'])} "
              f"MB at {v['baseline_t']:.0f} s: x{v['bytes']['ratio']} (at most x{v['bytes']['most']}): "
              + ("held" if v["bytes"]["held"] else "NOT held"),
              f"moves/s: {v['moves_per_s']['last']} over the last minute against {v['moves_per_s']['baseline']}: "
              f"x{v['moves_per_s']['ratio']} (at least x{v['moves_per_s']['least']}): "
              + ("held" if v["moves_per_s"]["held"] else "NOT held"),
              f"server CPU-seconds per 1,000 moves: {v['server_cpu_s_per_1000_moves']['baseline']} over the baseline "
              f"minute, {v['server_cpu_s_per_1000_moves']['last']} over the last (not judged; on a shared machine "
              "less moved by other work than moves/s)",
              f"matches being played: {v['live_matches']['baseline']} and {v['live_matches']['last']}; finished "
              f"matches still in the live store: {v['finished_matches']['baseline']} and {v['finished_matches']['last']}",
              f"errors: {r['load_report']['error_count']}"
              + (f", first: {r['load_report']['errors'][0]}" if r["load_report"]["errors"] else ""),
              "verdict: the store holds its size and speed" if v["held"] else "verdict: NOT held"]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench store-soak`'s own flags."""
    p.add_argument("--minutes", type=float, default=30.0, help="length of the soak (default 30)")
    p.add_argument("--matches", type=int, default=32, help="matches played at once (default 32)")
    p.add_argument("--every", type=float, default=30.0, help="seconds between two samples (default 30)")
    p.add_argument("--rate", type=float, help="moves per second, all matches together (default: saturation)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench store-soak` with its flags (`--tiny`: a token workload for the test suite)."""
    if args.tiny:
        return run(**TINY, log=log)
    return run(minutes=args.minutes, matches=args.matches, every=args.every, rate=args.rate, log=log)


__all__ = ["add_arguments", "format_text", "judge", "run", "run_args", "save"]
