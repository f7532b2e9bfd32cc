"""How many people one host seats (issue 40): people at 4-seat tables, ramped until a move is late.

    domino bench capacity [--people 400,1000,...] [--step-seconds S] [--idle-streams N] [--load-procs P]

Every seat is a person (no bots) holding its seat's event stream; each table moves at a human pace (one
move every 2-4 s, uniformly), through the REST API by credential (`bench.capacity_load`, the load tool:
gevent, `--load-procs` processes on this same host). The people are seated in steps (`--people`); after
each step settles, `--step-seconds` are measured: every move's time from sending its apply to the
update with its `seq` on each of the three other seats' streams. The ramp stops at the first step whose
p99 passes 100 ms or where any call failed (a refused call, a lost stream, an update later than 10 s).
**Capacity** is the seated people of the last step before it, and per core of this host.

- **one host**: an engine and a gateway on their defaults (the embedded SQLite store, 2 workers);
- **two gateways on one Redis, two engines**: each gateway over both engines, seat s of table t on
  gateway (t + s) mod 2, so three of a move's four streams are usually another gateway's. On this one
  machine they share its cores with everything else: the cost of the cluster path, not a scale-out;
- **the bare floor**, in the same run, before and after the ramps: a minimal Flask app on the gateway's
  gunicorn/gevent settings (`bench.bare_app`), GET as fast as the same load tool can; the capacity
  reads as a ratio, moves per second at capacity / bare requests per second;
- **idle** (issue 40, item 4): `--idle-streams` (10,000) seat streams open on one fresh host (a quarter
  as many tables, nobody moving): each gateway worker's RSS, the host's CPU while idle (every worker,
  the master, the engine), then single moves at random tables at a low rate (`--probe-moves`), each
  timed to its table's other streams, all of them still open; then again with the keepalive line every
  15 s (`FAST_KEEPALIVE`, the default until session 52) instead of the default 25, to show what the lines cost.

The gateway's connection and stream caps are raised (GATEWAY_CONNECTIONS, GATEWAY_STREAMS*) and its
per-address caps and table limit lifted (every person comes from this one address); everything else is
its default (the idle measure also lets a quiet stream live past GATEWAY_SPECTATE_IDLE's 300 s). The load tool's own
CPU is reported beside the servers'. Results to bench/results/capacity.json, the latency against seated
people to docs/performance_capacity.svg and the "Capacity" section of docs/performance.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from html import escape
from pathlib import Path
from typing import IO, Any

from api_gateway.config import GatewayConfig
from bench import save_json
from bench.compiled import ROOT
from bench.markers import between_markers
from bench.redis_server import RedisServer
from bench.service import BenchError, Proc, percentile, start_bare, start_engine, start_gateway
from bench.tables import _cpu_s, _rss_kib
from clients.serve_all import dev_token_keys

Json = dict[str, Any]

#: The bar of a seated step: a move on the other seats' streams within this, at p99.
P99_BAR_MS = 100.0
#: Failed calls a step may have (a share of its moves) and still go on to the next step, for `p99_only`.
FAILURES_TOLERATED = 0.01
#: Issue 40, item 4: with the idle streams open.
IDLE_GOALS = {"rss_mib_per_worker": 300, "idle_cpu_share": 0.02, "probe_p99_ms": 50.0}
DEFAULT_PEOPLE = (400, 800, 1200, 1600, 2000, 2500, 3000, 4000, 5000, 6000, 8000, 10000, 12000)
#: Seconds the idle measure lasts, with every stream open and nobody moving: whole presence beats (a worker's
#: every 10 s on the defaults), three of each worker, so that one more or one fewer in the window moves little.
IDLE_SECONDS = 30.0
#: The idle measure again with this GATEWAY_SPECTATE_KEEPALIVE (default 25 s): the HTML standard's "every 15 seconds
#: or so", the default until session 52, to show what the keepalive lines cost.
FAST_KEEPALIVE = 15
CHART = ROOT / "docs" / "performance_capacity.svg"
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:capacity:begin -->", "<!-- bench:capacity:end -->"


def _caps(connections: int) -> dict[str, str]:
    """Gateway settings that let one address hold `connections` and open every table (the load tool's single
    address is every person's)."""
    return {"GATEWAY_CONNECTIONS": str(connections), "GATEWAY_STREAMS": str(connections - 100),
            "GATEWAY_STREAMS_PER_ADDRESS": str(connections), "GATEWAY_CONNECTIONS_PER_ADDRESS": "0",
            "GATEWAY_LIMIT_TABLES_PER_ADDRESS": "off"}


# ---------------------------------------------------------------- the load tool's processes


class LoadTool:
    """`bench.capacity_load` processes: one command to all, their answers together."""

    def __init__(self, procs: int, pace: tuple[float, float]) -> None:
        argv = [sys.executable, "-m", "bench.capacity_load", str(pace[0]), str(pace[1])]
        self.procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
                      for _ in range(procs)]
        for hello in self._answers():
            if not hello.get("ready"):
                raise BenchError(f"the load tool did not start: {hello}")

    def _answers(self) -> list[Json]:
        out = []
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if not line:
                raise BenchError(f"a load tool process ended (exit {p.wait()})")
            out.append(json.loads(line))
        return out

    def ask(self, commands: list[Json]) -> list[Json]:
        """Command k to process k (all sent first, so they work at once); their answers."""
        for p, cmd in zip(self.procs, commands):
            assert p.stdin is not None
            p.stdin.write(json.dumps(cmd) + "\n")
            p.stdin.flush()
        return self._answers()

    def all(self, cmd: Json) -> list[Json]:
        return self.ask([cmd] * len(self.procs))

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    assert p.stdin is not None
                    p.stdin.write('{"cmd": "quit"}\n')
                    p.stdin.close()
                    p.wait(timeout=30)
                except (OSError, subprocess.TimeoutExpired):
                    p.kill()
                    p.wait()


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if k < total % parts else 0) for k in range(parts)]


