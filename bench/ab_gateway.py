"""A/B of two trees' sealed apply, engine and gateway each, beside the bare floor (for before/after figures).

    .venv/bin/python -m bench.ab_gateway /path/to/tree-A /path/to/tree-B [--seconds 4] [--repeats 8]
        [--engine own|one]

Each tree (a checkout, or `git archive` of one) runs its own gateway (`domino serve gateway`, its default
workers, a fresh SQLite store, the limits off as in `bench service`) with PYTHONPATH=<tree>. Engines:
``own`` (default) gives each tree its own engine, on the tree's compiled copy when it has one
(`<tree>/build/compiled`: `PYTHON=.venv/bin/python bash scripts/build_compiled.sh` run in the tree), else
pure; ``one`` puts both gateways on one engine of this checkout (compiled when current), for a change to
the gateway alone. The bare floor (`bench.bare_app`'s `/healthz`) runs beside them. Each repetition runs
the floor and both trees' sealed applies (wrk, 16 connections, real 4-player Kozel matches as in `bench
service`), the order turned every other repetition; printed per tree: sealed applies a second, the share
of the floor from the same repetition, and the gateway's CPU per apply (its processes' utime + stime
from /proc over the run, divided by the applies served); then B/A per repetition. The machine is shared:
read the medians and their spread, never one repetition.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench import sealed_games
from bench import service as svc
from bench.compiled import COMPILED, status
from bench.gateway_cost import _cpu_seconds, _with_children


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--engine", choices=("own", "one"), default="own")
    args = ap.parse_args()
    from clients.serve_all import dev_token_keys

    trees = [args.a.resolve(), args.b.resolve()]
    keys = dev_token_keys("bench")
    procs: list[svc.Proc] = []
    runs: dict[str, list[tuple[float, float]]] = {"A": [], "B": [], "bare": []}
    with tempfile.TemporaryDirectory(prefix="domino-ab-") as tmp:
        work = Path(tmp)
        try:
            if args.engine == "one":
                engines = [svc.start_engine(work, compiled=status()[0])] * 2
            else:  # each tree's compiled copy when it has one
                engines = [svc.start_engine(work, i, (tree / "build" / "compiled" / "SOURCE_HASH").exists(), tree)
                           for i, tree in enumerate(trees)]
            procs += engines[:1] if engines[0] is engines[1] else engines
            for i, tree in enumerate(trees):
                procs.append(svc.start_gateway(work, [engines[i]], keys, i, {**svc.LIMITS_OFF,
                                                                             **svc.fresh_store(work, i)}, tree))
            gateways = procs[-2:]
            bare = svc.start_bare(work, {**os.environ, "GATEWAY_ENGINE": engines[1].address})
            procs.append(bare)
            paths = []
            for i, gateway in enumerate(gateways):
                path = next(p for p in svc._rest_paths(gateway, work, args.seconds, None, f"-{i}")
                            if p.name == "rest_apply_sealed")
                path.name = "AB"[i]
                paths.append((path, gateway))
            floor = svc.Path_("bare", f"http://{bare.address}/healthz", None, (), False,
                              lambda delay, rate: sealed_games.fixed_script(None, delay))
            for rep in range(args.repeats):
                order = [(floor, bare), *paths]
                for path, proc in order if rep % 2 == 0 else order[::-1]:
                    pids = _with_children(proc.popen.pid)
                    before = sum(_cpu_seconds(pid) for pid in pids)
                    res = svc._saturate(path, args.seconds, work)
                    if res["failed"]:
                        raise svc.BenchError(f"{path.name}: {res['failed']} failed requests")
                    spent = sum(_cpu_seconds(pid) for pid in pids) - before
                    runs[path.name].append((res["req_per_s"], spent / max(res["req_per_s"] * args.seconds, 1) * 1e6))
                print(f"repetition {rep + 1}: " + ", ".join(f"{k} {v[-1][0]:,.0f} req/s" for k, v in runs.items()),
                      flush=True)
        finally:
            for proc in reversed(procs):
                proc.stop()
    median = statistics.median
    for name, tree in zip("AB", trees):
        shares = [x[0] / floor_run[0] for x, floor_run in zip(runs[name], runs["bare"])]
        print(f"{name} ({tree}): sealed apply {median(x[0] for x in runs[name]):,.0f} req/s, of the bare floor "
              f"{median(shares):.3f} (min {min(shares):.3f}, max {max(shares):.3f}), gateway CPU "
              f"{median(x[1] for x in runs[name]):,.0f} us per apply")
    rates = [b[0] / a[0] for a, b in zip(runs["A"], runs["B"])]
    cpus = [b[1] / a[1] for a, b in zip(runs["A"], runs["B"])]
    print(f"B/A sealed applies a second: median {median(rates):.3f} (min {min(rates):.3f}, max {max(rates):.3f}); "
          f"gateway CPU per apply: median {median(cpus):.3f} (min {min(cpus):.3f}, max {max(cpus):.3f})")
    print(f"(engines: {args.engine}; this checkout's compiled copy: {status()[1]}; {COMPILED})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
