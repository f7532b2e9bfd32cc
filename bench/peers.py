"""`domino bench peers`: our host against a peer game server, the same game, one load tool (issue 43).

    domino bench peers [--seconds S] [--matches N] [--repeats R] [--json]

The game: 2-player block dominoes with hidden hands (the engine's `block` variant; the same
rules written for boardgame.io in bench/peers/boardgameio/game.js). The servers, started here
on free ports and stopped at the end:

- **ours**: the engine and the gateway as `domino bench service` starts them (the gateway's
  default 2 workers, its embedded SQLite store in a fresh directory; the per-address stream
  and connection caps lifted, since every simulated player comes from 127.0.0.1);
- **peer**: boardgame.io (the version pinned in bench/peers/boardgameio/package-lock.json,
  `npm ci` run here when node_modules is missing), its `Server` with the default in-memory
  storage, one Node process (server.js), moves over socket.io, hands hidden by `playerView`.

The load, for both: bench/peers/boardgameio/load.js (Node), `--matches` matches at once,
each simulated player on its own connections, random legal moves, a new match (ours: a new
table, both seats joined by invite, both seats' event streams open) as soon as one ends. Each
player picks its move from what its server last pushed it: the peer's client from its state (its
`playerView`), ours from its seat's view on its stream (the view's `legal` actions, as the play page
does), so a move is one request on both (ours: its apply).
Three loads, each run `--repeats` times with the two servers' runs interleaved (the medians
are reported): saturation (as fast as the server answers), half of that server's saturation,
and low (20 moves/s). For each: moves/s,
the servers' CPU-seconds per 1,000 moves (utime + stime from /proc/<pid>/stat over the
measured window: ours the gateway's master and workers and the engine, the peer its Node
process; match set-up is part of the work on both), and the delay from a move's sending to
its arrival at the other player, p50 / p99; also the cores the servers and the load tool
used (on a shared machine a saturation figure is only the server's when the load tool is not
the one at a full core). Ratios are ours / peer.

The hidden-hand check runs in every phase, on both: no message a player receives carries a
tile of the other player's hand before that tile is played (ours: until the hand ends, when
the engine reveals the hands by design). A leak fails the run. boardgame.io 0.50.2 as shipped
sends each player the match's unfiltered `initialState` (both dealt hands) in its `sync`
message: server.js withholds it, and a short run against the stock server shows the leak
(`hidden_hand.peer_stock`), so the check is seen to catch one. Results to
bench/results/peers.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from bench.compiled import ROOT
from bench.service import LIMITS_OFF, BenchError, Proc, start_engine, start_gateway
from clients.serve_all import dev_token_keys

Json = dict[str, Any]

PEER_DIR = ROOT / "bench" / "peers" / "boardgameio"
TARGETS = ("peer", "ours")
#: The low load of the issue's table, moves per second.
LOW_RATE = 20.0
#: Seconds each load run plays before its measured window.
WARMUP = 2.0


def ensure_peer_installed(log: TextIO) -> str:
    """The pinned boardgame.io in bench/peers/boardgameio/node_modules (`npm ci` when missing); its version."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise BenchError("domino bench peers needs Node 20 and npm (node and npm on PATH)")
    installed = PEER_DIR / "node_modules" / "boardgame.io" / "package.json"
    if not installed.exists():
        print("bench peers: npm ci in bench/peers/boardgameio", file=log)
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEER_DIR, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            raise BenchError(f"npm ci failed: {done.stderr[-2000:]}")
    version: str = json.loads(installed.read_text())["version"]
    return version


def start_peer(workdir: Path, stock: bool = False) -> Proc:
    """boardgame.io's server (server.js) on a free port; `stock`: as shipped, without withholding initialState."""
    name = "peer-stock" if stock else "peer"
    log = workdir / f"{name}.log"
    popen = subprocess.Popen(["node", "server.js", *(["--stock"] if stock else [])], cwd=PEER_DIR,
                             stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
                             env={**os.environ, "NODE_ENV": "production"})
    assert popen.stdout is not None
    line = popen.stdout.readline()
    if not line:
        popen.wait(timeout=10)
        raise BenchError(f"{name} did not start: {log.read_text()[-2000:]}")
    return Proc(name, popen, json.loads(line)["http"], log)


def start_ours(workdir: Path) -> list[Proc]:
    """The engine, then the gateway over it (its default workers) on a store of its own: [engine, gateway]."""
    engine = start_engine(workdir)
    gateway = start_gateway(workdir, [engine], dev_token_keys(), env={
        "GATEWAY_TOKEN_STORE": f"sqlite:///{workdir / 'live.sqlite3'}",
        "GATEWAY_DATABASE": f"sqlite:///{workdir / 'archive.sqlite3'}",
        "GATEWAY_STREAMS_PER_ADDRESS": "100000", "GATEWAY_CONNECTIONS_PER_ADDRESS": "0", **LIMITS_OFF})
    return [engine, gateway]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(c) for c in (task / "children").read_text().split()]
    return kids


