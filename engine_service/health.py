"""The engine's health service (`grpc.health.v1.Health`): Check and Watch, as the gateways ask them.

grpcio-health-checking's own `HealthServicer` stops the whole server when one Watch opens while
another closes: it sends a Watch's first answer (and every answer of `set`) while holding its lock, a
send waits for the server's polling thread, and that thread takes the same lock to run a closed
Watch's callback. Each waits for the other, and no call of any service is served again, though the
port still accepts connections (the engine frozen and thawed under two gateways stayed dead that way:
their health watches closed and opened at once; docs/reliability.md). Four threads opening and
cancelling watches stop that servicer within a second (`tests/engine/test_health.py`).

This one never sends under its lock: it takes a status and the watches to tell, then sends. A watch's
sends go one at a time (its own lock, which the polling thread never takes), each with the status as
it is when sent, so the last answer a watcher gets is always the current status. (An open upstream
change, grpc/grpc#43403, moves grpc_health's sends out of its lock too: once a release has it and
the test above passes on it, this module can give way to it again.)
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent import futures
from typing import Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

Response = health_pb2.HealthCheckResponse
SERVING: Final = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING: Final = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN: Final = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN

#: Watch runs here, not on the engine's call workers: a watch is long, and its first send waits.
_WATCH_POOL: Final = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="health")


class _Watch:
    """One open Watch call: how to send it an answer (None ends it), and its sends' turn."""

    __slots__ = ("send", "turn")

    def __init__(self, send: Callable[[Response | None], None]) -> None:
        self.send = send
        self.turn = threading.Lock()


class HealthServicer(health_pb2_grpc.HealthServicer):
    """Each service's status ("" is the whole engine's, SERVING from the start), asked or watched."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # held for reads and writes of the two dicts only, never a send
        self._status: dict[str, int] = {"": SERVING}
        self._watches: dict[str, set[_Watch]] = {}
        self._draining = False

    def Check(self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext) -> Response:
        with self._lock:
            status = self._status.get(request.service)
        if status is None:
            context.set_code(grpc.StatusCode.NOT_FOUND)
            return Response()
        return Response(status=status)

    def Watch(self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext,
              send_response_callback: Callable[[Response | None], None] | None = None) -> None:
        """The status now, then each change, until the caller goes (grpc's non-blocking streaming: the
        server passes `send_response_callback`, since `Watch.experimental_non_blocking` is set)."""
        assert send_response_callback is not None, "Watch is non-blocking: grpc passes the callback"
        service = request.service
        watch = _Watch(send_response_callback)
        with self._lock:
            self._watches.setdefault(service, set()).add(watch)
        context.add_callback(lambda: self._closed(service, watch))
        self._send(service, watch)

    Watch.experimental_non_blocking = True  # type: ignore[attr-defined]
    Watch.experimental_thread_pool = _WATCH_POOL  # type: ignore[attr-defined]

    def set(self, service: str, status: int) -> None:
        """Set a service's status and tell its watchers (nothing once draining)."""
        with self._lock:
            if self._draining:
                return
            self._status[service] = status
            watches = list(self._watches.get(service, ()))
        for watch in watches:
            self._send(service, watch)

    def enter_graceful_shutdown(self) -> None:
        """Every service NOT_SERVING from now on, for good: the engine is draining."""
        with self._lock:
            if self._draining:
                return
            self._draining = True
            for service in self._status:
                self._status[service] = NOT_SERVING
            told = [(service, watch) for service in self._status for watch in self._watches.get(service, ())]
        for service, watch in told:
            self._send(service, watch)

    def _send(self, service: str, watch: _Watch) -> None:
        """Send `watch` its service's status as it is now, after any send to it still under way."""
        with watch.turn:
            with self._lock:
                status = self._status.get(service, SERVICE_UNKNOWN)
            watch.send(Response(status=status))

    def _closed(self, service: str, watch: _Watch) -> None:
        """The Watch call ended (the caller went): forget it, and end it. Runs on grpc's polling thread,
        so it takes only the short lock, never a watch's turn."""
        with self._lock:
            watches = self._watches.get(service)
            if watches is not None:
                watches.discard(watch)
                if not watches:
                    del self._watches[service]
        watch.send(None)
