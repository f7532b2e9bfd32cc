"""A/B of two engine trees under the same load, interleaved (for before/after figures in commits).

    .venv/bin/python bench/ab_engine.py /path/to/tree-A /path/to/tree-B [--seconds 5] [--repeats 5]

Starts one engine from each tree (PYTHONPATH=<tree>, python -P) and runs h2load at
saturation against Health/Check and Apply (mid-round 4-player Kozel) on each,
alternating, then prints the medians and the B/A ratios.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench import service as svc


def start(tree: Path, workdir: Path, name: str) -> svc.Proc:
    env = dict(os.environ, PYTHONPATH=str(tree))
    argv = [sys.executable, "-P", "-m", "engine_service", "--port", "0", "--metrics-port", "0"]
    return svc._start(name, argv, env, workdir, "grpc")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    bodies = svc.grpc_bodies()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        procs = {"A": start(args.a.resolve(), work, "A"), "B": start(args.b.resolve(), work, "B")}
        try:
            files = {}
            for name, (method, message) in bodies.items():
                files[name] = (method, work / f"{name}.bin")
                files[name][1].write_bytes(svc.grpc_frame(message))
                for p in procs.values():
                    svc.check_grpc(p.address, method, message)
            runs: dict[tuple[str, str], list[float]] = {}
            for rep in range(args.repeats):
                order = ["A", "B"] if rep % 2 == 0 else ["B", "A"]
                for which in order:
                    for name, (method, body) in files.items():
                        res = svc.h2load_saturate(f"http://{procs[which].address}{method}", args.seconds, body,
                                                  svc.GRPC_HEADERS)
                        runs.setdefault((which, name), []).append(res["req_per_s"])
                print(f"repetition {rep + 1}: " + ", ".join(f"{k[0]} {k[1]} {v[-1]:.0f}" for k, v in runs.items()),
                      flush=True)
        finally:
            for p in procs.values():
                p.stop()
    for name in files:
        a = statistics.median(runs[("A", name)])
        b = statistics.median(runs[("B", name)])
        ratios = [y / x for x, y in zip(runs[("A", name)], runs[("B", name)])]
        print(f"{name}: A {a:,.0f} req/s, B {b:,.0f} req/s, B/A median {statistics.median(ratios):.2f}")
    for which in ("A", "B"):
        r = [x / y for x, y in zip(runs[(which, "grpc_apply")], runs[(which, "grpc_health")])]
        print(f"{which}: apply/health median {statistics.median(r):.2f} (min {min(r):.2f}, max {max(r):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
