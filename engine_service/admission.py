"""What one engine call may spend: its deadline, and the engine's bot workers, which it shares.

Two faults made this module (issue 29). An expert bot's decision costs up to
~0.3 s of CPU (more at the start of a 4-player Kingdomino game), a client may ask
for any number of them at once, and a replay can make the bot seats decide
hundreds of times. So:

- **Every call has a deadline**: the caller's gRPC deadline, cut to the engine's
  own cap (``--max-call-seconds``) when it set none or a later one, and sooner
  when the call is cancelled. A bot's search stops there (`bots.Deadline`,
  checked every iteration). A decision cut short is not reproducible, so it is
  never played or answered: the call ends DEADLINE_EXCEEDED (`PastDeadline`),
  and the engine is idle again within one iteration of the search.
- **Expert decisions run in worker processes** (`BotWorkers`, ``--bot-slots``
  of them, 1 by default), never on the threads that serve calls: in one process
  a thinking bot holds the GIL, and a trivial call waited for it (NewMatch p50
  1.5 -> 6.8 ms, p99 12 -> 50-120 ms; with the bot in another process, as idle:
  docs/reliability.md). Random and greedy decisions cost less than the trip.
- **A match played by a person goes first.** The bot seats of a match (their
  turns inside NewMatch, StartRound, Apply and Replay) take a worker, stopping a
  client's decision if none is idle, and while a call is in its bots' turns no
  client takes the worker it needs next. A client's expert `Suggest` or `Hints`
  takes a worker only when one is idle and promised to no match; otherwise (or
  when a seat stops it) it is refused, RESOURCE_EXHAUSTED "busy: ..." (the
  gateway asks again for a second, then answers 429 with Retry-After): a refusal
  costs the engine a parse, and no call waits behind a queue of them.

`AdmissionInterceptor` gives each call its `Call` (a context variable, one per
serving thread); `engine_service.calls` plays a match's bot seats through
`seat_turns` and answers a client through `for_client`. Outside a served call
(the rules used as a library, the tests that call the servicers) the bots run
in the calling thread and nothing is limited.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import select
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
from domino.v1.errors import busy_status

from engine_service import bots
from engine_service.bots import Budget, Deadline
from engine_service.status import Behavior, CallStopped, Handler, UnaryInterceptor

log = logging.getLogger("engine_service.admission")

View = dict[str, Any]
#: How often a thread waiting for a worker or a decision looks at its call's deadline.
_POLL_SECONDS = 0.05


class Busy(CallStopped):
    """Every bot worker is deciding (or promised to a match's bot seat): try again shortly."""

    def status(self) -> tuple[grpc.StatusCode, str]:
        return busy_status(str(self))


class PastDeadline(CallStopped):
    """The call's deadline passed (or it was cancelled) before its bots had decided."""

    def status(self) -> tuple[grpc.StatusCode, str]:
        return grpc.StatusCode.DEADLINE_EXCEEDED, str(self)


class WorkerLost(CallStopped):
    """The worker process deciding for the call died (killed, out of memory); another is started."""

    def status(self) -> tuple[grpc.StatusCode, str]:
        return grpc.StatusCode.UNAVAILABLE, str(self)  # clients retry it, on a fresh worker


class Deferred(Exception):
    """A call in a batch (`JsonEngine/Batch`) reached a decision that needs a bot worker: a batch answers
    once its last item is done, so it waits for none; the item comes back deferred, to be sent again as a
    call of its own. Raised before a worker is asked, so the call has changed nothing the engine keeps."""


#: In a worker: per worker slot, 1 when the decision there must stop now (a match's bot seat needs the worker).
_STOP: Any = None


class _SlotDeadline(Deadline):
    """In a worker: the call's deadline, or sooner when the engine asks the slot's decision to stop."""

    __slots__ = ("slot",)

    def __init__(self, at: float, slot: int) -> None:
        super().__init__(at)
        self.slot = slot

    def passed(self) -> bool:
        return bool(_STOP[self.slot]) or super().passed()


def _decide(what: str, view: View, level: str, budget: Budget | None, seed: int, until_at: float,
            slot: int) -> Any:
    """In a worker: one decision (`bots.suggest`) or the coach (`bots.hints`) by the deadline."""
    until = _SlotDeadline(until_at, slot)
    if what == "hints":
        return bots.hints(view, budget, seed, until)
    return bots.suggest(view, level, budget, seed, until)


#: A worker's niceness: the calls that need no bot get the CPU first when both want it.
WORKER_NICENESS = 10


def _start_worker(engine: int, stop: Any) -> None:
    """In a new worker: step back for the serving process, end with the engine (process `engine`),
    keep the slots' stop flags, and import the bots before the first decision needs them.

    A pool's workers outlive a parent that dies without closing the pool (SIGKILL, OOM): each
    holds its own queue's both ends, so it never reads an end of file. A thread here waits on
    the engine's pidfd (which, unlike a pid, is never another process's) and ends the worker
    with it; the forkserver then ends too, once no worker holds its pipe.
    """
    global _STOP
    _STOP = stop
    os.nice(WORKER_NICENESS)
    engine_fd = os.pidfd_open(engine)

    def end_with_the_engine() -> None:
        select.select([engine_fd], [], [])
        os._exit(0)

    threading.Thread(target=end_with_the_engine, name="engine-watch", daemon=True).start()
    from engine_service.bots import kingdomino, matching  # noqa: F401


class BotWorkers:
    """The engine's bot worker processes and who may use them: a match's bot seats first.

    Each worker is a slot; `_idle` are the slots deciding nothing. `_promised` counts the calls
    in their bots' turns that hold no slot right now (waiting for one, or between two
    decisions): a client takes a slot only when more are idle than promised. A bot seat that
    finds none idle asks one client's decision to stop (its slot's flag in `_stop`, which the
    worker's search reads every iteration): that client is answered busy, and the seat gets
    the worker within an iteration rather than after the client's whole decision.
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("at least one bot worker")
        self.workers = workers
        self._idle = list(range(workers))
        self._clients: set[int] = set()  # slots deciding for a client
        self._promised = 0
        self._changed = threading.Condition()
        # forkserver: a worker is forked from a clean process, never from this one and its gRPC threads.
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["engine_service.bots"])
        self._stop = self._context.RawArray("b", workers)
        self._pool_lock = threading.Lock()
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=self._context, initializer=_start_worker,
                                   initargs=(os.getpid(), self._stop))

    def close(self) -> None:
        with self._pool_lock:
            self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def free(self) -> int:
        """Workers deciding nothing now."""
        return len(self._idle)

    def pids(self) -> list[int]:
        """The worker processes' ids (those started so far)."""
        with self._pool_lock:
            processes = dict(getattr(self._pool, "_processes", None) or {})  # the pool lists them nowhere else
        return [p.pid for p in processes.values() if p.pid is not None]

    # ------------------------------------------------------------ who may use a worker

    def enter_turns(self) -> None:
        with self._changed:
            self._promised += 1

    def leave_turns(self) -> None:
        with self._changed:
            self._promised -= 1
            self._changed.notify_all()

    def _take(self, seat: bool, until: Deadline) -> int:
        with self._changed:
            if not seat:
                if len(self._idle) <= self._promised:
                    raise Busy(f"the engine's bot workers ({self.workers}) are deciding for other calls; "
                               "try again shortly")
                slot = self._idle.pop()
                self._clients.add(slot)
            else:
                preempted = False
                while not self._idle:
                    if until.passed():
                        raise PastDeadline("no bot worker came free before the call's deadline")
                    running = [c for c in self._clients if not self._stop[c]]
                    if not preempted and running:
                        self._stop[running[0]] = 1  # that client's decision gives way
                        preempted = True
                    self._changed.wait(min(until.remaining(), _POLL_SECONDS) or _POLL_SECONDS)
                slot = self._idle.pop()
                self._promised -= 1
            self._stop[slot] = 0
            return slot

    def _give_back(self, slot: int, seat: bool) -> None:
        with self._changed:
            self._idle.append(slot)
            self._clients.discard(slot)
            if seat:
                self._promised += 1
            self._changed.notify_all()

    # ------------------------------------------------------------ deciding

    def decide(self, seat: bool, what: str, view: View, level: str, budget: Budget | None, seed: int,
               until: Deadline) -> Any:
        """One decision in a worker: a match's bot `seat` waits for one (stopping a client's if need be),
        a client is refused `Busy` when none is free, or when a seat stops its decision."""
        slot = self._take(seat, until)
        try:
            with self._pool_lock:
                pool = self._pool
                future: Future[Any] = pool.submit(_decide, what, view, level, budget, seed, until.at, slot)
        except BaseException:
            self._give_back(slot, seat)
            raise
        try:
            while True:
                try:
                    result = future.result(timeout=min(until.remaining(), _POLL_SECONDS) or _POLL_SECONDS)
                    break
                except TimeoutError:
                    if until.passed():
                        raise PastDeadline("the call's deadline passed while its bots were deciding") from None
        except PastDeadline:
            # The worker stops at the deadline, within one iteration of its search: its slot is given back
            # then (a call that ended is promised nothing).
            future.add_done_callback(lambda _done: self._give_back(slot, False))
            if seat:
                with self._changed:
                    self._promised += 1  # leave_turns takes it back
            raise
        except BrokenProcessPool:
            self._replace(pool)
            self._give_back(slot, seat)
            raise WorkerLost("the bot worker process died; try again") from None
        except BaseException:
            self._give_back(slot, seat)
            raise
        stopped = bool(self._stop[slot])
        self._give_back(slot, seat)
        if stopped:  # cut short for a match's bot seat: not an answer
            raise Busy("a match's bot seat needed the engine's bot worker; try again shortly")
        _check(until)  # cut short by the deadline: not an answer either
        return result

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """A new pool instead of `broken` (once, however many of its calls failed)."""
        with self._pool_lock:
            if self._pool is broken:
                log.error("a bot worker process died: starting new ones")
                broken.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()


@dataclass(frozen=True, slots=True)
class Call:
    """The call being served on this thread: when it must stop, and the bot workers it shares."""

    until: Deadline
    workers: BotWorkers
    batched: bool = False  # an item of a batch: a decision that needs a worker defers it (`Deferred`)

    def worker(self) -> BotWorkers:
        """The bot workers, for a decision that needs one; `Deferred` in a batch."""
        if self.batched:
            raise Deferred("a bot worker's decision: send the call on its own")
        return self.workers


_CALL: ContextVar[Call | None] = ContextVar("engine_call", default=None)


@contextmanager
def batched() -> Iterator[None]:
    """Around one item of a batch: the batch's call (its deadline, its workers), whose decisions that need a
    bot worker raise `Deferred` instead of waiting for one."""
    call = _CALL.get()
    token = _CALL.set(None if call is None else Call(call.until, call.workers, batched=True))
    try:
        yield
    finally:
        _CALL.reset(token)


def _check(until: Deadline | None) -> None:
    if until is not None and until.passed():
        raise PastDeadline("the call's deadline passed while its bots were deciding")


class SeatTurns:
    """A match's bot seats playing their turns in one call (`seat_turns`)."""

    __slots__ = ("_call", "_entered")

    def __init__(self, call: Call | None) -> None:
        self._call = call
        self._entered = False

    def suggest(self, view: View, level: str, seed: int) -> str:
        """The action the bot of `level` plays from its seat's `view` (docs/bots.md)."""
        call = self._call
        if call is None:
            return bots.suggest(view, level, seed=seed)
        _check(call.until)
        if level != "expert":  # cheaper than the trip to a worker
            return bots.suggest(view, level, seed=seed)
        workers = call.worker()
        if not self._entered:
            workers.enter_turns()
            self._entered = True
        return _action(workers.decide(True, "suggest", view, level, None, seed, call.until))

    def leave(self) -> None:
        if self._entered and self._call is not None:
            self._entered = False
            self._call.workers.leave_turns()


@contextmanager
def seat_turns() -> Iterator[SeatTurns]:
    """Around a match's bot seats playing their turns, one after another: the worker they use is
    promised to them from their first decision to their last (a person's match does not wait
    behind clients' suggestions between its bots' turns)."""
    turns = SeatTurns(_CALL.get())
    try:
        yield turns
    finally:
        turns.leave()


class ForClient:
    """A client's suggestion or hints (`for_client`)."""

    __slots__ = ("_call",)

    def __init__(self, call: Call | None) -> None:
        self._call = call

    def suggest(self, view: View, level: str, budget: Budget | None, seed: int) -> str:
        call = self._call
        if call is None or level != "expert":  # random and greedy cost less than refusing them
            return bots.suggest(view, level, budget, seed, None if call is None else call.until)
        _check(call.until)
        return _action(call.worker().decide(False, "suggest", view, level, budget, seed, call.until))

    def hints(self, view: View, budget: Budget | None, seed: int) -> dict[str, Any]:
        call = self._call
        if call is None:
            return bots.hints(view, budget, seed)
        _check(call.until)
        answer = call.worker().decide(False, "hints", view, "expert", budget, seed, call.until)
        if not isinstance(answer, dict):
            raise TypeError(f"the coach answered {answer!r}, not an object")
        return answer


def _action(answer: Any) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"a bot answered {answer!r}, not an action")
    return answer


