"""Seat streams of online tables: `GET /v1/matches/{id}/events`, Server-Sent Events (docs/tables.md).

The machinery is the spectator stream's (`api_gateway.streams`): one feed per watched (match,
viewer) per worker shared by its streams, read when the match advances (the store's wake-ups), caps per worker, per seat and per client address
(429 too-many-streams), a closed client noticed at once by its socket, a keepalive comment while
idle, every stream ended with an ``event: closed`` at the worker's SIGTERM (`streams.stop_all`). What
differs is the format (`SSE`) and what a stream reads: one viewer's lines of a hosted match, line i
being version i (`store.lines`), so that an event's id is its version and a client that comes back
with ``Last-Event-ID: n`` is sent the lines after n, none missed and none twice.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from api_gateway.hosting.presence import Presence
from api_gateway.http.problems import UnknownMatch
from api_gateway.store import MatchExpired, StoreUnavailable
from api_gateway.store.watching import Watching
from api_gateway.streams import Counts, Format, Limits, Stream, Streams

KEEPALIVE = b": keepalive\n\n"
END = b"event: end\ndata: {}\n\n"


def event(name: bytes, seq: int | None, data: bytes) -> bytes:
    """One Server-Sent Event (`data` is one line of JSON)."""
    head = b"" if seq is None else b"id: %d\n" % seq
    return head + b"event: " + name + b"\ndata: " + data + b"\n\n"


def closed(reason: str) -> bytes:
    return event(b"closed", None, orjson.dumps({"reason": reason}))


def updates(lines: list[bytes], first: int) -> bytes:
    """A viewer's lines from version `first` on, each an `update` event with its version as id."""
    return b"".join(event(b"update", first + i, line) for i, line in enumerate(lines))


SSE = Format(updates, KEEPALIVE, closed, END)


def _key(match_id: str, viewer: int) -> str:
    return f"{match_id}:{viewer}"


class SeatStreams:
    """A worker's seat streams: one `Streams` for the seats (capped per seat) and one for the public view
    of host and spectators (capped per match), both writing SSE; counted in all and per address with
    the worker's spectator streams (`counts`)."""

    def __init__(self, store: Callable[[], Any], limits: Limits, per_seat: int, watching: Watching,
                 counts: Counts | None = None, presence: Presence | None = None) -> None:
        self._store = store
        self._presence = presence
        counts = counts if counts is not None else Counts()
        self.seats = Streams(self._lines, Limits(limits.idle, limits.longest, limits.keepalive, limits.streams,
                                                 per_seat, limits.per_address), watching, fmt=SSE, what="seat",
                             counts=counts, trim=True)
        self.public = Streams(self._lines, limits, watching, fmt=SSE, what="match", counts=counts, trim=True)
        #: The seats here of each match streamed in this worker, as last announced (`announce_presence`).
        self._here: dict[str, list[int]] = {}
        if presence is not None:
            presence.after_renew(self.announce_presence)

    def announce_presence(self) -> None:
        """After each presence beat: the seats here of the matches this worker streams, read in one round trip
        and only where they may have changed (`Presence.here_changed`: none while nothing happens); where they
        changed since last told, a `presence` event (no id: not a version) to each of the match's streams,
        seats' and public."""
        if self._presence is None:
            return
        matches = self.seats.watched() | self.public.watched()
        for gone in set(self._here) - matches:
            del self._here[gone]
        try:
            fresh = self._presence.here_changed(matches)
        except StoreUnavailable:
            return  # presence is advisory: the next beat tries again
        for match, here in fresh.items():
            if self._here.get(match) != here:
                self._here[match] = here
                line = event(b"presence", None, orjson.dumps({"here": here}))
                self.seats.note(match, line)
                self.public.note(match, line)

    def _lines(self, key: str, start: int) -> tuple[list[bytes], bool]:
        match_id, _, viewer = key.rpartition(":")
        try:
            found: tuple[list[bytes], bool] = self._store().lines(bytes.fromhex(match_id), int(viewer), start)
        except MatchExpired:
            raise UnknownMatch(match_id) from None
        return found

    def open(self, match_id: str, seat: int | None, viewer: int, last_event_id: int | None, address: str,
             sock: Any, chunked: bool | None = None) -> Stream:
        """A stream of `viewer`'s lines (a seat's, or the public's for the host and spectators, `seat` None);
        `chunked`: the body's framing on this connection (`streams.body_framing`)."""

        key = _key(match_id, viewer)

        def intro(lines: list[bytes], over: bool) -> bytes:
            if last_event_id is not None and 0 <= last_event_id < len(lines):
                missed = lines[last_event_id + 1:]
                if not all(missed):  # dropped from this worker's feed (`Streams.trim`): read from the store
                    missed = self._lines(key, last_event_id + 1)[0][:len(missed)]
                head = updates(missed, last_event_id + 1)
            else:  # no Last-Event-ID (or one this match never had): the viewer's whole view first
                latest = orjson.loads(lines[-1]) if lines else {}
                head = event(b"view", len(lines) - 1, orjson.dumps({
                    "match_id": match_id, "seat": seat, "seq": len(lines) - 1, "view": latest.get("view"),
                    "scores": latest.get("scores"), "turn": latest.get("turn"), "clocks": latest.get("clocks"),
                    "over": over}))
            return head + (END if over else b"")

        streams = self.seats if seat is not None else self.public
        stream = streams.open(key, address, sock, intro, chunked)
        if self._presence is not None:
            if seat is not None:  # an open seat stream: its person is here
                stream.on_close(self._presence.streaming(bytes.fromhex(match_id), seat))
            else:  # the host's and spectators' stream is told who is here too
                self._presence.start()
        return stream
