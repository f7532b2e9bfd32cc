"""A gateway worker's keepers: the work that nobody's call does (turn clocks that ran out, quick-play
tables whose wait is over, matches whose hand-off to the archive was not confirmed), each on a thread of
its own (a greenlet under gevent).

A keeper sleeps until the earliest deadline of its kind (`next_time`, one indexed read of the store),
and is woken early when any gateway writes a deadline (`store.DEADLINES`, through the worker's
`Watching`): with no clock running, no table waiting and nothing to hand over, it reads nothing. A
deadline still due after a pass (the engine down) is tried again `period` seconds later, not in a loop.
Where the worker has no wake-ups (the threaded development server), it looks every `period` seconds."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from api_gateway.store import DEADLINES, StoreUnavailable
from api_gateway.store.watching import Watching

log = logging.getLogger("api_gateway.hosting.keepers")

_DEADLINES = DEADLINES.hex()


@dataclass(eq=False)
class Keeper:
    """`job` whenever `next_time` (unix seconds, None: nothing due) has come, until `stop`; `period`: the
    pause before a deadline still due after a pass is tried again."""

    name: str
    job: Callable[[], object]
    next_time: Callable[[], float | None]
    watching: Watching
    period: float
    clock: Callable[[], float] = time.time
    _wake: threading.Event = field(default_factory=threading.Event, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _watched: bool = field(default=False, init=False)
    #: The earliest deadline the last look found (`_sleep`), and the one the last pass began with.
    _due: float | None = field(default=None, init=False)
    _passed: float | None = field(default=None, init=False)

    def poke(self, match_id: str) -> None:
        if match_id == _DEADLINES:
            self._wake.set()

    def poke_all(self) -> None:
        self._wake.set()

    def start(self) -> None:
        if self._thread is None:
            if self.watching.usable:
                self.watching.add(self)
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _sleep(self) -> float | None:
        """Seconds until the next pass (None: until woken); watches the deadlines first, so that a deadline
        written after the read below wakes it."""
        if not self.watching.usable:
            return self.period
        try:
            if not self._watched:
                self.watching.watch(_DEADLINES)
                self._watched = True
            due = self.next_time()
        except StoreUnavailable as exc:
            log.warning("%s: the store does not answer: %s", self.name, exc)
            return self.period
        self._due = due
        if due is None:
            return None
        ahead = due - self.clock()
        if ahead > 0:
            return ahead  # wake then, to the moment
        # due already: at once, unless it is the deadline the last pass found due and did not do (an engine
        # that does not answer): that one is tried again after `period`, not in a loop
        return self.period if due == self._passed else 0.0

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._wake.wait(self._sleep()):  # woken by a new deadline: read the earliest one again
                self._wake.clear()
                continue
            self._passed = self._due
            try:
                self.job()
            except StoreUnavailable as exc:  # the store is back soon: the work is still due then
                log.warning("%s: not done this pass: %s", self.name, exc)
            except Exception:  # a bug must not stop every later pass
                log.exception("%s: the pass failed", self.name)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
