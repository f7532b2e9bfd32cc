"""`domino bench state`: whether a call's cost grows with the match (issue 27).

Every state used to carry the whole match's action log, so a call cost more the
longer the match had run. This bench measures what issue 27 names, each figure
beside its comparison in one run, on the pure build and (when it is current)
the compiled one (`build/compiled`), and with ``--before DIR`` on an earlier
copy of the sources too (``git archive <commit> | tar -x -C DIR``, its protobuf
modules generated: ``python setup.py build_py``; its compiled build in
DIR/build/compiled when there is one), so that before and after are measured
side by side:

- ``flat``: decode plus encode of the protobuf state (`wire`) at the end of a
  4-player Kozel match against the same at its first move (target: within 1.3x), and
  against the state at the end of its first round (the same kind of state, a round
  over with its layout whole: what the match's length alone adds),
  the best of a few interleaved repeats over several seeded matches;
- ``sizes``: the mid-round 4-player Kozel state (halfway through a round's moves, as
  `bench engine`'s sizes take it) in protobuf bytes (target: under 200): the first
  round's (median over the matches), the later rounds' (median and largest), and as
  a sealed token (under 400 characters: median and largest); the state at the end;
- ``rest``: a whole match of every variant played through a real gateway in sealed
  mode (``domino serve``'s engine and gateway as processes): the median of the
  last 20 apply calls against that of the first 20 (target: within 1.2x).

Each tree is measured in a child process (`_CHILD`), so the one before and the one
after never share a module.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.compiled import ROOT

Json = dict[str, Any]

TARGETS = {"flat_ratio": 1.3, "mid_round_bytes": 200, "mid_round_token_chars": 400, "rest_ratio": 1.2}

#: What one tree measures in its own process: the in-process figures (`flat`, `sizes`).
_CHILD = r'''
import base64, json, os, random, statistics, sys, time
from engine_service.rules import Match
from engine_service.edge import game_state, wire
from api_gateway.tokens import KeyRing, new_sealed

args = json.loads(sys.argv[1])
ring = KeyRing([("bench", os.urandom(32))])

def play(seed):
    """A whole match: the state after its first move, at its end, and each round's halfway state
    (halfway through the round's moves, as `bench engine`'s sizes take it): (bytes, sealed bytes)."""
    match, _ = Match.new("kozel", 4, seed=seed)
    rng = random.Random(seed)
    first = round_end = None
    mids, round_states = [], []
    while not match.match_over:
        if match.round is None or match.round.over:
            if round_end is None and match.round is not None:
                round_end = wire.encode_state(match)
            if round_states:
                mids.append(round_states[len(round_states) // 2])
            round_states = []
            match.start_round()
            continue
        match.apply(rng.choice(match.legal_actions()))
        data = wire.encode_state(match)
        if first is None:
            first = data
        if match.round is not None and not match.round.over and not match.match_over:
            round_states.append((len(data), game_state.encode(match)))
    return first, wire.encode_state(match), mids, round_end

def best(states, repeat):
    out = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for data in states:
            wire.encode_state(wire.decode_state(data))
        out = min(out, (time.perf_counter() - t0) / len(states))
    return out * 1e6

firsts, lasts, ends1, first_round, later, tokens, end_sizes = [], [], [], [], [], [], []
for i in range(args["matches"]):
    first, last, mids, round_end = play(args["seed"] + i)
    ends1.append(round_end or last)
    firsts.append(first)
    lasts.append(last)
    end_sizes.append(len(last))
    first_round.append(mids[0][0])
    later.extend(n for n, _ in mids[1:])
    tokens.extend(len(ring.seal(new_sealed(sealed))) for _, sealed in mids)
first_us, last_us, end1_us = [], [], []
for _ in range(args["repeats"]):  # interleaved: the machine's noise falls on all alike
    first_us.append(best(firsts * 20, 1))
    last_us.append(best(lasts * 20, 1))
    end1_us.append(best(ends1 * 20, 1))
f, l, e = min(first_us), min(last_us), min(end1_us)
print(json.dumps({
    "flat": {"first_move_us": round(f, 1), "match_end_us": round(l, 1), "ratio": round(l / f, 2),
             "first_round_end_us": round(e, 1), "end_over_first_round_end": round(l / e, 2)},
    "sizes": {"mid_round_first_round_bytes": statistics.median(first_round),
              "mid_round_later_rounds_bytes": statistics.median(later or [0]),
              "mid_round_later_rounds_max_bytes": max(later or [0]),
              "mid_round_token_chars": statistics.median(tokens), "mid_round_max_token_chars": max(tokens),
              "match_end_bytes": max(end_sizes)},
}))
'''


def _env(tree: Path, compiled: bool) -> dict[str, str]:
    paths = [str(tree / "build" / "compiled")] if compiled else []
    paths += [str(tree), str(tree / "proto")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _compiled_current(tree: Path) -> bool:
    """A compiled build of `tree` is there (the current tree's is checked to be of its sources)."""
    if tree == ROOT:
        from bench.compiled import status

        return status()[0]
    return (tree / "build" / "compiled" / "SOURCE_HASH").exists()


def in_process(tree: Path, compiled: bool, matches: int, repeats: int, seed: int) -> Json:
    """`_CHILD`'s figures for `tree` (the pure build, or its compiled one)."""
    done = subprocess.run([sys.executable, "-P", "-c", _CHILD, json.dumps(
        {"matches": matches, "repeats": repeats, "seed": seed})], env=_env(tree, compiled), cwd=str(tree),
        capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"bench state ({tree}, compiled={compiled}): {done.stderr[-2000:]}")
    result: Json = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------- a whole match through REST, sealed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(base: str, path: str, body: Json) -> Json:
    import urllib.request

    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        answer: Json = json.loads(reply.read())
        return answer


def _play_rest(base: str, variant: str, players: int, seed: int) -> list[float]:
    """One sealed match of `variant` played to its end through the gateway at `base`: each apply's
    wall time (ms). The moves are chosen by the library on its own copy of the match (same seed)."""
    import random

    from engine_service.rules import Match

    created = _post(base, "/v1/matches", {"variant": variant, "players": players, "seed": seed,
                                          "mode": "sealed"})
    token, keys, host = created["token"], created["seat_keys"], created["host_key"]
    match, _ = Match.new(variant, players, seed=seed)
    rng = random.Random(seed)
    times: list[float] = []
    while not match.match_over:
        if match.round is None or match.round.over:
            token = _post(base, "/v1/matches/next-round", {"token": token, "seat_key": host})["token"]
            match.start_round()
            continue
        seat = match.to_move
        action = rng.choice(match.legal_actions())
        t0 = time.perf_counter()
        token = _post(base, "/v1/matches/apply", {"token": token, "seat_key": keys[seat], "action": action})["token"]
        times.append((time.perf_counter() - t0) * 1e3)
        match.apply(action)
    return times


def rest(tree: Path, compiled: bool, seed: int, variants: list[str] | None = None) -> Json:
    """Every matching variant's whole sealed match through an engine and a gateway run from `tree`."""
    from clients.serve_all import dev_token_keys

    port, engine_port = _free_port(), _free_port()
    workdir = Path(tempfile.mkdtemp(prefix="bench-state-"))
    env = {**_env(tree, compiled), "STATE_TOKEN_KEYS": dev_token_keys(),
           "GATEWAY_TOKEN_STORE": f"sqlite:///{workdir}/store.db"}
    argv = [sys.executable, "-P", "-m", "clients.cli", "serve", "all", "--port", str(port), "--engine-port",
            str(engine_port), "--engine-metrics-port", "off", "--gateway-metrics-port", "off"]
    log = (workdir / "serve.log").open("w")
    server = subprocess.Popen(argv, env=env, cwd=str(tree), stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base, server, workdir)
        names = variants or ["kozel", "kozel-classic", "osel", "bykovo", "threes-fives", "fives-and-threes",
                             "all-threes", "all-fives", "block"]
        out: Json = {}
        for i, variant in enumerate(names):
            players = 4
            times = _play_rest(base, variant, players, seed + i)
            k = min(20, len(times) // 2)
            first, last = statistics.median(times[:k]), statistics.median(times[-k:])
            out[variant] = {"calls": len(times), "first_p50_ms": round(first, 2), "last_p50_ms": round(last, 2),
                            "ratio": round(last / first, 2)}
        return out
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait(base: str, server: subprocess.Popen[bytes], workdir: Path, timeout: float = 60.0) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"domino serve all stopped: {(workdir / 'serve.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("domino serve all did not get ready")


# ---------------------------------------------------------------- the whole bench


def run(before: Path | None = None, matches: int = 5, repeats: int = 7, seed: int = 27, with_rest: bool = True,
        compiled: str = "auto", tiny: bool = False) -> Json:
    """Every figure for this tree and, with `before`, for that one beside it; on each build measured."""
    trees = [("after", ROOT)] + ([("before", before.resolve())] if before is not None else [])
    result: Json = {"targets": TARGETS, "trees": {}}
    for name, tree in trees:
        builds = [("pure", False)]
        if compiled == "yes" or (compiled == "auto" and _compiled_current(tree)):
            builds.append(("compiled", True))
        figures: Json = {}
        for build, is_compiled in builds:
            figures[build] = in_process(tree, is_compiled, 1 if tiny else matches, 2 if tiny else repeats, seed)
        if with_rest:
            figures["rest_sealed"] = rest(tree, False, seed, ["kozel"] if tiny else None)
        result["trees"][name] = {"path": str(tree), **figures}
    return result


def format_text(result: Json) -> str:
    lines = ["bench state (issue 27): a call's cost over a whole match; targets " + json.dumps(result["targets"])]
    for name, figures in result["trees"].items():
        lines.append(f"{name}  ({figures['path']})")
        for build in ("pure", "compiled"):
            if build in figures:
                f, s = figures[build]["flat"], figures[build]["sizes"]
                lines.append(f"  {build:8} decode+encode: first move {f['first_move_us']} us, match end "
                             f"{f['match_end_us']} us -> {f['ratio']}x; first round's end {f['first_round_end_us']} us "
                             f"-> match end / it {f['end_over_first_round_end']}x")
            if build == "pure":
                lines.append(f"  sizes    mid-round: first round {s['mid_round_first_round_bytes']} B, later rounds "
                             f"{s['mid_round_later_rounds_bytes']} B (max {s['mid_round_later_rounds_max_bytes']}); "
                             f"token {s['mid_round_token_chars']} chars (max {s['mid_round_max_token_chars']}); "
                             f"match end {s['match_end_bytes']} B")
        for variant, r in figures.get("rest_sealed", {}).items():
            lines.append(f"  rest sealed {variant:17} {r['calls']:4} applies: p50 first 20 {r['first_p50_ms']} ms, "
                         f"last 20 {r['last_p50_ms']} ms -> {r['ratio']}x")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`domino bench state`'s own flags."""
    p.add_argument("--before", type=Path, help="an earlier copy of the sources, measured beside this one")
    p.add_argument("--matches", type=int, default=5, help="seeded 4-player Kozel matches (default 5)")
    p.add_argument("--repeats", type=int, default=7, help="interleaved timing repeats (default 7)")
    p.add_argument("--no-rest", action="store_true", help="skip the whole matches through REST")
    p.add_argument("--compiled", choices=["auto", "yes", "no"], default="auto",
                   help="also measure each tree's build/compiled: auto = when there")


def run_args(args: argparse.Namespace, log: Any) -> Json:
    """`domino bench state` with its flags (`--tiny`: a token workload for the test suite)."""
    return run(before=args.before, matches=args.matches, repeats=args.repeats, with_rest=not args.no_rest,
               compiled=args.compiled, tiny=args.tiny)
