"""A worker's engine calls that wait at the same moment, sent to the engine as one `JsonEngine/Batch` call.

grpcio's cost is per call on both sides: in a gateway worker under load a call costs the worker ~350 µs
and the engine ~450 µs around the few hundred microseconds of the call's own work (docs/performance.md,
"Session 55"). The engine answers several calls in one (docs/grpc.md, "Batches"), so a worker with
several requests at their engine calls at once pays that cost once for all of them:

- The first caller to find no batch being gathered gathers the next one: it lets the worker's other
  requests run until each reaches its own engine call (`settle`: under gevent, until the worker's loop
  is idle), and, while `in_flight` batches are already out, waits at most `hold` seconds (and never past
  its own deadline) for one of them to come back. Then it sends every call waiting, and hands each
  caller its item's answer.
- Every other caller waits for its answer, within its own deadline.

With nothing else waiting a call goes at once, alone: the batch of one costs what a single call does.
A batch that fails (the engine unreachable after the channel's retries, its deadline) fails each of its
calls the same way. Nothing here knows what a call means: the answers and statuses are the engine's.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1.jsonargs import MAX_BATCH

__all__ = ["BatchFailed", "Batches"]


class BatchFailed(Exception):
    """The batch a call went in failed as a whole, with this status (its call fails the same way)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(eq=False)
class _Call:
    method: str
    request: pb.JsonCall
    deadline: float
    done: threading.Event = field(default_factory=threading.Event)
    answer: pb.JsonItemAnswer | None = None
    failed: BatchFailed | None = None


#: Sends one batch within `timeout` seconds and returns the engine's answers, or raises `grpc.RpcError`.
Send = Callable[[pb.JsonBatch, float], pb.JsonBatchAnswer]


def _nothing() -> None:
    pass


class Batches:
    """One worker's batches to one engine target (see the module's docstring); thread- and greenlet-safe."""

    def __init__(self, send: Send, settle: Callable[[], None] = _nothing, in_flight: int = 2,
                 hold: float = 0.005, most: int = MAX_BATCH, sizes: Callable[[int], None] = lambda n: None) -> None:
        self._send = send
        self._settle = settle
        self._in_flight_most = in_flight
        self._hold = hold
        self._most = most  # the engine's own bound on a batch, the contract's
        self._sizes = sizes
        self._changed = threading.Condition()
        self._waiting: list[_Call] = []
        self._gathering = False
        self._in_flight = 0

    def call(self, method: str, request: pb.JsonCall, timeout: float) -> pb.JsonItemAnswer:
        """`method`'s answer in a batch (its status, or `deferred`, in the item); `BatchFailed` when the batch
        failed; `TimeoutError` when no answer came within `timeout` seconds."""
        mine = _Call(method, request, time.monotonic() + timeout)
        with self._changed:
            self._waiting.append(mine)
            gather = not self._gathering
            self._gathering = True
        if gather:
            self._gather_and_send(mine.deadline)
        if not mine.done.wait(max(mine.deadline - time.monotonic(), 0.0)):
            raise TimeoutError(f"no answer from the engine within {timeout:.3g} s")
        if mine.failed is not None:
            raise mine.failed
        assert mine.answer is not None
        return mine.answer

    def waiting(self) -> int:
        """Calls waiting to go in a batch now (for tests)."""
        with self._changed:
            return len(self._waiting)

    def _gather_and_send(self, deadline: float) -> None:
        """Gather the calls waiting and send them: for a batch out to come back, wait at most `hold` seconds
        and never past the gathering caller's own `deadline`."""
        try:
            self._settle()
            with self._changed:
                until = min(time.monotonic() + self._hold, deadline)
                while self._in_flight >= self._in_flight_most and (left := until - time.monotonic()) > 0:
                    self._changed.wait(left)
                gathered, self._waiting, self._gathering = self._waiting, [], False
                self._in_flight += 1
        except BaseException:  # this caller stopped (its worker is stopping): the calls it gathered fail with it
            with self._changed:
                stranded, self._waiting, self._gathering = self._waiting, [], False
            _fail(stranded, BatchFailed(grpc.StatusCode.UNAVAILABLE, "the gateway stopped the call before it went"))
            raise
        try:  # more calls than a batch holds (a worker with that many requests at once): a batch after another
            for first in range(0, len(gathered), self._most):
                self._answer(gathered[first:first + self._most])
        except BaseException:
            _fail([c for c in gathered if not c.done.is_set()],
                  BatchFailed(grpc.StatusCode.UNAVAILABLE, "the gateway stopped the call before it was answered"))
            raise
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify_all()

    def _answer(self, batch: list[_Call]) -> None:
        self._sizes(len(batch))
        request = pb.JsonBatch(items=[pb.JsonBatchItem(method=c.method, call=c.request) for c in batch])
        timeout = max(c.deadline for c in batch) - time.monotonic()
        try:
            if timeout <= 0:
                raise BatchFailed(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            try:
                answers = self._send(request, timeout).answers
            except grpc.RpcError as err:
                raise BatchFailed(err.code(), err.details() or "") from None
            if len(answers) != len(batch):
                raise BatchFailed(grpc.StatusCode.INTERNAL,
                                  f"the engine answered {len(answers)} calls of a batch of {len(batch)}")
        except BatchFailed as failed:
            _fail(batch, failed)
            return
        for c, answer in zip(batch, answers, strict=True):
            c.answer = answer
            c.done.set()


def _fail(calls: list[_Call], failed: BatchFailed) -> None:
    for c in calls:
        c.failed = failed
        c.done.set()
