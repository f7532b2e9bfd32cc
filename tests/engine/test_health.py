"""The engine's health service (`engine_service.health`): watches that open and close at once never stop
the server, and every watcher ends up told the current status."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engine_service.health import NOT_SERVING, SERVICE_UNKNOWN, SERVING, HealthServicer

pytestmark = pytest.mark.service


def _churn(address: str, stop: threading.Event, firsts: list[int], errors: list[str]) -> None:
    """Open 8 watches, take each one's first answer, cancel them all; again until `stop`."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while not stop.is_set():
            calls = [stub.Watch(health_pb2.HealthCheckRequest(service="domino.v1.Engine"), timeout=10)
                     for _ in range(8)]
            for call in calls:
                try:
                    firsts.append(next(call).status)
                except grpc.RpcError as err:  # a deadlocked server: its deadline passes
                    errors.append(f"{err.code()} {err.details()}")
            for call in calls:
                call.cancel()


def test_watches_opening_while_others_close_never_stop_the_engine(engine_factory: Callable[..., Any]) -> None:
    """grpcio-health-checking's servicer stopped every service for good within a second of this (a Watch's
    first answer sent under the lock a closing Watch's callback takes on the polling thread), and SIGTERM
    could not stop it then: the thawed engine of tests/gateway/test_gateway_engine_faults.py met it when
    its gateways' watches churned."""
    server = engine_factory()
    stop = threading.Event()
    firsts: list[int] = []
    errors: list[str] = []
    threads = [threading.Thread(target=_churn, args=(server.address, stop, firsts, errors), daemon=True)
               for _ in range(4)]
    for t in threads:
        t.start()
    answered = 0
    try:
        with grpc.insecure_channel(server.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            engine = engine_pb2_grpc.EngineStub(channel)
            until = time.monotonic() + 3.0
            while time.monotonic() < until:
                # a stopped server answers neither within the 5 s: RpcError DEADLINE_EXCEEDED fails the test
                assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == SERVING
                assert engine.ListVariants(pb.ListVariantsRequest(), timeout=5).variants
                answered += 1
                time.sleep(0.1)
        failed, told = list(errors), list(firsts)
        # SIGTERM while the watches still churn: the server drains and exits (the deadlocked one's main
        # thread waited for the same lock in `enter_graceful_shutdown`, and it never exited)
        server.signal(signal.SIGTERM)
        assert server.proc.wait(30) == 0
    finally:
        stop.set()
        for t in threads:
            t.join(15)
    assert answered >= 10 and failed == []
    assert len(told) > 100 and set(told) == {SERVING}  # the watches did churn, each told SERVING first


@pytest.fixture
def served() -> Iterator[tuple[HealthServicer, health_pb2_grpc.HealthStub]]:
    """Our servicer alone in a gRPC server of its own, and a stub to it."""
    servicer = HealthServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield servicer, health_pb2_grpc.HealthStub(channel)
    server.stop(0).wait(5)


def _watch(stub: health_pb2_grpc.HealthStub, service: str) -> tuple[list[int], Any]:
    """A Watch of `service` whose answers are kept, as they come, in the returned list."""
    seen: list[int] = []
    call = stub.Watch(health_pb2.HealthCheckRequest(service=service), timeout=10)

    def read() -> None:
        try:
            seen.extend(r.status for r in call)
        except grpc.RpcError:
            pass

    threading.Thread(target=read, daemon=True).start()
    return seen, call


def test_a_watcher_hears_its_status_then_each_change(
        served: tuple[HealthServicer, health_pb2_grpc.HealthStub], wait_until: Callable[..., bool]) -> None:
    servicer, stub = served
    seen, call = _watch(stub, "domino.v1.Engine")
    assert wait_until(lambda: seen == [SERVICE_UNKNOWN])  # not set yet
    servicer.set("domino.v1.Engine", SERVING)
    assert wait_until(lambda: seen == [SERVICE_UNKNOWN, SERVING])
    assert stub.Check(health_pb2.HealthCheckRequest(service="domino.v1.Engine"), timeout=5).status == SERVING
    whole, whole_call = _watch(stub, "")
    assert wait_until(lambda: whole == [SERVING])  # the whole engine's is SERVING from the start
    servicer.enter_graceful_shutdown()
    assert wait_until(lambda: seen[-1:] == [NOT_SERVING] and whole[-1:] == [NOT_SERVING])
    servicer.set("domino.v1.Engine", SERVING)  # draining is for good
    time.sleep(0.2)
    assert seen[-1] == NOT_SERVING
    assert stub.Check(health_pb2.HealthCheckRequest(service="domino.v1.Engine"), timeout=5).status == NOT_SERVING
    with pytest.raises(grpc.RpcError) as info:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    call.cancel()
    whole_call.cancel()


def test_every_watcher_ends_on_the_last_status_set_while_watches_open(
        served: tuple[HealthServicer, health_pb2_grpc.HealthStub], wait_until: Callable[..., bool]) -> None:
    """A status set while watches are still opening (their first answer not sent yet): each watcher's last
    answer is the last status set, never an older one sent late."""
    servicer, stub = served
    watches = []
    for i in range(20):
        watches.append(_watch(stub, "svc"))
        servicer.set("svc", SERVING if i % 2 else NOT_SERVING)
    servicer.set("svc", SERVING)
    assert wait_until(lambda: all(seen[-1:] == [SERVING] for seen, _ in watches))
    time.sleep(0.2)  # nothing older arrives after it
    assert all(seen[-1] == SERVING for seen, _ in watches)
    for _, call in watches:
        call.cancel()