# ---------------------------------------------------------------- servers and their CPU


def _workers(gw: Proc) -> list[int]:
    """A gateway's gunicorn workers: the master's children."""
    pid = gw.popen.pid
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


class Host:
    """The processes of one setup, named, and their CPU seconds so far."""

    def __init__(self) -> None:
        self.procs: list[Proc] = []
        self.redis: RedisServer | None = None

    def pids(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {"gateway": [], "engine": []}
        for p in self.procs:
            if p.name.startswith("gateway"):
                out["gateway"] += [p.popen.pid, *_workers(p)]
            elif p.name.startswith("engine"):
                out["engine"].append(p.popen.pid)
        if self.redis is not None and self.redis.proc is not None:
            out["redis"] = [self.redis.proc.pid]
        return out

    def cpu(self) -> dict[str, float]:
        return {name: sum(_cpu_s(pid) for pid in pids) for name, pids in self.pids().items()}

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        if self.redis is not None:
            self.redis.stop()


def one_host(workdir: Path, connections: int, env: dict[str, str] | None = None) -> tuple[Host, list[str]]:
    host = Host()
    engine = start_engine(workdir)
    host.procs.append(engine)
    live = workdir / f"live-{time.monotonic_ns()}.sqlite3"  # a fresh store for each host
    host.procs.append(start_gateway(workdir, [engine], dev_token_keys(), env={
        "GATEWAY_TOKEN_STORE": f"sqlite:///{live}", **_caps(connections), **(env or {})}))
    return host, [host.procs[-1].address]


def two_gateways(workdir: Path, connections: int) -> tuple[Host, list[str]]:
    host = Host()
    host.redis = RedisServer(workdir)
    engines = [start_engine(workdir, index) for index in range(2)]
    host.procs += engines
    keys = dev_token_keys()  # one key for both: a token sealed by one opens on the other
    for index in range(2):
        host.procs.append(start_gateway(workdir, engines, keys, index=index, env={
            "GATEWAY_TOKEN_STORE": host.redis.url, **_caps(connections)}))
    return host, [p.address for p in host.procs[2:]]


# ---------------------------------------------------------------- the measures


def _summary(answers: list[Json], seconds: float) -> Json:
    delays = sorted(d for a in answers for d in a["delays_ms"])
    applies = sorted(d for a in answers for d in a["apply_ms"])
    moves = sum(a["moves"] for a in answers)
    return {"moves": moves, "moves_per_s": round(moves / seconds, 1), "samples": len(delays),
            "p50_ms": round(percentile(delays, 50), 2), "p99_ms": round(percentile(delays, 99), 2),
            "max_ms": round(delays[-1], 2) if delays else float("nan"),
            "apply_p50_ms": round(percentile(applies, 50), 2), "apply_p99_ms": round(percentile(applies, 99), 2),
            "failures": sum(a["failures"] for a in answers),
            "failure_texts": [t for a in answers for t in a["failure_texts"]][:10],
            "load_cpu_share": round(sum(a["load_cpu_s"] for a in answers) / seconds, 3)}


def ramp(tool: LoadTool, host: Host, gateways: list[str], people: list[int], seconds: float, settle: float,
         log: IO[str]) -> Json:
    """Seat people step by step until a step's p99 passes the bar or calls fail. The capacity (the issue's
    rule) is the last step before the first with a failed call or a p99 over the bar; the ramp goes on
    through rare failures (`FAILURES_TOLERATED` of the moves) to find where the p99 alone ends it
    (`p99_only`): what a fix of what failed would give."""
    steps: list[Json] = []
    tables = 0
    strict: Json | None = None  # the last step of the unbroken run of steps that passed
    p99_only: Json | None = None  # the last step within the bar, a few failures let go
    for target in people:
        more = max(0, target // 4 - tables)
        seated = tool.ask([{"cmd": "seat", "tables": n, "gateways": gateways} for n in _split(more, len(tool.procs))])
        tables = sum(a["tables"] for a in seated)
        seat_failures = sum(a["failures"] for a in seated)
        time.sleep(settle)
        cpu = host.cpu()
        load = os.getloadavg()[0]
        measured = _summary(tool.all({"cmd": "measure", "seconds": seconds}), seconds)
        after = host.cpu()
        step = {"people": tables * 4, "tables": tables,
                "seat_seconds": max(a["seconds"] for a in seated), "seat_failures": seat_failures,
                **measured, "server_cpu_share": {k: round((after[k] - cpu[k]) / seconds, 3) for k in cpu},
                "loadavg_1m": [round(load, 2), round(os.getloadavg()[0], 2)]}
        if step["moves"]:  # where a move's CPU goes: the servers', the load tool's, milliseconds a move
            step["cpu_ms_per_move"] = {k: round(v * 1000 / step["moves_per_s"], 2) for k, v in
                                       {**step["server_cpu_share"], "load_tool": step["load_cpu_share"]}.items()}
        if seat_failures:
            step["failure_texts"] = [t for a in seated for t in a["failure_texts"]][:10] + step["failure_texts"]
        steps.append(step)
        print(f"  {step['people']} people: {step['moves_per_s']} moves/s, p50 {step['p50_ms']} ms, "
              f"p99 {step['p99_ms']} ms, failures {step['failures'] + seat_failures}, server CPU "
              f"{step['server_cpu_share']}, load tool {step['load_cpu_share']} cores", file=log, flush=True)
        failures = step["failures"] + seat_failures
        step["passed"] = not failures and step["p99_ms"] <= P99_BAR_MS
        step["p99_passed"] = step["p99_ms"] <= P99_BAR_MS and failures <= FAILURES_TOLERATED * max(step["moves"], 1)
        if all(st["passed"] for st in steps):
            strict = step
        if not step["p99_passed"]:
            break
        p99_only = step
    first_failed = next((st for st in steps if not st["passed"]), None)
    return {"steps": steps, **_capacity(strict),
            "stopped_by": None if first_failed is None else "p99" if first_failed["p99_ms"] > P99_BAR_MS else "failures",
            "p99_only": {**_capacity(p99_only), "stopped_by": None if steps[-1]["p99_passed"] else
                         "p99" if steps[-1]["p99_ms"] > P99_BAR_MS else "failures"}}


def _capacity(step: Json | None) -> Json:
    """A ramp's figures at the step `step` (None: not even the first step passed)."""
    cores = os.cpu_count() or 1
    return {"capacity_people": step["people"] if step else 0,
            "capacity_people_per_core": round(step["people"] / cores, 1) if step else 0,
            "capacity_moves_per_s": step["moves_per_s"] if step else 0.0,
            # the people over the cores the servers (gateways, engines, Redis) used at that step
            "capacity_people_per_server_core": round(step["people"] / sum(step["server_cpu_share"].values()), 1)
            if step else 0}


def floor(tool: LoadTool, workdir: Path, seconds: float, connections: int) -> Json:
    """The bare Flask app's requests per second from the same load tool (every process at once)."""
    bare = start_bare(workdir, dict(os.environ))
    try:
        answers = tool.all({"cmd": "floor", "url": f"http://{bare.address}/healthz", "connections": connections,
                            "seconds": seconds})
    finally:
        bare.stop()
    return {"req_per_s": round(sum(a["req_per_s"] for a in answers), 1),
            "failures": sum(a["failures"] for a in answers), "connections": connections * len(answers),
            "load_cpu_share": round(sum(a["load_cpu_s"] for a in answers) / seconds, 3)}


def idle(tool: LoadTool, host: Host, gateways: list[str], streams: int, probe_moves: int, probe_rate: float,
         seconds: float, log: IO[str]) -> Json:
    """`streams` seat streams open on `host`, nobody moving: RSS, idle CPU; then moves at a low rate."""
    gateway = next(p for p in host.procs if p.name.startswith("gateway"))
    workers = _workers(gateway)
    rss_before = {pid: _rss_kib(pid) for pid in workers}
    seated = tool.ask([{"cmd": "seat", "tables": n, "gateways": gateways, "playing": False}
                       for n in _split(streams // 4, len(tool.procs))])
    opened = sum(a["tables"] for a in seated) * 4
    print(f"  {opened} seat streams open in {max(a['seconds'] for a in seated):.0f} s", file=log, flush=True)
    time.sleep(2.0)
    cpu = host.cpu()
    worker_cpu = {pid: _cpu_s(pid) for pid in workers}
    load_cpu = sum(_cpu_s(pid) for pid in tool.pids)
    load = os.getloadavg()[0]
    time.sleep(seconds)
    after = host.cpu()
    idle_cpu = {k: round((after[k] - cpu[k]) / seconds, 4) for k in cpu}
    worker_share = [round((_cpu_s(pid) - worker_cpu[pid]) / seconds, 4) for pid in workers]
    rss_held = {pid: _rss_kib(pid) for pid in workers}
    print(f"  idle {seconds:.0f} s: CPU {idle_cpu}, worker RSS {rss_held} KiB", file=log, flush=True)
    probes = tool.ask([{"cmd": "probe", "moves": n, "rate": probe_rate / len(tool.procs)}
                       for n in _split(probe_moves, len(tool.procs))])
    probe = _summary(probes, max(a["seconds"] for a in probes))
    print(f"  {probe['moves']} moves with them open: p50 {probe['p50_ms']} ms, p99 {probe['p99_ms']} ms",
          file=log, flush=True)
    return {"streams": opened, "seat_failures": sum(a["failures"] for a in seated),
            "seat_failure_texts": [t for a in seated for t in a["failure_texts"]],
            "seat_seconds": max(a["seconds"] for a in seated),
            "workers": len(workers), "rss_kib_before": list(rss_before.values()), "rss_kib_held": list(rss_held.values()),
            "rss_mib_per_worker_max": round(max(rss_held.values()) / 1024, 1),
            "idle_seconds": seconds, "idle_cpu_share": idle_cpu,
            "idle_cpu_share_gateway": idle_cpu["gateway"],
            "idle_cpu_share_per_worker": worker_share,
            "idle_load_tool_cpu_share": round((sum(_cpu_s(pid) for pid in tool.pids) - load_cpu) / seconds, 4),
            "loadavg_1m": round(load, 2), "probe": probe, "probe_rate": probe_rate,
            "goals": IDLE_GOALS,
            "met": {"rss": max(rss_held.values()) / 1024 < IDLE_GOALS["rss_mib_per_worker"],
                    "idle_cpu": idle_cpu["gateway"] < IDLE_GOALS["idle_cpu_share"],
                    "probe_p99": probe["p99_ms"] < IDLE_GOALS["probe_p99_ms"] and not probe["failures"]}}


# ---------------------------------------------------------------- the run


def _raise_nofile() -> int:
    """The soft file limit up to the hard one (the servers started here inherit it); the new limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench capacity`'s own flags."""
    p.add_argument("--people", type=_people, default=list(DEFAULT_PEOPLE),
                   help="seated people at each step, comma-separated (default "
                        + ",".join(map(str, DEFAULT_PEOPLE)) + ")")
    p.add_argument("--step-seconds", type=float, default=20.0, help="measured seconds per step (default 20)")
    p.add_argument("--idle-streams", type=int, default=10000, help="seat streams of the idle measure, 0: none "
                   "(default 10000)")
    p.add_argument("--probe-moves", type=int, default=300, help="moves timed with the idle streams open "
                   "(default 300)")
    p.add_argument("--load-procs", type=int, default=2, help="load tool processes (default 2)")
    p.add_argument("--pace", type=_pace, default=(2.0, 4.0), help="seconds between two moves of a table, LO,HI "
                   "(uniform; default 2,4: a human pace; faster finds a rare fault sooner)")


def _people(text: str) -> list[int]:
    try:
        steps = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"want N,N,... got {text!r}") from None
    if not steps or min(steps) < 4 or steps != sorted(steps):
        raise argparse.ArgumentTypeError("want rising counts of at least 4")
    return steps


def _pace(text: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"want LO,HI seconds, got {text!r}") from None
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError("want 0 < LO <= HI")
    return low, high


def run_args(args: argparse.Namespace, log: IO[str]) -> Json:
    return run(people=args.people, step_seconds=args.step_seconds, idle_streams=args.idle_streams,
               load_procs=args.load_procs, probe_moves=args.probe_moves, pace=args.pace, tiny=args.tiny, log=log)


def run(people: list[int] | None = None, step_seconds: float = 20.0, idle_streams: int = 10000,
        load_procs: int = 2, probe_moves: int = 300, pace: tuple[float, float] = (2.0, 4.0), tiny: bool = False,
        log: IO[str] = sys.stderr) -> Json:
    people = [8, 16] if tiny else list(people or DEFAULT_PEOPLE)
    step_seconds = 1.5 if tiny else step_seconds
    idle_streams = 16 if tiny else idle_streams
    probe_moves = 4 if tiny else probe_moves
    pace = (0.2, 0.4) if tiny else pace
    settle = 0.5 if tiny else 5.0
    floor_seconds = 1.0 if tiny else 5.0
    nofile = _raise_nofile()
    connections = max(1000, min(nofile - 500, max(people + [idle_streams]) + 2000))
    started = time.time()
    result: Json = {"kind": "capacity", "people_steps": people, "step_seconds": step_seconds, "pace_s": pace,
                    "p99_bar_ms": P99_BAR_MS, "load_procs": load_procs,
                    "settings": {"cpus": os.cpu_count(), "nofile": nofile, "gateway_caps": _caps(connections),
                                 "loadavg_before": list(os.getloadavg()), "tiny": tiny,
                                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))}}
    with tempfile.TemporaryDirectory(prefix="bench-capacity-") as tmp:
        workdir = Path(tmp)
        tool = LoadTool(load_procs, pace)
        try:
            print(f"bare floor, {load_procs} load tool processes ...", file=log, flush=True)
            floors = [floor(tool, workdir, floor_seconds, 16)]
            for name, setup in (("one_host", one_host), ("two_gateways", two_gateways)):
                host, gateways = setup(workdir, connections)
                try:
                    print(f"{name}: ramp {people} ...", file=log, flush=True)
                    result[name] = ramp(tool, host, gateways, people, step_seconds, settle, log)
                finally:
                    tool.all({"cmd": "clear"})
                    host.stop()
            if not tiny:
                print("bare floor again ...", file=log, flush=True)
                floors.append(floor(tool, workdir, floor_seconds, 16))
            result["bare_floor"] = {"runs": floors,
                                    "req_per_s": round(sum(f["req_per_s"] for f in floors) / len(floors), 1)}
            for m in (x for name in ("one_host", "two_gateways") for x in (result[name], result[name]["p99_only"])):
                m["moves_per_s_over_bare"] = round(m["capacity_moves_per_s"] / result["bare_floor"]["req_per_s"], 4)
            for key, keepalive in (("idle", None), ("idle_keepalive_fast", FAST_KEEPALIVE)):
                if not idle_streams or (tiny and keepalive):
                    continue
                # no stream closed for want of news (300 s) while 10,000 open: the measure is of quiet streams
                quiet = {"GATEWAY_SPECTATE_IDLE": "3600"}
                host, gateways = one_host(workdir, connections, {**quiet, "GATEWAY_SPECTATE_KEEPALIVE": str(keepalive)}
                                          if keepalive else quiet)
                try:
                    print(f"idle: {idle_streams} seat streams on one host, keepalive {keepalive or 'default'} ...",
                          file=log, flush=True)
                    result[key] = idle(tool, host, gateways, idle_streams, probe_moves, 20.0 if tiny else 10.0,
                                       1.0 if tiny else IDLE_SECONDS, log)
                    result[key]["keepalive_s"] = keepalive or f"default ({GatewayConfig().spectate_keepalive})"
                finally:
                    tool.all({"cmd": "clear"})
                    host.stop()
        finally:
            tool.stop()
    result["settings"]["loadavg_after"] = list(os.getloadavg())
    result["settings"]["wall_seconds"] = round(time.time() - started, 1)
    return result


# ---------------------------------------------------------------- the report


def format_text(r: Json) -> str:
    lines = [f"capacity: people at 4-seat tables, a move every {r['pace_s'][0]:g}-{r['pace_s'][1]:g} s a table, "
             f"ramped until the move -> other seats' streams p99 passes {r['p99_bar_ms']:g} ms or a call fails",
             f"  bare floor (same load tool): {r['bare_floor']['req_per_s']:,.0f} req/s"]
    for name, label in (("one_host", "one host (SQLite, 2 workers)"),
                        ("two_gateways", "two gateways on one Redis, two engines")):
        m = r[name]
        for s in m["steps"]:
            lines.append(f"  {label}: {s['people']:>6} people {s['moves_per_s']:>7.1f} moves/s p50 {s['p50_ms']:>7} "
                         f"p99 {s['p99_ms']:>7} ms failures {s['failures'] + s['seat_failures']}")
        for x, rule in ((m, "capacity"), (m["p99_only"], "by the p99 alone (1% failures let go)")):
            lines.append(f"  {label}: {rule} {x['capacity_people']} people ({x['capacity_people_per_core']} a core), "
                         f"{x['capacity_moves_per_s']} moves/s = {x['moves_per_s_over_bare']:.3f} of the bare floor; "
                         f"stopped by {x['stopped_by'] or 'the last step'}")
    for i in (r[key] for key in ("idle", "idle_keepalive_fast") if key in r):
        lines.append(f"  idle, keepalive {i['keepalive_s']} s: {i['streams']} streams on one host: RSS {i['rss_mib_per_worker_max']} MiB a worker "
                     f"(max of {i['workers']}), gateway CPU {i['idle_cpu_share_gateway']:.1%} of a core, "
                     f"move -> its table's streams p99 {i['probe']['p99_ms']} ms ({i['probe']['moves']} moves); "
                     f"met {i['met']}")
    return "\n".join(lines)


def chart(r: Json) -> str:
    """p50 and p99 of move -> other seats' streams against seated people, both setups (log y)."""
    w, h, left, right, top, bottom = 800, 420, 70, 20, 80, 50
    series = [(name, label, color) for name, label, color in (
        ("one_host", "one host (SQLite)", "#3465a4"), ("two_gateways", "two gateways, Redis", "#cc0000"))
        if name in r]
    points: list[tuple[float, float]] = [(s["people"], s[q]) for name, _, _ in series for s in r[name]["steps"] for q in ("p50_ms", "p99_ms")
              if s[q] == s[q]]
    xmax = max([p for p, _ in points] + [1]) * 1.05
    ys = [y for _, y in points if y > 0] + [P99_BAR_MS]
    ymin, ymax = min(ys) / 1.5, max(ys) * 1.5

    def x(v: float) -> float:
        return left + (w - left - right) * v / xmax

    def y(v: float) -> float:
        frac = (math.log10(max(v, ymin)) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin))
        return h - bottom - (h - top - bottom) * frac

    els = [f'<text x="{left}" y="22" font-size="13" font-weight="bold">Move to the other seats\' streams '
           f'against seated people (a move every {r["pace_s"][0]:g}-{r["pace_s"][1]:g} s a table)</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="#444"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#444"/>',
           f'<line x1="{left}" y1="{y(P99_BAR_MS):.1f}" x2="{w - right}" y2="{y(P99_BAR_MS):.1f}" stroke="#c00" '
           f'stroke-dasharray="5,4"/>',
           f'<text x="{w - right - 4}" y="{y(P99_BAR_MS) - 4:.1f}" font-size="10" fill="#c00" text-anchor="end">'
           f'{P99_BAR_MS:g} ms: the p99 bar</text>',
           f'<text x="{(left + w - right) / 2}" y="{h - 12}" font-size="11" text-anchor="middle">seated people</text>',
           f'<text x="16" y="{(top + h - bottom) / 2}" font-size="11" text-anchor="middle" '
           f'transform="rotate(-90 16 {(top + h - bottom) / 2})">ms (log scale)</text>']
    for tick in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
        if ymin <= tick <= ymax:
            els.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" font-size="10" text-anchor="end">{tick}</text>')
            els.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{w - right}" y2="{y(tick):.1f}" stroke="#eee"/>')
    step = 10 ** max(0, int(math.log10(xmax)) - (0 if xmax / 10 ** int(math.log10(xmax)) > 3 else 1))
    for k in range(0, int(xmax) + 1, max(1, int(step))):
        els.append(f'<text x="{x(k):.1f}" y="{h - bottom + 15}" font-size="10" text-anchor="middle">{k:,}</text>')
    for i, (name, label, color) in enumerate(series):
        for q, dash in (("p99_ms", ""), ("p50_ms", ' stroke-dasharray="3,3"')):
            pts = [(x(s["people"]), y(s[q])) for s in r[name]["steps"] if s[q] == s[q]]
            els.append(f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="'
                       + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
            els += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{color}"/>' for a, b in pts]
        ly = 44 + 16 * i
        els.append(f'<rect x="{left + 12}" y="{ly - 9}" width="10" height="10" fill="{color}"/>')
        els.append(f'<text x="{left + 26}" y="{ly}" font-size="11">{escape(label)}: p99 (solid), p50 (dotted); '
                   f'capacity {r[name]["capacity_people"]:,} people</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'font-family="DejaVu Sans, Arial, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(els) + "\n</svg>\n")


def markdown(r: Json) -> list[str]:
    """The generated part of docs/performance.md's "Capacity" section."""
    s = r["settings"]
    out = [f"`{r.get('command', 'domino bench capacity')}`, {s['started']}, {s['cpus']} cores, load average "
           f"{s['loadavg_before'][0]:.1f} before and {s['loadavg_after'][0]:.1f} after, {r['load_procs']} load tool "
           f"processes on the same host; bare floor {r['bare_floor']['req_per_s']:,.0f} req/s from the same tool.", "",
           "| setup | capacity (people) | a core of the host | a core the servers used | moves/s at capacity "
           "| / bare req/s | stopped by |", "|---|---:|---:|---:|---:|---:|---|"]
    rows: list[tuple[str, Json]] = []
    for name, label in (("one_host", "one host, SQLite, 2 workers"),
                        ("two_gateways", "two gateways on one Redis, two engines")):
        m = r[name]
        rows.append((label, m))
        for x, rule in ((m, ""), (m["p99_only"], ", by the p99 alone (failures under 1% of moves let go)")):
            out.append(f"| {label}{rule} | {x['capacity_people']:,} | {x['capacity_people_per_core']:,} | "
                       f"{x['capacity_people_per_server_core']:,} | "
                       f"{x['capacity_moves_per_s']} | {x['moves_per_s_over_bare']:.3f} | "
                       f"{x['stopped_by'] or 'none (last step)'} |")
    for label, m in rows:
        at = next((st for st in m["steps"] if st["people"] == m["p99_only"]["capacity_people"]), None)
        if at and "cpu_ms_per_move" in at:
            out += ["", f"{label}, at {at['people']:,} people: a move cost " + ", ".join(
                f"{ms} ms CPU of the {k.replace('_', ' ')}" for k, ms in at["cpu_ms_per_move"].items())
                + " (its stream lines and its share of the idle streams included)."]
    out += ["", "| setup | people | moves/s | p50 ms | p99 ms | worst ms | apply p99 ms | failures | CPU: gateway, "
            "engine, Redis, load tool (cores) | load avg |", "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for name, label in (("one_host", "one host"), ("two_gateways", "two gateways")):
        for st in r[name]["steps"]:
            c = st["server_cpu_share"]
            out.append(f"| {label} | {st['people']:,} | {st['moves_per_s']} | {st['p50_ms']} | {st['p99_ms']} | "
                       f"{st['max_ms']} | {st['apply_p99_ms']} | {st['failures'] + st['seat_failures']} | "
                       f"{c['gateway']}, {c['engine']}, {c.get('redis', '–')}, {st['load_cpu_share']} | "
                       f"{st['loadavg_1m'][0]}-{st['loadavg_1m'][1]} |")
    idles = [(key, r[key]) for key in ("idle", "idle_keepalive_fast") if key in r]
    if idles:
        goals = idles[0][1]["goals"]
        out += ["", "| idle seat streams on one host | keepalive line every | RSS a worker, MiB (goal < "
                f"{goals['rss_mib_per_worker']}) | gateway CPU idle, of a core (goal < {goals['idle_cpu_share']:.0%}) "
                f"| engine CPU | load tool CPU | a move to its table's streams p50 / p99 ms (goal p99 < "
                f"{goals['probe_p99_ms']:g}) | failures |", "|---:|---|---|---:|---:|---:|---|---:|"]
        for _, i in idles:
            out.append(f"| {i['streams']:,} | {i['keepalive_s']} s | "
                       f"{', '.join(f'{k / 1024:.0f}' for k in i['rss_kib_held'])} (before: "
                       f"{', '.join(f'{k / 1024:.0f}' for k in i['rss_kib_before'])}) | "
                       f"{i['idle_cpu_share_gateway']:.1%} (a worker: "
                       f"{', '.join(f'{w:.1%}' for w in i['idle_cpu_share_per_worker'])}) | "
                       f"{i['idle_cpu_share']['engine']:.1%} | "
                       f"{i['idle_load_tool_cpu_share']:.1%} | {i['probe']['p50_ms']} / {i['probe']['p99_ms']} "
                       f"({i['probe']['moves']} moves at {i['probe_rate']:g}/s) | "
                       f"{i['seat_failures'] + i['probe']['failures']} |")
    out += ["", "![latency against seated people](performance_capacity.svg)"]
    return out


def save(result: Json, path: Path) -> None:
    """The results JSON; after a full run also the chart and the generated part of the "Capacity" section."""
    save_json(result, path)
    if not result["settings"]["tiny"]:
        CHART.write_text(chart(result))
        block = "\n".join([BEGIN, "", *markdown(result), "", END])
        DOC.write_text(between_markers(DOC.read_text(), BEGIN, END, block))
