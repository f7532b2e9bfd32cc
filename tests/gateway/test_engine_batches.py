"""`api_gateway.engine_batches`: a worker's engine calls of the same moment sent as one `JsonEngine/Batch`.

The batcher's rules with a scripted `send` whose batches answer when a test lets them (threads meeting on
events, nothing waits on time): a call alone goes at once; calls that wait while batches are out go
together; each caller gets its own item; a failed batch fails each of its calls; more calls than a batch
holds go in several; a caller's deadline is its own; a gatherer that stops leaves nothing stuck. Then
the gateway's `Engine` on real engines: a deferred call is sent on its own, an engine without batches
gets calls one by one, and the real gateway under load sends batches of several calls.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb

from api_gateway.engine import Engine
from api_gateway.engine_batches import Batches, BatchFailed
from engine_service.rules import Match

from .conftest import EngineProc, FakeEngine, Gateway, wait_for

WAIT = 30.0  # the longest any step may take on a loaded machine before the test calls it stuck


class Down(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "the engine is down"


class Sends:
    """A scripted `send`: records each batch's calls; batch i answers once `gates[i]` is set (if it has one),
    each item answering its method's name, or raises `fail`."""

    def __init__(self, gated: int = 0, fail: Exception | None = None) -> None:
        self.batches: list[list[str]] = []
        self.gates = [threading.Event() for _ in range(gated)]
        self.fail = fail
        self._lock = threading.Lock()

    def __call__(self, batch: pb.JsonBatch, timeout: float) -> pb.JsonBatchAnswer:
        with self._lock:
            index = len(self.batches)
            self.batches.append([item.method for item in batch.items])
        if index < len(self.gates):
            assert self.gates[index].wait(WAIT), f"batch {index} was never let go"
        if self.fail is not None:
            raise self.fail
        return pb.JsonBatchAnswer(answers=[pb.JsonItemAnswer(answer=pb.JsonAnswer(answer=item.method.encode()))
                                           for item in batch.items])


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=16) as executor:
        yield executor


def call(batches: Batches, method: str, timeout: float = WAIT) -> str:
    return batches.call(method, pb.JsonCall(), timeout).answer.answer.decode()


def test_a_call_alone_goes_at_once_alone() -> None:
    sends = Sends()
    batches = Batches(sends)
    assert call(batches, "Apply") == "Apply"
    assert call(batches, "View") == "View"
    assert sends.batches == [["Apply"], ["View"]]


def test_calls_that_wait_while_batches_are_out_go_together_and_each_gets_its_own(pool: ThreadPoolExecutor) -> None:
    sends = Sends(gated=2)
    batches = Batches(sends, in_flight=2, hold=WAIT)
    first = pool.submit(call, batches, "A")
    wait_for(lambda: len(sends.batches) == 1, WAIT)
    second = pool.submit(call, batches, "B")
    wait_for(lambda: len(sends.batches) == 2, WAIT)
    rest = [pool.submit(call, batches, name) for name in ("C", "D", "E")]
    wait_for(lambda: batches.waiting() == 3, WAIT)  # two batches out: these wait for one to come back
    assert len(sends.batches) == 2
    sends.gates[0].set()
    assert first.result(WAIT) == "A"
    assert [f.result(WAIT) for f in rest] == ["C", "D", "E"]
    sends.gates[1].set()
    assert second.result(WAIT) == "B"
    assert sends.batches[:2] == [["A"], ["B"]] and sorted(sends.batches[2]) == ["C", "D", "E"]


def test_more_calls_than_a_batch_holds_go_in_several(pool: ThreadPoolExecutor) -> None:
    sends = Sends(gated=1)
    batches = Batches(sends, in_flight=1, hold=WAIT, most=2)
    first = pool.submit(call, batches, "A")
    wait_for(lambda: len(sends.batches) == 1, WAIT)
    rest = [pool.submit(call, batches, name) for name in "BCDEF"]
    wait_for(lambda: batches.waiting() == 5, WAIT)
    sends.gates[0].set()
    assert first.result(WAIT) == "A" and [f.result(WAIT) for f in rest] == list("BCDEF")
    assert [len(b) for b in sends.batches] == [1, 2, 2, 1]
    assert sorted(name for b in sends.batches[1:] for name in b) == list("BCDEF")


def test_a_failed_batch_fails_each_of_its_calls_with_its_status(pool: ThreadPoolExecutor) -> None:
    sends = Sends(gated=1, fail=Down())
    batches = Batches(sends, in_flight=1, hold=WAIT)
    first = pool.submit(call, batches, "A")
    wait_for(lambda: len(sends.batches) == 1, WAIT)
    rest = [pool.submit(call, batches, name) for name in "BC"]
    wait_for(lambda: batches.waiting() == 2, WAIT)
    sends.gates[0].set()
    for future in (first, *rest):
        with pytest.raises(BatchFailed) as failed:
            future.result(WAIT)
        assert (failed.value.code, failed.value.details) == (grpc.StatusCode.UNAVAILABLE, "the engine is down")
    assert [len(b) for b in sends.batches] == [1, 2]


