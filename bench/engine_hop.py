"""What one gRPC call to the engine costs the calling process, by where it waits for its completion.

    .venv/bin/python -m bench.engine_hop [--callers 8] [--seconds 4] [--repeats 3] [--method health|apply]

One engine (`bench.service.start_engine`, pure Python) and, for each way of waiting, a client process of
its own with `callers` greenlets (or threads) calling the engine back to back for `seconds`; printed: calls
a second and the client's CPU per call (utime + stime of the whole process over the window, its threads
included). The ways, alternated in every repetition:

- ``gevent-pool``: a gevent-patched process with `grpc.experimental.gevent.init_gevent()` alone, so each
  call's wait for its completion queue goes through gevent's own threadpool (the gateway before session 54);
- ``waits``: the same process with `api_gateway.engine_waits.install()` (the gateway's worker now);
- ``threads``: no gevent, plain threads: the floor of grpcio's client without any hand-over.

The engine's CPU is not counted: a slower client does not make the engine's calls dearer. The machine is
shared: read the medians, never one repetition.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import service as svc

WAYS = ("gevent-pool", "waits", "threads")

CLIENT = """
import json, resource, sys, time
way, target, method, callers, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
if way != "threads":
    from gevent import monkey
    monkey.patch_all()
    if way == "waits":
        from api_gateway import engine_waits
        engine_waits.install()
    else:
        from grpc.experimental import gevent as grpc_gevent
        grpc_gevent.init_gevent()
import threading
from bench.service import grpc_bodies
from domino.v1 import engine_pb2 as pb
from domino.v1.channel import EngineChannel
channel = EngineChannel(target)  # the gateway's channel: its retries, balancing and keepalive
if method == "health":
    def one():
        channel.health(5.0)
else:
    request = pb.ApplyRequest.FromString(grpc_bodies()["grpc_apply"][1])
    def one():
        channel.engine.Apply(request, timeout=5)
one()
count = [0]
stop = threading.Event()
def loop():
    while not stop.is_set():
        one()
        count[0] += 1
workers = [threading.Thread(target=loop) for _ in range(callers)]
for w in workers:
    w.start()
time.sleep(0.5)
c0, r0, t0 = count[0], resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
time.sleep(seconds)
c1, r1, t1 = count[0], resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
stop.set()
for w in workers:
    w.join()
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(json.dumps({"calls_s": (c1 - c0) / (t1 - t0), "cpu_us": cpu / (c1 - c0) * 1e6}))
"""


def run_client(way: str, target: str, method: str, callers: int, seconds: float) -> dict[str, float]:
    """One client process's window: {"calls_s", "cpu_us"}."""
    out = subprocess.run([sys.executable, "-c", CLIENT, way, target, method, str(callers), str(seconds)],
                         capture_output=True, text=True, timeout=seconds + 60, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--callers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--method", choices=("health", "apply"), default="health")
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory(prefix="domino-hop-") as tmp:
        engine = svc.start_engine(Path(tmp))
        try:
            for rep in range(args.repeats):
                order = WAYS if rep % 2 == 0 else tuple(reversed(WAYS))
                for way in order:
                    got = run_client(way, engine.address, args.method, args.callers, args.seconds)
                    runs[way].append(got)
                    print(f"repetition {rep + 1}: {way} {got['calls_s']:,.0f} calls/s, "
                          f"client CPU {got['cpu_us']:,.0f} us a call", flush=True)
        finally:
            engine.stop()
    for way in WAYS:
        cpu = [r["cpu_us"] for r in runs[way]]
        rate = [r["calls_s"] for r in runs[way]]
        print(f"{way}: client CPU a call median {statistics.median(cpu):,.0f} us "
              f"(min {min(cpu):,.0f}, max {max(cpu):,.0f}); calls/s median {statistics.median(rate):,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
