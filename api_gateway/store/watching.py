"""A gateway worker's one reader of the live store's wake-ups (`store.Wakeups`), and what it wakes.

The worker's listeners (its streams' feeds, `api_gateway.streams.Streams`; its keepers,
`api_gateway.hosting.keepers.Keeper`) name what they follow (`watch`: a match, or `store.DEADLINES`);
one greenlet waits on the store and pokes the listeners of each match that advanced. Nothing is read
from the store while nothing happens. When wake-ups may have been lost (`store.RESYNC`: the store's
connection came back), every listener is poked.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

import gevent
from gevent import monkey

from api_gateway.store import RESYNC, StoreUnavailable, Wakeups

log = logging.getLogger("api_gateway.store.watching")


class Listener(Protocol):
    """What a wake-up reaches: a match (its id in hex) advanced, or perhaps every watched one did."""

    def poke(self, match_id: str) -> None: ...

    def poke_all(self) -> None: ...


class Watching:
    """This worker's wake-ups (the store's `Wakeups`, made on first use, after the fork) and the one
    greenlet that reads them. `usable`: the worker runs gevent (gunicorn's gevent workers); the threaded
    development server has no hub to run the reader in, and its streams and keepers poll instead."""

    def __init__(self, wakeups: Callable[[], Wakeups]) -> None:
        self._wakeups = wakeups
        self._listeners: list[Listener] = []
        self._reader: Any = None
        self.usable = monkey.is_module_patched("threading")

    def add(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def watch(self, match_id: str) -> None:
        """Wake the listeners of this match on its advances from now on (StoreUnavailable when the store
        is away)."""
        wakeups = self._wakeups()
        if self._reader is None:  # first: the reader confirms the subscription `watch` waits for (Redis)
            self._reader = gevent.spawn(self._read, wakeups)
        wakeups.watch(bytes.fromhex(match_id))

    def unwatch(self, match_id: str) -> None:
        try:
            self._wakeups().unwatch(bytes.fromhex(match_id))
        except StoreUnavailable:
            pass

    def _read(self, wakeups: Wakeups) -> None:
        while True:
            try:
                woken = wakeups.wait()
            except Exception:  # a bug: the streams still end by their keepalive and idle rules
                log.exception("store wake-ups")
                gevent.sleep(1.0)
                continue
            if not woken:
                return  # stopped
            for listener in self._listeners:
                if RESYNC in woken:
                    listener.poke_all()
                else:
                    for match_id in woken:
                        listener.poke(match_id)

    def stop(self) -> None:
        if self._reader is not None:
            self._wakeups().stop()
