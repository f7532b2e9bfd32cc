"""Whether each seat's person is here (issue 37: the claim of victory; issue 38: notifications to the away).

A seat is **here** while its person has an event stream open, or made a call with the seat's credential
lately; else it is **away**, since the time it stopped counting as here. The live store keeps, per
seat of a hosted match, until when it counts as here (`store.Presence`):

- an open stream counts `here_for` seconds on; its worker renews every open seat stream at once every
  `renew_every` seconds (one store round trip for all of them, whatever their number: idle costs a write
  per worker every few seconds, not one per stream);
- a call counts `here_for` seconds on; a worker writes it at most once per `renew_every` per seat.

So a person counts as away at most `here_for` seconds after closing the app. Nothing here decides what
away means for a match: `seat_presence` says each seat's state, the tables decide the claim.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from api_gateway.store import StoreUnavailable

log = logging.getLogger("api_gateway.hosting.presence")

Json = dict[str, Any]

#: Seconds between a worker's renewals of its open seat streams.
RENEW_EVERY = 10.0
#: Seconds a renewal or a call counts as here: more than two renewals, so one late renewal loses nobody.
HERE_FOR = 25.0


def seat_presence(until: dict[int, float], seats: list[int], since: float, now: float) -> dict[int, Json]:
    """Each of `seats`: ``{"here": bool, "away_since": unix seconds or None}``. A seat never seen has been
    away `since` (its match was dealt)."""
    shown: dict[int, Json] = {}
    for seat in seats:
        last = until.get(seat, since)
        here = last > now
        shown[seat] = {"here": here, "away_since": None if here else int(last)}
    return shown


class Presence:
    """One worker's part of the presence: its open seat streams, renewed together, and the calls it served."""

    def __init__(self, store: Callable[[], Any], clock: Callable[[], float] = time.time,
                 renew_every: float = RENEW_EVERY, here_for: float = HERE_FOR) -> None:
        self._store = store
        self._clock = clock
        self.renew_every = renew_every
        self.here_for = here_for
        self._open: Counter[tuple[bytes, int]] = Counter()
        self._called: dict[tuple[bytes, int], float] = {}
        self._lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._stopped = threading.Event()
        self._after_renew: list[Callable[[], None]] = []

    def after_renew(self, call: Callable[[], None]) -> None:
        """`call` after each renewal of the open seat streams (a seat stream's `presence` events)."""
        self._after_renew.append(call)

    def streaming(self, match_id: bytes, seat: int) -> Callable[[], None]:
        """A seat stream opened: the seat is here (now, and at each renewal while the stream is open).
        Answers what to call when the stream closes."""
        with self._lock:
            self._open[(match_id, seat)] += 1
        self.start()
        self.called(match_id, seat)  # here now (unless this worker wrote it a moment ago: the open's own call)

        def closed() -> None:
            with self._lock:
                self._open[(match_id, seat)] -= 1
                if self._open[(match_id, seat)] <= 0:
                    del self._open[(match_id, seat)]
        return closed

    def start(self) -> None:
        """The renewals run (from the first stream this worker holds on)."""
        with self._lock:
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(target=self._renew_open, name="presence", daemon=True)
                self._renewer.start()

    def called(self, match_id: bytes, seat: int) -> None:
        """A call with the seat's credential: here for `here_for` seconds (written at most once per
        `renew_every` by this worker)."""
        now = self._clock()
        key = (match_id, seat)
        if now - self._called.get(key, float("-inf")) < self.renew_every:
            return
        self._called[key] = now
        if len(self._called) > 10_000:  # forget the oldest half: a worker's memory stays bounded
            for old in sorted(self._called, key=self._called.__getitem__)[:5_000]:
                del self._called[old]
        self._write({match_id: {seat: now + self.here_for}})

    def renew(self) -> int:
        """Renew every seat stream open in this worker (one store round trip): the number of seats renewed."""
        with self._lock:
            seats = list(self._open)
        if not seats:
            return 0
        until = self._clock() + self.here_for
        marks: dict[bytes, dict[int, float]] = {}
        for match_id, seat in seats:
            marks.setdefault(match_id, {})[seat] = until
        self._write(marks)
        return len(seats)

    def stop(self) -> None:
        self._stopped.set()

    def _renew_open(self) -> None:
        while not self._stopped.wait(self.renew_every):
            for work in (self.renew, *self._after_renew):
                try:
                    work()
                except Exception:  # a bug here must not end the renewals of every later pass
                    log.exception("presence: %s failed", getattr(work, "__name__", "a renewal"))

    def here(self, match_id: bytes) -> list[int]:
        """The seats of a match here now (read from the store)."""
        now = self._clock()
        return sorted(seat for seat, until in self._store().presence(match_id).items() if until > now)

    def _write(self, marks: dict[bytes, dict[int, float]]) -> None:
        try:
            self._store().seen(marks)
        except StoreUnavailable as exc:  # presence is advisory: play goes on without it
            log.warning("presence not written: %s", exc)