def for_client() -> ForClient:
    """The bots for a client's `Suggest` or `Hints`: a free worker now, or `Busy`."""
    return ForClient(_CALL.get())


class AdmissionInterceptor(UnaryInterceptor):
    """Gives every unary call of the engine's services its `Call`: its deadline (the caller's, at
    most `max_call_seconds`; sooner when cancelled) and the engine's `BotWorkers`."""

    def __init__(self, workers: BotWorkers, max_call_seconds: float, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self.workers = workers
        self.max_call_seconds = max_call_seconds
        self._prefixes = prefixes

    def applies_to(self, method: str) -> bool:
        return method.startswith(self._prefixes)

    def wrap(self, method: str, handler: Handler, behavior: Behavior) -> Handler:
        workers, cap = self.workers, self.max_call_seconds

        def admitted(request: Any, context: grpc.ServicerContext) -> Any:
            remaining = context.time_remaining()
            until = Deadline.after(cap if remaining is None else min(cap, remaining))
            context.add_callback(until.cancel)  # the call ended: cancelled, past its deadline, or answered
            token = _CALL.set(Call(until, workers))
            try:
                return behavior(request, context)
            finally:
                _CALL.reset(token)

        wrapped: Handler = grpc.unary_unary_rpc_method_handler(
            admitted, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)
        return wrapped
