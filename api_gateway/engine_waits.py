"""Where a gevent worker's gRPC calls wait for their completion: native threads that wake the hub cheaply.

Under gevent, grpcio (`grpc.experimental.gevent.init_gevent`) hands each blocking wait on a completion
queue (`completion_queue_next`, the GIL released) to `hub.threadpool.apply`, so the greenlet that made
the call waits and the hub serves the others. gevent's own pool does that in Python for every task: a
result object with its own async watcher, and a queue guarded by a Python condition (its `notify_one`
alone was 9% of a loaded gateway worker's busy time: docs/performance.md, "Session 53"; this pool's
figures in "Session 54").

`CompletionWaits` does the same job with a C queue (`_queue.SimpleQueue`) that the threads block on, one
async watcher for every result and gevent's `Waiter`: what grpcio asks of a pool (`apply`) and nothing
else. `install` gives it to grpcio alone; everything else gevent runs in threads (name resolution) keeps
gevent's pool. At most `size` waits run at once, as in gevent's pool (10); more queue for a thread.
"""
from __future__ import annotations

import _queue
import collections
from collections.abc import Callable
from typing import Any

import gevent
from gevent.hub import Waiter

from api_gateway.os_threads import os_thread_ident, start_os_thread

#: As many waits at once as gevent's own pool allows (`Hub.threadpool_size`).
SIZE = 10

_Task = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], Waiter]
_Outcome = tuple[bool, Any]


class CompletionWaits:
    """Runs `apply(fn, args)` on a native thread while the calling greenlet waits; made on the hub's thread."""

    def __init__(self, size: int = SIZE) -> None:
        self._hub = gevent.get_hub()
        self._hub_thread = os_thread_ident()
        self._size = size
        self._threads = 0
        self._busy = 0  # tasks given and not yet delivered; counted on the hub's thread only
        self._tasks: _queue.SimpleQueue[_Task] = _queue.SimpleQueue()
        self._done: collections.deque[tuple[Waiter, _Outcome]] = collections.deque()
        self._wake = self._hub.loop.async_()
        self._wake.start(self._deliver)

    def apply(self, fn: Callable[..., Any], args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        """`fn(*args, **kwargs)` on one of the threads; its result, or its exception raised here."""
        if os_thread_ident() != self._hub_thread or gevent.getcurrent() is self._hub:
            return fn(*args, **(kwargs or {}))  # nothing to hand over from: the hub itself, or a native thread
        waiter = Waiter()
        self._busy += 1
        if self._busy > self._threads and self._threads < self._size:
            self._threads += 1
            start_os_thread(self._run, ())
        self._tasks.put((fn, args, kwargs or {}, waiter))
        ok, value = waiter.get()
        if ok:
            return value
        raise value

    @property
    def threads(self) -> int:
        """How many native threads it has started (they stay, blocked on the queue when idle)."""
        return self._threads

    def _run(self) -> None:
        """A thread: take a task, run it, leave its outcome for the hub and wake it; ends with the hub's loop."""
        tasks, done, wake = self._tasks, self._done, self._wake
        while True:
            fn, args, kwargs, waiter = tasks.get()
            outcome: _Outcome
            try:
                outcome = (True, fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - raised again in the waiting greenlet
                outcome = (False, exc)
            done.append((waiter, outcome))
            del fn, args, kwargs, waiter, outcome
            try:
                wake.send()
            except ValueError:  # the hub's loop is gone (the worker is exiting): nobody waits any more
                return

    def _deliver(self) -> None:
        """On the hub: hand every outcome left to its greenlet (a greenlet gone meanwhile leaves it in its Waiter)."""
        done = self._done
        while done:
            waiter, outcome = done.popleft()
            self._busy -= 1
            waiter.switch(outcome)


def install() -> CompletionWaits:
    """grpcio's gevent mode with its waits on `CompletionWaits`: grpcio takes the hub's pool once, when
    `init_gevent` runs, and the hub gets its own pool back at once."""
    from grpc.experimental import gevent as grpc_gevent

    hub = gevent.get_hub()
    own = hub.threadpool
    waits = CompletionWaits()
    hub.threadpool = waits
    try:
        grpc_gevent.init_gevent()
    finally:
        hub.threadpool = own
    return waits
