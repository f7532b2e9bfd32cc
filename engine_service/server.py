"""The engine server process: gRPC Engine and JsonEngine + health + reflection, metrics on their own port.

Run it as ``domino serve engine [flags]`` or ``python -m engine_service [flags]``
(flags and environment variables in `engine_service.config`). Once it listens
it prints one JSON line to stdout with the bound addresses, e.g.
``{"grpc": "127.0.0.1:50051", "metrics": "127.0.0.1:9464"}`` (with ``--port 0``
this is how a caller learns the port).

Shutdown on SIGTERM or SIGINT: health turns NOT_SERVING at once (so probes and
balancers stop sending), the server keeps serving for ``--shutdown-delay``
seconds, then refuses new calls and gives in-flight ones ``--grace`` seconds to
finish. A second signal stops at once. SIGUSR1 writes every thread's stack to
stderr and changes nothing (`faulthandler`): for an engine that stops answering.

The server is grpcio's synchronous thread-pool server: on the 2-core machines
this project measured, it answers a trivial call faster than ``grpc.aio``
(docs/grpc.md, "Server model").
"""
from __future__ import annotations

import faulthandler
import gc
import json
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from types import FrameType
from typing import Any

import grpc
from domino.v1 import engine_pb2, engine_pb2_grpc
from domino.v1.channel import KEEPALIVE_SERVER_OPTIONS
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from engine_service import config as config_module
from engine_service.admission import AdmissionInterceptor, BotWorkers
from engine_service.config import Config
from engine_service.edge.json_face import JsonEngineServicer
from engine_service.health import SERVING, HealthServicer
from engine_service.metrics import JsonFormatter, ObservingInterceptor
from engine_service.servicer import EngineServicer
from engine_service.status import PREFIXES, StatusInterceptor

log = logging.getLogger("engine_service.server")

_POLL_SECONDS = 0.05
ENGINE_SERVICE = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
JSON_SERVICE = engine_pb2.DESCRIPTOR.services_by_name["JsonEngine"].full_name


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class EngineServer:
    """A running engine: the gRPC server, its health servicer and the metrics endpoint."""

    config: Config
    server: grpc.Server
    health: HealthServicer
    port: int
    bots: BotWorkers
    metrics_http: Any | None = None   # the prometheus WSGI server, when metrics are on
    metrics_port: int | None = None

    @property
    def address(self) -> str:
        return _address(self.config.host, self.port)

    @property
    def metrics_address(self) -> str | None:
        return None if self.metrics_port is None else _address(self.config.host, self.metrics_port)

    def stop(self, grace: float | None = None, delay: float = 0.0,
             interrupted: Callable[[], bool] = lambda: False) -> None:
        """Graceful stop: NOT_SERVING, wait `delay`, refuse new calls, let in-flight ones finish.

        `interrupted()` turning true (a second signal) cuts the delay and the grace short.
        """
        self.health.enter_graceful_shutdown()
        log.info("health NOT_SERVING; draining", extra={"fields": {
            "shutdown_delay_s": delay, "grace_s": grace}})
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and not interrupted():
            time.sleep(_POLL_SECONDS)
        done = self.server.stop(0 if interrupted() else grace)
        while not done.wait(_POLL_SECONDS):
            if interrupted():
                self.server.stop(0)
        self.bots.close()
        if self.metrics_http is not None:
            self.metrics_http.shutdown()
        log.info("stopped")


