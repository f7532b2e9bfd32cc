"""A connection to the engine that the REST gateway and the Python client share.

`EngineChannel` makes its gRPC channel on first use in each process (so a
gunicorn worker never inherits one across fork), with the service config that

- balances round-robin over every address the target resolves to (a headless
  Kubernetes Service, or ``ipv4:a:p,b:q``);
- checks each engine's health from the client (``healthCheckConfig``): an engine
  that says NOT_SERVING (it does as soon as it is asked to stop) gets no new calls,
  so a draining engine finishes its calls and the others take the new ones;
- retries UNAVAILABLE with a short backoff (safe: every engine call is a pure
  function of its request), so a call to an engine that just died goes to another;

and reconnects quickly (backoff 0.1 s, at most 0.5 s): once an engine listens
again, calls reach it within about a second, however long it was away.

An engine that stops answering without closing its connections (a frozen
process, SIGSTOP, a node that hangs) is found by keepalive: a ping on a
connection that received nothing for half a second, and a connection whose
ping gets no answer within a second is closed. Its calls in flight then fail UNAVAILABLE and are retried on another
engine, and round robin skips it until it answers again (a new connection is
ready only once the engine's HTTP/2 settings arrive). Without this, half the
calls waited for their deadline for as long as the engine was frozen
(docs/reliability.md). The engine allows these pings (`KEEPALIVE_SERVER_OPTIONS`).
No outlier ejection: gRPC's counts every status but OK as a failure, so a client
sending illegal actions (FAILED_PRECONDITION) or expert calls refused busy could
eject healthy engines, and a frozen one answers nothing to count anyway.

It hands out the generated stubs of both services and answers the standard
health check (the gateway's `/readyz` reads one).

Part of the contract package with engine.proto and `domino.v1.errors`; it
imports only grpcio and the generated modules.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, NamedTuple, Self

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from domino.v1 import engine_pb2, engine_pb2_grpc

__all__ = ["DEFAULT_TIMEOUT", "ENGINE", "JSON_ENGINE", "KEEPALIVE_SERVER_OPTIONS", "EngineChannel",
           "service_config"]

DEFAULT_TIMEOUT = 5.0
#: A ping after half a second without news on a connection; no answer within a second closes it
#: (a false alarm costs a reconnection and a retry of the calls in flight, all pure).
KEEPALIVE_MS = 500
KEEPALIVE_TIMEOUT_MS = 1000
KEEPALIVE_CLIENT_OPTIONS = [
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    # Every ping, not only the keepalive's (the flow-control probe's too), times out this soon: a
    # ping already in flight otherwise stands for the keepalive with grpcio's 60 s timeout.
    ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]
#: What an engine server sets so that clients' keepalive pings are welcome.
KEEPALIVE_SERVER_OPTIONS = [
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]
ENGINE = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
JSON_ENGINE = engine_pb2.DESCRIPTOR.services_by_name["JsonEngine"].full_name


def service_config(max_attempts: int = 4, initial_backoff: float = 0.05, max_backoff: float = 0.25) -> str:
    """gRPC service config: round-robin over the healthy addresses the name resolves to, retry on UNAVAILABLE
    (`max_attempts` 1: no retry; gRPC refuses a retry policy of fewer than 2 attempts)."""
    method: dict[str, Any] = {"name": [{"service": ENGINE}, {"service": JSON_ENGINE}]}
    if max_attempts >= 2:
        method["retryPolicy"] = {
            "maxAttempts": max_attempts,
            "initialBackoff": f"{initial_backoff}s",
            "maxBackoff": f"{max_backoff}s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        }
    return json.dumps({
        "loadBalancingConfig": [{"round_robin": {}}],
        "healthCheckConfig": {"serviceName": JSON_ENGINE},
        "methodConfig": [method],
    })


class _Stubs(NamedTuple):
    """One channel's stubs, made together and replaced together (after a fork)."""

    engine: engine_pb2_grpc.EngineStub
    json: engine_pb2_grpc.JsonEngineStub
    health: health_pb2_grpc.HealthStub


class EngineChannel:
    """One engine target ("host:port", or "dns:///name:port" for every replica), per process."""

    def __init__(self, target: str, *, max_attempts: int = 4, max_message_bytes: int = 4 * 1024 * 1024) -> None:
        self.target = target
        self._options = [
            ("grpc.enable_retries", 1),
            ("grpc.service_config", service_config(max_attempts)),
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            # Reconnect within about a second of an engine coming back (the defaults back off to 2 min).
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 500),
            *KEEPALIVE_CLIENT_OPTIONS,
        ]
        self._lock = threading.Lock()
        self._pid = -1
        self._channel: grpc.Channel | None = None
        self._stubs: _Stubs | None = None

    def _connected(self) -> _Stubs:
        """This process's stubs, on a channel made on first use (and again after a fork)."""
        stubs = self._stubs
        if stubs is None or self._pid != os.getpid():
            with self._lock:
                if self._stubs is None or self._pid != os.getpid():
                    channel = grpc.insecure_channel(self.target, options=self._options)
                    self._stubs = _Stubs(engine_pb2_grpc.EngineStub(channel), engine_pb2_grpc.JsonEngineStub(channel),
                                         health_pb2_grpc.HealthStub(channel))
                    self._channel = channel
                    self._pid = os.getpid()
                stubs = self._stubs
        return stubs

    @property
    def engine(self) -> engine_pb2_grpc.EngineStub:
        """The typed service's stub (`domino.v1.Engine`)."""
        return self._connected().engine

    @property
    def json(self) -> engine_pb2_grpc.JsonEngineStub:
        """The JSON face's stub (`domino.v1.JsonEngine`)."""
        return self._connected().json

    def health(self, timeout: float, service: str = ENGINE) -> str:
        """The health status name of `service` ("SERVING", "NOT_SERVING", ...); raises grpc.RpcError."""
        check = self._connected().health.Check  # type: ignore[attr-defined]  # set in the stub's __init__
        reply = check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))

    def close(self) -> None:
        with self._lock:
            if self._channel is not None and self._pid == os.getpid():
                self._channel.close()
            self._channel = None
            self._stubs = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