def test_a_callers_deadline_is_its_own(pool: ThreadPoolExecutor) -> None:
    sends = Sends(gated=1)
    batches = Batches(sends, in_flight=1, hold=WAIT)
    slow = pool.submit(call, batches, "A")
    wait_for(lambda: len(sends.batches) == 1, WAIT)
    gatherer = pool.submit(call, batches, "C")  # waits for A's batch to come back before it sends
    wait_for(lambda: batches.waiting() == 1, WAIT)
    with pytest.raises(TimeoutError):
        call(batches, "B", timeout=0.05)  # waits in C's batch: it gives up at its deadline, C does not
    sends.gates[0].set()
    assert slow.result(WAIT) == "A" and gatherer.result(WAIT) == "C"
    assert sends.batches == [["A"], ["C", "B"]]


def test_a_gatherer_sends_at_its_own_deadline_at_the_latest(pool: ThreadPoolExecutor) -> None:
    sends = Sends(gated=1)
    batches = Batches(sends, in_flight=1, hold=WAIT)
    slow = pool.submit(call, batches, "A")
    wait_for(lambda: len(sends.batches) == 1, WAIT)
    with pytest.raises(BatchFailed) as failed:  # it stopped waiting for A's batch at its deadline, then had no time
        call(batches, "B", timeout=0.05)
    assert failed.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    sends.gates[0].set()
    assert slow.result(WAIT) == "A" and call(batches, "C") == "C"
    assert sends.batches == [["A"], ["C"]]


def test_a_gatherer_that_stops_fails_what_it_gathered_and_leaves_nothing_stuck(pool: ThreadPoolExecutor) -> None:
    entered, stop = threading.Event(), threading.Event()
    stops = [True]

    def settle() -> None:
        if stops and stops.pop():
            entered.set()
            assert stop.wait(WAIT)
            raise KeyboardInterrupt("the worker is stopping")

    sends = Sends()
    batches = Batches(sends, settle)
    gatherer = pool.submit(call, batches, "A")
    assert entered.wait(WAIT)
    follower = pool.submit(call, batches, "B")
    wait_for(lambda: batches.waiting() == 2, WAIT)
    stop.set()
    with pytest.raises(KeyboardInterrupt):
        gatherer.result(WAIT)
    with pytest.raises(BatchFailed) as failed:
        follower.result(WAIT)
    assert failed.value.code == grpc.StatusCode.UNAVAILABLE
    assert call(batches, "C") == "C" and sends.batches == [["C"]]


# ---------------------------------------------------------------- the gateway's Engine on real engines


def test_a_call_the_engine_defers_is_sent_on_its_own(engine_proc: EngineProc) -> None:
    leader = Match.new("all-fives", 2, seed=5)[0].to_move
    engine = Engine(engine_proc.address, timeout=30)
    try:
        answer = engine.call("NewMatch", {"variant": "all-fives", "players": 2, "seed": 5,
                                          "bots": [{"seat": leader, "level": "expert"}]})
    finally:
        engine.close()
    events = orjson.loads(answer.answer)["events"]
    assert any(e.get("seat") == leader and e["type"] in ("played", "drew", "passed") for e in events)


def test_an_engine_without_batches_gets_calls_one_by_one(fake_engine: Callable[[], FakeEngine]) -> None:
    fake = fake_engine()  # a JsonEngine servicer of its own: no Batch, UNIMPLEMENTED
    fake.servicer.handlers["ListVariants"] = lambda request, context: pb.JsonAnswer(answer=b'{"variants": []}')
    engine = Engine(fake.address, timeout=10)
    try:
        assert [orjson.loads(engine.call("ListVariants", {}).answer) for _ in range(3)] == [{"variants": []}] * 3
        assert not engine._batching  # switched off at the first UNIMPLEMENTED
    finally:
        engine.close()
    assert fake.servicer.calls == ["ListVariants"] * 3


def _batch_calls(gateway: Gateway) -> tuple[float, float]:
    """(batches sent, calls in them), from the gateway's metrics."""
    text = gateway.metrics()
    count = re.search(r"^domino_gateway_engine_batch_calls_count (\S+)$", text, re.MULTILINE)
    total = re.search(r"^domino_gateway_engine_batch_calls_sum (\S+)$", text, re.MULTILINE)
    return (float(count.group(1)) if count else 0.0, float(total.group(1)) if total else 0.0)


def test_the_gateway_under_load_sends_several_calls_in_a_batch(gateway: Gateway) -> None:
    """Sixteen people playing their sealed matches at once on the real gateway (gunicorn, gevent workers):
    every move answered, and the workers' engine calls of the same moment went in shared batches."""
    before = _batch_calls(gateway)

    def play(seed: int) -> int:
        created = gateway.call("POST", "/v1/matches", {"variant": "kozel", "players": 4, "seed": seed,
                                                       "mode": "sealed"})
        assert created.status == 201, created.body
        body: dict[str, Any] = created.json
        match = Match.new("kozel", 4, seed=seed)[0]
        token, moves = body["token"], 0
        while match.legal_actions() and moves < 24:
            action = match.legal_actions()[0]
            seat = match.to_move
            reply = gateway.call("POST", "/v1/matches/apply",
                                 {"token": token, "seat_key": body["seat_keys"][seat], "action": action})
            assert reply.status == 200, reply.body
            token = reply.json["token"]
            match.apply(action)
            moves += 1
        return moves

    with ThreadPoolExecutor(max_workers=16) as executor:
        played = sum(executor.map(play, range(900, 916)))
    after = _batch_calls(gateway)
    batches, calls = after[0] - before[0], after[1] - before[1]
    assert calls >= played + 16  # every apply and every new match went in a batch
    assert batches < calls, (batches, calls)  # and some batch carried several
