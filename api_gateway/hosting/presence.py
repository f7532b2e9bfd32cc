"""Whether each seat's person is here (issue 37: the claim of victory; issue 38: notifications to the away).

A seat is **here** while its person has an event stream open, or made a call with the seat's credential
lately; else it is **away**, since the time it stopped counting as here. The live store keeps it
(`store.Presence`), and idle costs one write per worker per period, whatever the number of its streams:

- the worker **beats** every `renew_every` seconds: it is alive until `here_for` seconds on;
- a seat stream's open writes a **mark** of the worker (the seat is here while the worker beats); its close
  takes the mark away, and the seat counts as here `here_for` seconds more (a reconnect in between is not an
  absence, and a closed app counts as away `here_for` seconds after, as it did when streams were renewed one
  by one); a worker that stops beating (killed) has its marks count until its last beat's `here_for`;
- a call counts `here_for` seconds on; a worker writes it at most once per `renew_every` per seat.

After each beat the worker tells its streams who is here (`here_changed`): it reads the presence of the
matches it streams in one round trip, and only when the store's presence stamp moved since its last read,
a time it read has passed, or a match is new to it: while nothing happens it reads nothing.

Nothing here decides what away means for a match: `seat_presence` says each seat's state, the tables decide
the claim.
"""
from __future__ import annotations

import logging
import math
import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from api_gateway.store import StoreUnavailable

log = logging.getLogger("api_gateway.hosting.presence")

Json = dict[str, Any]

#: Seconds between two beats of a worker.
RENEW_EVERY = 10.0
#: Seconds a beat, a call or a stream's close counts as here: more than two beats, so one late beat loses nobody.
HERE_FOR = 25.0

