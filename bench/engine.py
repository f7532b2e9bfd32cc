"""`domino bench engine`: random full rounds per second, ours against the public Python peers.

Every engine runs in its own worker process (`bench.worker`), and the
coordinator interleaves them: in each repetition, each member of a group plays
for one slice (``--seconds``, or ``--games`` whole games) while the others
wait, the order rotating between repetitions. A figure is the median over the
repetitions, and a ratio is the median of the per-repetition ratios, each taken
from two slices run back to back: on a shared, noisy 2-core machine only such
ratios mean something.

Groups (the peers are in the same run, interleaved):
- Kozel, 4 players, against the PyPI `dominoes` package (4 players): target 3x;
- block, 2 players, against OpenSpiel's `python_block_dominoes`: target 8x;
- All Fives 2 players, Osel 4 players, Kingdomino 4 players (when the registry
  has it): no peer.

Each "ours" is measured twice when `build/compiled` holds a current mypyc build
(scripts/build_compiled.sh): pure Python and compiled, side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bench import compiled as compiled_copy
from bench import workloads

Json = dict[str, Any]
ROOT = compiled_copy.ROOT


@dataclass(frozen=True)
class Group:
    name: str
    variant: str
    players: int
    peer: str | None = None        # "dominoes" | "openspiel"
    target: float | None = None    # minimum ours/peer games-per-second ratio


GROUPS = (
    Group("kozel-4", "kozel", 4, "dominoes", 3.0),
    Group("block-2", "block", 2, "openspiel", 8.0),
    Group("all-fives-2", "all-fives", 2),
    Group("osel-4", "osel", 4),
    Group("kingdomino-4", "kingdomino", 4),
)
#: Every preset's cost of statelessness and sizes, at a typical player count.
STATELESS = (("kozel", 4), ("kozel-classic", 4), ("osel", 4), ("bykovo", 4), ("threes-fives", 2),
             ("fives-and-threes", 2), ("all-threes", 2), ("all-fives", 2), ("block", 2), ("kingdomino", 4))
PEER_NAMES = {"dominoes": "dominoes (PyPI)", "openspiel": "OpenSpiel python_block_dominoes"}


class Worker:
    """One worker process and its pipe."""

    def __init__(self, name: str, compiled: bool = False) -> None:
        self.name = name
        env = dict(os.environ)
        # bench/ is in the checkout, not in the installed package: the checkout goes on the path
        # (after build/compiled, so that the compiled modules still come first).
        first = [str(compiled_copy.COMPILED)] if compiled else []
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*first, str(ROOT), env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "bench.worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
        self.info = self.call({"op": "info"})
        if compiled and not self.info.get("compiled"):
            raise RuntimeError(f"worker {name} did not load the compiled rules: {self.info}")

    def call(self, cmd: Json) -> Json:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} died")
        answer: Json = json.loads(line)
        if not answer.pop("ok", False):
            raise RuntimeError(f"worker {self.name}: {answer.get('error')}\n{answer.get('trace', '')}")
        return answer

    def close(self) -> None:
        try:
            self.call({"op": "quit"})
        except (RuntimeError, OSError, ValueError) as exc:  # already gone: nothing to ask
            print(f"bench engine: worker {self.name}: {exc}", file=sys.stderr)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()


@dataclass
class Member:
    label: str          # "ours", "ours_compiled", "dominoes", "openspiel"
    worker: Worker
    workload: Json
    slices: list[Json] = field(default_factory=list)


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def _summary(slices: list[Json]) -> Json:
    rates = [s["games"] / s["elapsed"] for s in slices]
    moves = [s["decisions"] / s["elapsed"] for s in slices]
    busy = [s["cpu"] / s["elapsed"] for s in slices]
    return {
        "games_per_s": _median(rates),
        "games_per_s_slices": [round(r, 1) for r in rates],
        "decisions_per_s": _median(moves),
        "decisions_per_game": sum(s["decisions"] for s in slices) / max(1, sum(s["games"] for s in slices)),
        "games": sum(s["games"] for s in slices),
        "cpu_share": _median(busy),   # CPU seconds / wall seconds: below ~0.95 the core was shared
    }


def _paired_ratio(a: Member, b: Member) -> Json:
    rs = [(x["games"] / x["elapsed"]) / (y["games"] / y["elapsed"]) for x, y in zip(a.slices, b.slices)]
    return {"median": _median(rs), "min": min(rs), "max": max(rs), "n": len(rs)}


def run(seconds: float = 1.0, repeats: int = 5, games: int | None = None, compiled: str = "auto",
        stateless_games: int = 20, stateless_repeat: int = 5, groups: list[str] | None = None,
        log: Any = None) -> Json:
    """Run the engine benchmark; returns the results object (see docs/performance.md)."""
    log = sys.stderr if log is None else log
    from engine_service.rules import PRESETS

    known = set(PRESETS)
    try:
        from engine_service.rules.kingdomino import Kingdomino  # noqa: F401

        known.add("kingdomino")
    except ImportError:
        pass
    usable, why = compiled_copy.status()
    if compiled == "no":
        usable, why = False, "disabled (--compiled no)"
    elif compiled == "yes" and not usable:
        raise SystemExit(f"bench engine: --compiled yes, but {why}")
    chosen = [g for g in GROUPS if groups is None or g.name in groups]
    skipped: Json = {}
    for g in chosen:
        if g.variant not in known:
            skipped[g.name] = f"no preset {g.variant!r} in the rules yet"
    chosen = [g for g in chosen if g.name not in skipped]
    peers_missing: Json = {}
    for peer in sorted({g.peer for g in chosen if g.peer}):
        reason = workloads.available(peer)
        if reason:
            peers_missing[peer] = reason

    workers: dict[str, Worker] = {}
    started = time.time()
    loadavg_before = list(os.getloadavg())
    try:
        workers["ours"] = Worker("ours")
        if usable:
            workers["ours_compiled"] = Worker("ours_compiled", compiled=True)
        for peer in sorted({g.peer for g in chosen if g.peer and g.peer not in peers_missing}):
            workers[peer] = Worker(peer)

        plan: list[tuple[Group, list[Member]]] = []
        for i, g in enumerate(chosen):
            ours = {"engine": "ours", "variant": g.variant, "players": g.players, "seed": 1000 + i}
            members = [Member("ours", workers["ours"], ours)]
            if "ours_compiled" in workers:
                members.append(Member("ours_compiled", workers["ours_compiled"], ours))
            if g.peer and g.peer in workers:
                members.append(Member(g.peer, workers[g.peer], {"engine": g.peer, "seed": 2000 + i}))
            plan.append((g, members))

        # Warm up every member (imports, caches, first allocations): not measured.
        for _g, members in plan:
            for m in members:
                m.worker.call({"op": "play", "workload": m.workload, "games": 20})
        slice_cmd: Json = {"games": games} if games is not None else {"seconds": seconds}
        for rep in range(repeats):
            for _group, members in plan:
                k = rep % len(members)
                for m in members[k:] + members[:k]:
                    m.slices.append(m.worker.call({"op": "play", "workload": m.workload, **slice_cmd}))
            print(f"bench engine: repetition {rep + 1}/{repeats} done", file=log, flush=True)

        result_groups: Json = {}
        for g, members in plan:
            by = {m.label: m for m in members}
            entry: Json = {
                "variant": g.variant, "players": g.players, "peer": g.peer,
                "members": {m.label: _summary(m.slices) for m in members},
                "ratios": {},
            }
            if "ours_compiled" in by:
                entry["ratios"]["ours_compiled/ours"] = _paired_ratio(by["ours_compiled"], by["ours"])
            if g.peer:
                if g.peer in by:
                    for label in ("ours", "ours_compiled"):
                        if label in by:
                            entry["ratios"][f"{label}/{g.peer}"] = _paired_ratio(by[label], by[g.peer])
                    entry["target"] = {
                        "ratio": g.target,
                        "met_pure": entry["ratios"][f"ours/{g.peer}"]["median"] >= (g.target or 0),
                        "met_compiled": (entry["ratios"][f"ours_compiled/{g.peer}"]["median"] >= (g.target or 0)
                                         if "ours_compiled" in by else None),
                    }
                else:
                    entry["peer_skipped"] = peers_missing[g.peer]
            result_groups[g.name] = entry

        stateless: Json = {}
        cases = [(v, n) for v, n in STATELESS if v in known]
        if groups is not None:  # only the chosen groups' variants
            cases = [(g.variant, g.players) for g, _members in plan]
        for label in ("ours", "ours_compiled"):
            if label not in workers:
                continue
            stateless[label] = {}
            for variant, n in cases:
                stateless[label][f"{variant}-{n}"] = workers[label].call({
                    "op": "stateless", "variant": variant, "players": n,
                    "games": stateless_games, "repeat": stateless_repeat})
            print(f"bench engine: stateless costs ({label}) done", file=log, flush=True)
        infos = {name: w.info for name, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()

    return {
        "kind": "engine",
        "settings": {
            "slice_seconds": None if games is not None else seconds,
            "slice_games": games,
            "repeats": repeats,
            "stateless_games": stateless_games,
            "compiled": {"used": usable, "why": why},
            "workers": infos,
            "cpus": os.cpu_count(),
            "loadavg_before": loadavg_before,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "wall_seconds": round(time.time() - started, 1),
        },
        "groups": result_groups,
        "groups_skipped": skipped,
        "peers_missing": peers_missing,
        "stateless": stateless,
    }


def format_text(r: Json) -> str:
    """A short human summary of an engine result."""
    lines = []
    for name, g in r["groups"].items():
        parts = [f"{label} {m['games_per_s']:,.0f} games/s" for label, m in g["members"].items()]
        lines.append(f"{name}: " + ", ".join(parts))
        for key, ratio in g["ratios"].items():
            lines.append(f"  {key}: {ratio['median']:.2f}x (min {ratio['min']:.2f}, max {ratio['max']:.2f})")
        if "target" in g:
            t = g["target"]
            lines.append(f"  target >= {t['ratio']}x: pure {'met' if t['met_pure'] else 'NOT met'}"
                         + ("" if t["met_compiled"] is None else
                            f", compiled {'met' if t['met_compiled'] else 'NOT met'}"))
        if "peer_skipped" in g:
            lines.append(f"  peer skipped: {g['peer_skipped']}")
    for name, why in r["groups_skipped"].items():
        lines.append(f"{name}: skipped ({why})")
    for label, per in r["stateless"].items():
        lines.append(f"stateless cost per decision ({label}), us: proto enc+dec / json enc+dec / decision")
        for name, s in per.items():
            proto = ("no wire form" if s["proto_encode_us"] is None
                     else f"{s['proto_encode_us']:.1f}+{s['proto_decode_us']:.1f}")
            lines.append(f"  {name}: {proto} / "
                         f"{s['json_encode_us']:.1f}+{s['json_decode_us']:.1f} / {s['decision_us']:.2f}; "
                         f"mid-round proto {s['mid_round_proto_bytes']} B")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench engine`'s own flags."""
    p.add_argument("--seconds", type=float, default=1.0, help="length of one slice (default 1.0)")
    p.add_argument("--games", type=int, help="play this many games per slice instead of --seconds")
    p.add_argument("--repeats", type=int, default=7, help="interleaved repetitions (default 7)")
    p.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                   help="also measure build/compiled (mypyc): auto = when current")
    p.add_argument("--group", action="append", help="only these groups (kozel-4, block-2, ...)")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench engine` with its flags (`--tiny`: a token workload for the test suite)."""
    if args.tiny:
        return run(seconds=0.05, repeats=1, games=None, compiled=args.compiled, stateless_games=2, stateless_repeat=3,
                   groups=args.group)
    return run(seconds=args.seconds, repeats=args.repeats, games=args.games, compiled=args.compiled,
               groups=args.group)
