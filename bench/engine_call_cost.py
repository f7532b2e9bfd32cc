"""The engine server in process answering N gRPC calls (Health/Check or Apply): for callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python -P bench/engine_call_cost.py apply 300 [--no-freeze]

The server is the real one (`engine_service.server.create_server`, default settings: 4
threads, per-call JSON logs and metrics on, logging to /dev/null); a client in another
process (not counted) sends the requests of `domino bench service` one after the other.
Instructions at N minus instructions at 0, over N, are the engine's cost of one call,
grpcio's C core included: the figure behind `bench service`'s Apply / Health ratio.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CLIENT = """
import sys, grpc
target, method, n, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.stdin.read())
with grpc.insecure_channel(target) as channel:
    call = channel.unary_unary(method)
    for _ in range(n):
        call(body, timeout=60)
"""


def main() -> int:
    what, n = sys.argv[1], int(sys.argv[2])
    freeze = "--no-freeze" not in sys.argv  # the server's main freezes its startup heap (`server.freeze_heap`)
    sys.path.insert(0, str(ROOT))
    import logging

    from bench.service import grpc_bodies
    from engine_service.config import Config
    from engine_service.server import configure_logging, create_server, freeze_heap

    configure_logging("INFO")
    for handler in logging.getLogger().handlers:  # the JSON lines are formatted, then thrown away
        handler.stream = open("/dev/null", "w")  # type: ignore[attr-defined]
    method, body = grpc_bodies()["grpc_health" if what == "health" else "grpc_apply"]
    server = create_server(Config(port=0, metrics_port=None))
    if freeze:
        freeze_heap()
    try:
        client = subprocess.run([sys.executable, "-c", CLIENT, server.address, method, str(n)],
                                input=body.hex(), text=True, check=True)
        return client.returncode
    finally:
        server.server.stop(0).wait()
        server.bots.close()


if __name__ == "__main__":
    raise SystemExit(main())
