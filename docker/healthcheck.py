"""Container health check: exit 0 when the service in this container answers healthy, else 1.

    python healthcheck.py grpc [HOST:PORT] [SERVICE]   # grpc.health.v1 Check == SERVING
    python healthcheck.py http [URL]                   # GET answers 2xx

Defaults come from the same environment variables the services read, so the
image's HEALTHCHECK follows a port changed with -e: ENGINE_PORT (50051) for grpc,
GATEWAY_PORT (8080) and path /healthz for http. Always probes loopback: it runs
inside the container, next to the server. Time limit: HEALTHCHECK_TIMEOUT (2 s).
"""
from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def _timeout() -> float:
    return float(os.environ.get("HEALTHCHECK_TIMEOUT", "2"))


def check_grpc(target: str, service: str) -> str | None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=_timeout())
        except grpc.RpcError as exc:
            return f"{target}: {exc.code().name}: {exc.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return f"{target}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}"
    return None


def check_http(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=_timeout()) as reply:
            status = reply.status
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {exc}"
    return None if 200 <= status < 300 else f"{url}: HTTP {status}"


def main(argv: list[str]) -> int:
    kind = argv[0] if argv else "grpc"
    if kind == "grpc":
        target = argv[1] if len(argv) > 1 else f"127.0.0.1:{os.environ.get('ENGINE_PORT') or 50051}"
        problem = check_grpc(target, argv[2] if len(argv) > 2 else "")
    elif kind == "http":
        port = os.environ.get("GATEWAY_PORT") or "8080"
        problem = check_http(argv[1] if len(argv) > 1 else f"http://127.0.0.1:{port}/healthz")
    else:
        print(f"usage: healthcheck.py grpc|http [target]; not {kind!r}", file=sys.stderr)
        return 2
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
