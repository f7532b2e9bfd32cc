"""A hosted tournament's stream (docs/tournaments.md): Server-Sent Events of its view, one each time its
version changes (a join, the start, a round seated or recorded, the places archived), for a screen of
standings and "your table" that needs no polling of its own.

Each stream reads the tournament's row (one read by its key) every `poll` seconds and sends the view when the
version moved past the last one sent (`Last-Event-ID` resumes: nothing twice); `: keepalive` comments while
nothing changes; `event: end` once the tournament is over; `event: closed` {reason} when it stops before
(idle, max-duration, archive-unavailable, shutdown: `stop_all`, which the worker's exit should call as it calls
`api_gateway.streams.stop_all`). A worker serves `cap` of them at most (429 too-many-streams beyond).
The rounds' matches have their seats' own streams (docs/tables.md): this one says nothing of moves.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import orjson

from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.hosted import OVER, TournamentRow
from api_gateway.hosting import tournament_records as rules
from api_gateway.http.problems import StreamRefused
from api_gateway.streams import also_stop

#: Streams of tournaments a worker serves at once, at most.
CAP = 500
POLL = 1.0


@dataclass(eq=False)
class TournamentStreams:
    """The worker's tournament streams (one instance per app): the count under the cap."""

    #: Seconds without a change before a stream ends (`closed` idle), between two keepalives, and at most
    #: (`closed` max-duration): the spectator streams' settings (GATEWAY_SPECTATE_IDLE, _KEEPALIVE, _MAX).
    idle: float = 300.0
    keepalive: float = 5.0
    longest: float = 3600.0
    cap: int = CAP
    poll: float = POLL
    clock: Callable[[], float] = time.monotonic
    _open: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)

    def __post_init__(self) -> None:
        _ALL.add(self)

    def stop(self) -> None:
        """End every stream with `closed` {reason: shutdown} within a poll (the worker stops); refuse new ones."""
        self._stopping.set()

    def open(self, read: Callable[[], TournamentRow], last: int | None) -> Iterator[bytes]:
        """A stream of the tournament `read` answers, after version `last` (None: from its current view); 429
        too-many-streams over the worker's cap (asked now, before the answer starts)."""
        with self._lock:
            if self._stopping.is_set():
                raise StreamRefused("worker", "this gateway worker is stopping: connect again")
            if self._open >= self.cap:
                raise StreamRefused("worker", f"this gateway worker serves {self.cap} tournament streams already: "
                                              "try again later (or poll GET /v1/tournaments/hosted/{id})")
            self._open += 1
        return self._lines(read, last or 0)

    def _lines(self, read: Callable[[], TournamentRow], sent: int) -> Iterator[bytes]:
        try:
            started = quiet = changed = self.clock()
            while True:
                try:
                    row = read()
                except ArchiveUnavailable:
                    yield _event("closed", {"reason": "archive-unavailable"})
                    return
                news = row.version > sent
                if news:
                    sent = row.version
                    quiet = changed = self.clock()
                    yield _event("tournament", rules.view(row.state, row.version), sent)
                if row.state["status"] == OVER:
                    yield _event("end", {})
                    return
                now = self.clock()
                if now - started >= self.longest:
                    yield _event("closed", {"reason": "max-duration"})
                    return
                if now - changed >= self.idle:
                    yield _event("closed", {"reason": "idle"})
                    return
                if not news and now - quiet >= self.keepalive:
                    quiet = now
                    yield b": keepalive\n\n"
                if self._stopping.wait(self.poll):  # cooperative under the gateway's gevent worker
                    yield _event("closed", {"reason": "shutdown"})
                    return
        finally:
            with self._lock:
                self._open -= 1


_ALL: weakref.WeakSet[TournamentStreams] = weakref.WeakSet()


def stop_all() -> None:
    """End every tournament stream of this process with `closed` {reason: shutdown} (the worker's SIGTERM:
    `api_gateway.streams.stop_all` calls this)."""
    for streams in list(_ALL):
        streams.stop()


also_stop(stop_all)


def _event(kind: str, data: object, ident: int | None = None) -> bytes:
    head = f"event: {kind}\n" + (f"id: {ident}\n" if ident is not None else "")
    return head.encode() + b"data: " + orjson.dumps(data) + b"\n\n"