def server_pids(procs: list[Proc]) -> list[int]:
    """The processes doing a server's work: each started process and its children (the gateway's workers)."""
    pids: list[int] = []
    for proc in procs:
        pids += [proc.popen.pid, *_children(proc.popen.pid)]
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used so far (/proc/<pid>/stat fields 14 and 15)."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime: fields 14, 15 counted from 1 with pid, comm
    return ticks / os.sysconf("SC_CLK_TCK")


def load(target: str, server: list[Proc], matches: int, seconds: float, rate: float | None,
         warmup: float = WARMUP) -> Json:
    """One run of load.js against `server`: its report plus the servers' CPU over the measured window."""
    url = f"http://{server[-1].address}"
    argv = ["node", "load.js", "--target", target, "--url", url, "--matches", str(matches),
            "--warmup", str(warmup), "--seconds", str(seconds), *(["--rate", str(rate)] if rate else [])]
    popen = subprocess.Popen(argv, cwd=PEER_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert popen.stdout is not None and popen.stderr is not None
    pids = server_pids(server)
    cpu = {}
    report: Json | None = None
    for line in popen.stdout:
        line = line.strip()
        if line in ("window-start", "window-end"):
            cpu[line] = cpu_seconds(pids)
        elif line.startswith("{"):
            report = json.loads(line)
    popen.wait(timeout=60)
    if report is None or len(cpu) != 2:
        raise BenchError(f"load.js against {target} gave no report: {popen.stderr.read()[-2000:]}")
    if report["moves"] == 0:
        raise BenchError(f"no move was played against {target}: {report['errors'][:5]}")
    used = cpu["window-end"] - cpu["window-start"]
    report["server_cpu_s"] = round(used, 3)
    report["server_cpu_s_per_1000_moves"] = round(used / report["moves"] * 1000, 3)
    report["server_cores"] = round(used / report["window_s"], 2)
    return report


def _ratio(ours: float | None, peer: float | None) -> float | None:
    return None if not ours or not peer else round(ours / peer, 2)


def _hidden(runs: list[Json]) -> Json:
    return {"messages_checked": sum(r["hidden_hand"]["messages_checked"] for r in runs),
            "messages_leaking": sum(r["hidden_hand"]["messages_leaking"] for r in runs),
            "unchecked": sum(r["hidden_hand"]["unchecked"] for r in runs),
            "violations": [v for r in runs for v in r["hidden_hand"]["violations"]][:20]}


def run(seconds: float = 10.0, matches: int = 32, repeats: int = 3, tiny: bool = False,
        log: TextIO = sys.stderr) -> Json:
    version = ensure_peer_installed(log)
    if tiny:
        seconds, matches, repeats, warmup = 0.5, 4, 1, 0.2
    else:
        warmup = WARMUP
    result: Json = {"kind": "peers", "peer": f"boardgame.io {version}", "node": _node_version(),
                    "load_tool": "bench/peers/boardgameio/load.js (Node)", "seconds": seconds,
                    "matches_at_once": matches, "repeats": repeats, "low_rate": LOW_RATE,
                    "uptime_before": _uptime(), "loadavg_before": list(os.getloadavg())}
    runs: dict[str, dict[str, list[Json]]] = {t: {"full": [], "half": [], "low": []} for t in TARGETS}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        workdir = Path(tmp)
        procs: list[Proc] = []
        try:
            ours = start_ours(workdir)
            procs += ours
            peer = start_peer(workdir)
            procs.append(peer)
            servers = {"ours": ours, "peer": [peer]}
            for load_name in ("full", "half", "low"):
                for i in range(repeats):
                    for target in TARGETS:
                        rate = (None if load_name == "full" else LOW_RATE if load_name == "low"
                                else _median([r["moves_per_s"] for r in runs[target]["full"]]) / 2)
                        print(f"bench peers: {target} at {load_name} load"
                              + (f" ({rate:.0f} moves/s)" if rate else " (saturation)") + f", {i + 1}/{repeats}",
                              file=log)
                        runs[target][load_name].append(load(target, servers[target], matches, seconds, rate, warmup))
            stock = start_peer(workdir, stock=True)
            procs.append(stock)
            print("bench peers: boardgame.io as shipped, for the hidden-hand check", file=log)
            stock_run = load("peer", [stock], 2, 1.0, None, 0.5)
        finally:
            for proc in reversed(procs):
                proc.stop()
    result["uptime_after"] = _uptime()
    result["loadavg_after"] = list(os.getloadavg())
    result["runs"] = runs
    result["summary"] = {t: {name: _summary(reps) for name, reps in runs[t].items()} for t in TARGETS}
    result["figures"] = _figures(result["summary"])
    result["hidden_hand"] = {t: _hidden([r for reps in runs[t].values() for r in reps]) for t in TARGETS}
    result["hidden_hand"]["peer_stock"] = _hidden([stock_run])
    result["errors"] = {t: [e for reps in runs[t].values() for r in reps for e in r["errors"]][:10] for t in TARGETS}
    _assert_hidden(result["hidden_hand"])
    return result


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def _summary(reps: list[Json]) -> Json:
    """One load's repeats: the median of each figure, the moves and errors summed."""
    return {"moves": sum(r["moves"] for r in reps),
            "moves_per_s": _median([r["moves_per_s"] for r in reps]),
            "server_cpu_s_per_1000_moves": _median([r["server_cpu_s_per_1000_moves"] for r in reps]),
            "p50_ms": _median([r["delay_ms"]["p50"] for r in reps]),
            "p99_ms": _median([r["delay_ms"]["p99"] for r in reps]),
            "server_cores": _median([r["server_cores"] for r in reps]),
            "load_tool_cores": _median([r["load_tool_cores"] for r in reps]),
            "errors": sum(r["error_count"] for r in reps)}


def _figures(summary: Json) -> Json:
    """The issue's table: each figure for both, and ours / peer."""
    figures: Json = {}
    ours, peer = summary["ours"], summary["peer"]

    def row(name: str, load_name: str, key: str) -> None:
        a, b = ours[load_name][key], peer[load_name][key]
        figures[name] = {"ours": a, "peer": b, "ours/peer": _ratio(a, b)}

    row("moves_per_s_at_saturation", "full", "moves_per_s")
    row("server_cpu_s_per_1000_moves_at_saturation", "full", "server_cpu_s_per_1000_moves")
    row("server_cpu_s_per_1000_moves_at_half_load", "half", "server_cpu_s_per_1000_moves")
    for load_name in ("low", "half", "full"):
        for q in ("p50", "p99"):
            row(f"delay_{q}_ms_{load_name}", load_name, f"{q}_ms")
    return figures


def _assert_hidden(hidden: Json) -> None:
    """A leak of either server fails the run; so does a check that saw nothing or missed the stock leak."""
    for target in ("ours", "peer"):
        h = hidden[target]
        if h["messages_leaking"]:
            raise BenchError(f"{target}: a player received the other hand's tiles: {h['violations'][:5]}")
        if h["messages_checked"] == 0:
            raise BenchError(f"{target}: the hidden-hand check saw no message")
    hidden["peer_stock"]["leak_found"] = hidden["peer_stock"]["messages_leaking"] > 0


def _node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def format_text(r: Json) -> str:
    lines = [f"domino bench peers: ours (gateway, 2 workers, + engine) against {r['peer']} (one Node process), "
             f"{r['matches_at_once']} matches at once, {r['seconds']} s per load, median of {r['repeats']}, "
             f"load tool {r['load_tool']}",
             f"machine load before: {r['uptime_before']}", f"machine load after:  {r['uptime_after']}",
             f"{'figure':46} {'ours':>10} {'peer':>10} {'ours/peer':>10}"]
    for name, f in r["figures"].items():
        lines.append(f"{name:46} {f['ours']!s:>10} {f['peer']!s:>10} {f['ours/peer']!s:>10}")
    for target in TARGETS:
        for name, s in r["summary"][target].items():
            lines.append(f"{target} {name}: {s['moves_per_s']} moves/s, server {s['server_cores']} cores, "
                         f"load tool {s['load_tool_cores']} cores, {s['errors']} errors")
    for target in (*TARGETS, "peer_stock"):
        h = r["hidden_hand"][target]
        lines.append(f"hidden hand, {target}: {h['messages_checked']} messages checked, "
                     f"{h['messages_leaking']} carried a tile of the other hand"
                     + (" (boardgame.io's sync initialState)" if target == "peer_stock" and h["messages_leaking"] else ""))
    for target, errors in r["errors"].items():
        if errors:
            lines.append(f"{target}: first error: {errors[0]}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench peers`'s own flags."""
    p.add_argument("--seconds", type=float, default=10.0, help="measured seconds per load (default 10)")
    p.add_argument("--matches", type=int, default=32, help="matches played at once (default 32)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved runs per load (default 3)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench peers` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(seconds=args.seconds, matches=args.matches, repeats=args.repeats, tiny=args.tiny, log=log)


__all__ = ["add_arguments", "format_text", "run", "run_args"]