def create_server(cfg: Config) -> EngineServer:
    """Build, bind and start the engine (ports 0 pick free ones); raises OSError when a bind fails."""
    options = [
        ("grpc.max_receive_message_length", cfg.max_message_bytes),
        ("grpc.max_send_message_length", cfg.max_answer_bytes),
        ("grpc.so_reuseport", 0),  # a second server on a busy port fails instead of sharing it
        # Close connections after a while (gracefully) so that clients balancing over a headless
        # Service re-resolve DNS and spread onto replicas the autoscaler added.
        ("grpc.max_connection_age_ms", 5 * 60 * 1000),
        ("grpc.max_connection_age_grace_ms", 30 * 1000),
        # The gateway pings twice a second to find an engine that stopped answering (a frozen process
        # keeps its sockets open): allow it, rather than answering GOAWAY "too many pings".
        *KEEPALIVE_SERVER_OPTIONS,
    ]
    bots = BotWorkers(cfg.bot_slots)  # its worker processes start with the first expert decision
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=cfg.workers, thread_name_prefix="engine"),
        interceptors=[ObservingInterceptor(cfg.log_calls), StatusInterceptor(),
                      AdmissionInterceptor(bots, cfg.max_call_seconds, PREFIXES)],
        options=options,
        maximum_concurrent_rpcs=cfg.max_concurrent_rpcs,
    )
    engine_pb2_grpc.add_EngineServicer_to_server(EngineServicer(), server)
    engine_pb2_grpc.add_JsonEngineServicer_to_server(JsonEngineServicer(cfg.log_calls), server)
    health_servicer = HealthServicer()  # not grpc_health's: it can deadlock the server (engine_service.health)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    services = [ENGINE_SERVICE, JSON_SERVICE, health.SERVICE_NAME]
    if cfg.reflection:
        services.append(reflection.SERVICE_NAME)
        reflection.enable_server_reflection(services, server)
    try:
        port = server.add_insecure_port(_address(cfg.host, cfg.port))
    except RuntimeError as exc:  # grpcio raises RuntimeError when it cannot bind
        raise OSError(f"cannot bind gRPC to {_address(cfg.host, cfg.port)}: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot bind gRPC to {_address(cfg.host, cfg.port)}")

    metrics_http = None
    metrics_port = None
    if cfg.metrics_port is not None:
        try:
            metrics_http, _thread = start_http_server(cfg.metrics_port, addr=cfg.host)
        except OSError as exc:
            raise OSError(f"cannot bind metrics to {_address(cfg.host, cfg.metrics_port)}: {exc}") from exc
        metrics_port = int(metrics_http.server_port)

    server.start()
    for name in ("", ENGINE_SERVICE, JSON_SERVICE):
        health_servicer.set(name, SERVING)
    return EngineServer(cfg, server, health_servicer, port, bots, metrics_http, metrics_port)


def configure_logging(level: str) -> None:
    """JSON lines on stderr for everything (stdout carries only the startup line).

    A record gathers nothing the JSON lines leave out (`JsonFormatter`: time, level, logger, message, fields,
    exception): not the caller's file and line (a walk up the stack per record), the thread, nor the process
    (the logging HOWTO's "Optimization"). The per-call line is written for every call the engine serves."""
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def freeze_heap() -> None:
    """Move what the started server is made of (~35,000 objects: rules tables, protobuf descriptors,
    grpcio) out of the garbage collector's reach (`gc.freeze`): it lives as long as the process, and
    every full collection scanned it (~10 ms, every thread's calls waiting on the GIL meanwhile);
    what calls allocate is collected as before."""
    gc.collect()
    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    """Process entry point; returns the exit status (0 after a clean shutdown, 1 when it cannot start)."""
    cfg = config_module.load(sys.argv[1:] if argv is None else argv)
    configure_logging(cfg.log_level)

    signals: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Only record it: taking any lock here (an Event's, grpc's, logging's) can deadlock
        # with the main thread that the handler interrupted.
        signals.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # written from C: no lock of ours is taken

    try:
        engine = create_server(cfg)
    except OSError as exc:
        log.error("cannot start", extra={"fields": {"error": str(exc)}})
        return 1
    freeze_heap()
    print(json.dumps({"grpc": engine.address, "metrics": engine.metrics_address}), flush=True)
    log.info("listening", extra={"fields": {
        "grpc": engine.address, "metrics": engine.metrics_address, "workers": cfg.workers,
        "reflection": cfg.reflection, "max_message_bytes": cfg.max_message_bytes,
        "max_answer_bytes": cfg.max_answer_bytes, "bot_slots": cfg.bot_slots,
        "max_call_seconds": cfg.max_call_seconds}})

    while not signals:
        time.sleep(_POLL_SECONDS)
    log.info("signal received", extra={"fields": {"signal": signal.Signals(signals[0]).name}})
    engine.stop(cfg.grace_seconds, cfg.shutdown_delay_seconds, lambda: len(signals) > 1)
    return 0
