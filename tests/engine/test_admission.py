"""engine_service.admission: bot workers shared with a match's bot seats first, and every call's deadline.

Real worker processes (the forkserver pool the engine runs) and a real in-process gRPC server with the
engine's interceptors; the decisions are real expert ones (a 4-player Kingdomino start: the dearest).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc
from gateway import replay_bomb

from engine_service import admission, calls
from engine_service.admission import AdmissionInterceptor, BotWorkers, Busy, PastDeadline
from engine_service.bots import Budget, Deadline
from engine_service.edge.json_face import JsonEngineServicer
from engine_service.status import PREFIXES, StatusInterceptor

pytestmark = pytest.mark.serial  # deadlines of a fraction of a second


def _kd_view() -> dict[str, Any]:
    game, _ = calls.new_kingdomino(4, seed=3)
    return calls.seat_view(game, game.to_move)


KD_VIEW = _kd_view()


@pytest.fixture(scope="module")
def workers() -> Iterator[BotWorkers]:
    pool = BotWorkers(1)
    yield pool
    pool.close()


#: As many rollouts as fit before the deadline: what stops the search is the call's deadline.
ENDLESS = Budget(iterations=10**7)


def _hints(workers: BotWorkers, seat: bool, seconds: float, budget: Budget | None = None) -> Any:
    return workers.decide(seat, "hints", KD_VIEW, "expert", budget, 0, Deadline.after(seconds))


def test_a_decision_in_a_worker_is_the_library_s(workers: BotWorkers) -> None:
    game, _ = calls.new_match("kozel", 4, seed=3)
    view = calls.seat_view(game, game.to_move)
    from engine_service import bots

    assert workers.decide(False, "suggest", view, "expert", None, 5, Deadline.after(30)) == \
        bots.suggest(view, "expert", seed=5)
    assert workers.free == 1


def test_a_client_is_refused_while_a_match_s_bots_are_playing(workers: BotWorkers) -> None:
    workers.enter_turns()  # a match's bot seats are between two decisions: the worker is promised to them
    try:
        with pytest.raises(Busy, match="deciding for other calls"):
            _hints(workers, False, 30)
    finally:
        workers.leave_turns()
    assert _hints(workers, False, 30)["player"] == KD_VIEW["player"]


def test_a_match_s_bot_seat_takes_the_worker_from_a_client(workers: BotWorkers) -> None:
    """A client's decision that would go on for 30 s gives way to a match's bot seat at once: the client is
    answered busy, the seat decides; a second client meanwhile is refused, not queued."""
    order: list[str] = []

    def client_decides() -> None:
        with pytest.raises(Busy, match="bot seat"):
            _hints(workers, False, 30, ENDLESS)
        order.append("client")

    client = threading.Thread(target=client_decides)
    client.start()
    while workers.free:  # the client's decision has the worker
        time.sleep(0.01)
    with pytest.raises(Busy):
        _hints(workers, False, 30)
    started = time.monotonic()
    workers.enter_turns()
    try:
        _hints(workers, True, 30)
        order.append("seat")
    finally:
        workers.leave_turns()
    client.join(30)
    assert time.monotonic() - started < 5.0  # not the client's 30 s
    assert sorted(order) == ["client", "seat"] and workers.free == 1


def test_a_decision_stops_at_its_deadline_and_the_worker_comes_back(workers: BotWorkers) -> None:
    started = time.monotonic()
    with pytest.raises(PastDeadline):
        _hints(workers, False, 0.2, ENDLESS)
    assert time.monotonic() - started < 1.0
    while not workers.free:  # the worker stops within one iteration of its search
        assert time.monotonic() - started < 2.0
        time.sleep(0.01)
    assert _hints(workers, False, 30)["values"]


def test_a_dead_worker_is_replaced() -> None:
    pool = BotWorkers(1)
    try:
        result: list[BaseException] = []

        def decide() -> None:
            try:
                _hints(pool, False, 30, ENDLESS)
            except BaseException as exc:  # noqa: BLE001 - kept for the assertion
                result.append(exc)

        thread = threading.Thread(target=decide)
        thread.start()
        while pool.free:
            time.sleep(0.01)
        time.sleep(0.2)
        assert pool.pids()
        for pid in pool.pids():
            os.kill(pid, signal.SIGKILL)
        thread.join(30)
        assert result and isinstance(result[0], admission.WorkerLost)
        assert pool.free == 1 and _hints(pool, False, 30)["values"]
    finally:
        pool.close()


@contextmanager
def _engine(workers: BotWorkers, max_call_seconds: float = 30.0) -> Iterator[pb_grpc.JsonEngineStub]:
    """An in-process engine with the real interceptors (statuses, admission) over `workers`."""
    server = grpc.server(futures.ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0)],
                         interceptors=[StatusInterceptor(), AdmissionInterceptor(workers, max_call_seconds, PREFIXES)])
    pb_grpc.add_JsonEngineServicer_to_server(JsonEngineServicer(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.JsonEngineStub(channel)  # type: ignore[no-untyped-call]
    finally:
        server.stop(0)


def _wait_free(workers: BotWorkers, started: float) -> None:
    while not workers.free:
        assert time.monotonic() - started < 2.0, "the worker went on past the call's deadline"
        time.sleep(0.01)


def test_a_call_past_its_grpc_deadline_stops_its_bots(workers: BotWorkers) -> None:
    """The bot-seat replay bomb (tests/gateway/replay_bomb.py): 216 expert decisions, cut at 0.5 s."""
    bomb = pb.JsonCall(args=orjson.dumps(replay_bomb.bomb()))
    with _engine(workers) as stub:
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as err:
            stub.Replay(bomb, timeout=0.5)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        _wait_free(workers, started)


def test_a_call_without_a_deadline_stops_at_the_engine_s_cap(workers: BotWorkers) -> None:
    bomb = pb.JsonCall(args=orjson.dumps(replay_bomb.bomb()))
    with _engine(workers, max_call_seconds=0.5) as stub:
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as err:
            stub.Replay(bomb)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "deadline" in (err.value.details() or "")
        assert time.monotonic() - started < 2.0
        _wait_free(workers, started)