Seat = tuple[bytes, int]


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
    """One worker's part of the presence: its beat, the marks of its open seat streams, the calls it served,
    and what its streams were last told (`here_changed`)."""

    def __init__(self, store: Callable[[], Any], clock: Callable[[], float] = time.time,
                 renew_every: float = RENEW_EVERY, here_for: float = HERE_FOR) -> None:
        self._store = store
        self._clock = clock
        self.renew_every = renew_every
        self.here_for = here_for
        self._open: Counter[Seat] = Counter()
        #: Closes not written yet (the store was away): written with the next beat.
        self._closing: dict[Seat, float] = {}
        #: Every open mark is to be written again with the next beat (a mark's write failed).
        self._remark = False
        self._called: dict[Seat, float] = {}
        self._lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._stopped = threading.Event()
        self._after_renew: list[Callable[[], None]] = []
        self._worker = ""
        self._pid = 0
        #: The store's presence stamp at the last beat, and at the last read of the streamed matches' presence.
        self._stamp: int | None = None
        self._read_stamp: int | None = None
        #: Each match read: the earliest time it read that passes after the read (inf: none), when to read it again.
        self._lapse: dict[str, float] = {}

    @property
    def worker(self) -> str:
        """This process's name in the store's beats (a new one in a forked child)."""
        if self._pid != os.getpid():
            self._worker, self._pid = f"{os.getpid()}-{secrets.token_hex(6)}", os.getpid()
            self._stamp = None
        return self._worker

    def after_renew(self, call: Callable[[], None]) -> None:
        """`call` after each beat (a seat stream's `presence` events)."""
        self._after_renew.append(call)

    def streaming(self, match_id: bytes, seat: int) -> Callable[[], None]:
        """A seat stream opened: the seat is here while it is open (the worker's mark). Answers what to call
        when the stream closes."""
        key = (match_id, seat)
        with self._lock:
            self._open[key] += 1
            first = self._open[key] == 1
            self._closing.pop(key, None)
        if self._stamp is None:
            self.beat()  # the worker beats before its first mark counts
        self.start()
        if first:
            self._mark([key], [])

        def closed() -> None:
            with self._lock:
                self._open[key] -= 1
                last = self._open[key] <= 0
                if last:
                    del self._open[key]
            if last:
                self._mark([], [(match_id, seat, self._clock() + self.here_for)])
        return closed

    def _mark(self, opened: list[Seat], closed: list[tuple[bytes, int, float]]) -> None:
        try:
            self._store().mark(self.worker, opened, closed)
        except StoreUnavailable as exc:  # presence is advisory: play goes on, the next beat writes it
            log.warning("presence not written: %s", exc)
            with self._lock:
                self._remark = self._remark or bool(opened)
                for match_id, seat, until in closed:
                    if (match_id, seat) not in self._open:
                        self._closing[(match_id, seat)] = until

    def start(self) -> None:
        """The beats run (from the first stream this worker holds on)."""
        with self._lock:
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(target=self._beat_on, name="presence", daemon=True)
                self._renewer.start()

    def called(self, match_id: bytes, seat: int) -> None:
        """A call with the seat's credential: here for `here_for` seconds (written at most once per
        `renew_every` by this worker; not at all while this worker holds the seat's stream: its mark says more,
        and its close counts `here_for` from a later time)."""
        now = self._clock()
        key = (match_id, seat)
        if key in self._open or now - self._called.get(key, float("-inf")) < self.renew_every:
            return
        self._called[key] = now
        if len(self._called) > 10_000:  # forget the oldest half: a worker's memory stays bounded
            for old in sorted(self._called, key=self._called.__getitem__)[:5_000]:
                del self._called[old]
        try:
            self._store().seen({match_id: {seat: now + self.here_for}})
        except StoreUnavailable as exc:  # presence is advisory: play goes on without it
            log.warning("presence not written: %s", exc)

    def beat(self) -> int:
        """The worker's beat (one store round trip), with the marks and closes the store is owed (its data lost,
        or a write that failed): the number of marks written again."""
        worker = self.worker
        try:
            stamp, known = self._store().beat(worker, self._clock() + self.here_for)
        except StoreUnavailable as exc:
            log.warning("presence: no beat: %s", exc)
            return 0
        with self._lock:
            remark = self._remark or not known
            opened = list(self._open) if remark else []
            closing = [(m, s, t) for (m, s), t in self._closing.items()]
            self._remark = False
            self._closing.clear()
        self._stamp = stamp
        if opened or closing:
            self._mark(opened, closing)
        return len(opened)

    def stop(self) -> None:
        self._stopped.set()

    def _beat_on(self) -> None:
        while not self._stopped.wait(self.renew_every):
            for work in (self.beat, *self._after_renew):
                try:
                    work()
                except Exception:  # a bug here must not end the beats of every later pass
                    log.exception("presence: %s failed", getattr(work, "__name__", "a beat"))

    #: Matches read per store round trip by `here_changed` (the worker's other greenlets run between two).
    READ_AT_ONCE = 500

    def here_changed(self, matches: set[str]) -> dict[str, list[int]]:
        """The seats here now of those of `matches` (hex ids) whose presence may have changed since this worker
        last read it: when the store's stamp moved (at the last beat), the ones the store says changed; and
        each match new here, or a time of whose passed. No store round trip when nothing can have changed;
        else one for the changes and one per `READ_AT_ONCE` matches read."""
        for gone in set(self._lapse) - matches:
            del self._lapse[gone]
        stamp = self._stamp
        due = {m for m in matches if self._lapse.get(m, -math.inf) <= self._clock()}
        if stamp is None or self._read_stamp is None:
            due = set(matches)
        elif stamp != self._read_stamp:
            stamp, changed = self._store().changed_since(self._read_stamp)
            due |= set(matches) if changed is None else matches & {m.hex() for m in changed}
        self._read_stamp = stamp
        shown: dict[str, list[int]] = {}
        order = sorted(due)
        for i in range(0, len(order), self.READ_AT_ONCE):
            if i:
                time.sleep(0)  # a greenlet's turn: the worker's calls are not held behind a long read
            part = order[i:i + self.READ_AT_ONCE]
            found = self._store().presences([bytes.fromhex(m) for m in part])
            now = self._clock()
            for match in part:
                until = found.get(bytes.fromhex(match), {})
                shown[match] = sorted(seat for seat, t in until.items() if t > now)
                self._lapse[match] = min((t for t in until.values() if t > now), default=math.inf)
        return shown
