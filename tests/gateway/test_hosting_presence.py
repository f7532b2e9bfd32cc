"""Presence (`api_gateway.hosting.presence`) without a gateway: what a seat's state is from the times kept, what
a worker writes for its beat, its open streams and its calls, and when it reads the presence of the matches it
streams (a store that records the calls and keeps a stamp, a clock the test sets)."""
from __future__ import annotations

import math

from api_gateway.hosting.presence import Presence, seat_presence
from api_gateway.store import StoreUnavailable


class Recorder:
    """A store's presence, recorded: each call in `calls`; a stamp moved by every change; `known` (False: the
    store forgot the worker); `down` (True: every call is refused)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.stamp = 0
        self.known = True
        self.down = False
        self.shown: dict[bytes, dict[int, float]] = {}
        #: What `changed_since` answers (None: the store no longer knows).
        self.changed: list[bytes] | None = []

    def _call(self, name: str, what: object) -> None:
        if self.down:
            raise StoreUnavailable("down")
        self.calls.append((name, what))

    def beat(self, worker: str, until: float) -> tuple[int, bool]:
        self._call("beat", until)
        known, self.known = self.known, True
        return self.stamp, known

    def mark(self, worker: str, opened: list[tuple[bytes, int]], closed: list[tuple[bytes, int, float]]) -> None:
        self._call("mark", (opened, closed))
        self.stamp += 1

    def seen(self, marks: dict[bytes, dict[int, float]]) -> None:
        self._call("seen", marks)
        self.stamp += 1

    def changed_since(self, stamp: int) -> tuple[int, list[bytes] | None]:
        self._call("changed_since", stamp)
        return self.stamp, self.changed

    def presences(self, match_ids: list[bytes]) -> dict[bytes, dict[int, float]]:
        self._call("presences", sorted(match_ids))
        return {m: self.shown[m] for m in match_ids if m in self.shown}


A, B = b"a" * 16, b"b" * 16


def test_a_seat_is_here_until_its_time_then_away_since_it_and_a_seat_never_seen_since_the_deal() -> None:
    shown = seat_presence({0: 110.0, 1: 90.0, 3: math.inf}, [0, 1, 2, 3], since=50.0, now=100.0)
    assert shown == {0: {"here": True, "away_since": None}, 1: {"here": False, "away_since": 90},
                     2: {"here": False, "away_since": 50}, 3: {"here": True, "away_since": None}}


def test_a_worker_beats_once_whatever_its_streams_and_marks_a_seat_at_its_first_open_and_last_close() -> None:
    store, now = Recorder(), [1000.0]
    presence = Presence(lambda: store, lambda: now[0], renew_every=10.0, here_for=25.0)
    presence.called(A, 0)
    presence.called(A, 0)                       # the same seat within the period: no second write
    assert store.calls == [("seen", {A: {0: 1025.0}})]
    now[0] = 1011.0
    close_a1 = presence.streaming(A, 1)         # the first stream: the worker beats, then marks it
    close_b2 = presence.streaming(B, 2)
    close_b2_again = presence.streaming(B, 2)   # a second stream of one seat: no second mark
    assert store.calls[1:] == [("beat", 1036.0), ("mark", ([(A, 1)], [])), ("mark", ([(B, 2)], []))]
    presence.called(B, 2)                       # a call of a seat whose stream this worker holds: nothing to write
    assert len(store.calls) == 4
    for seat in range(500):                     # however many streams are open, a beat is one write
        presence.streaming(A, 100 + seat)
    del store.calls[:]
    now[0] = 1020.0
    assert presence.beat() == 0 and store.calls == [("beat", 1045.0)]
    close_a1()                                  # its last stream: the mark goes, here 25 s more
    close_b2()
    assert store.calls[1:] == [("mark", ([], [(A, 1, 1045.0)]))]
    close_b2_again()
    assert store.calls[-1] == ("mark", ([], [(B, 2, 1045.0)]))
    presence.stop()


def test_what_the_store_missed_is_written_with_the_next_beat() -> None:
    store, now = Recorder(), [1000.0]
    presence = Presence(lambda: store, lambda: now[0], renew_every=10.0, here_for=25.0)
    close = presence.streaming(A, 0)
    presence.streaming(B, 1)
    store.down = True
    presence.streaming(A, 2)                    # refused: presence is advisory, the stream opens anyway
    close()
    store.down = False
    del store.calls[:]
    assert presence.beat() == 2                 # every open mark again, and the close it owes
    assert store.calls[1] == ("mark", ([(B, 1), (A, 2)], [(A, 0, 1025.0)]))
    store.known = False                         # the store forgot this worker (settled, or its data lost)
    del store.calls[:]
    assert presence.beat() == 2 and store.calls[1] == ("mark", ([(B, 1), (A, 2)], []))
    assert presence.beat() == 0 and len(store.calls) == 3
    presence.stop()


def test_the_streamed_matches_are_read_together_and_only_when_their_presence_may_have_changed() -> None:
    store, now = Recorder(), [1000.0]
    presence = Presence(lambda: store, lambda: now[0], renew_every=10.0, here_for=25.0)
    store.shown = {A: {0: math.inf, 1: 1030.0}, B: {2: 990.0}}
    presence.beat()
    assert presence.here_changed({A.hex(), B.hex()}) == {A.hex(): [0, 1], B.hex(): []}
    assert store.calls[-1] == ("presences", [A, B])                 # one read for every match
    reads = len(store.calls)
    presence.beat()
    assert presence.here_changed({A.hex(), B.hex()}) == {}          # nothing changed: nothing read
    assert len(store.calls) == reads + 1                             # (the beat)
    presence.streaming(B, 3)                                         # a change: the stamp moves
    store.changed = [B, b"z" * 16]                                   # (and a match not streamed here)
    presence.beat()
    store.shown[B] = {2: 990.0, 3: math.inf}
    assert presence.here_changed({A.hex(), B.hex()}) == {B.hex(): [3]}
    assert store.calls[-2:] == [("changed_since", 0), ("presences", [B])]  # the changed one alone
    now[0] = 1031.0                                                  # seat 1's time passed: A is read again
    presence.beat()
    assert presence.here_changed({A.hex(), B.hex()}) == {A.hex(): [0]}
    assert store.calls[-1] == ("presences", [A])
    assert presence.here_changed({A.hex(), B.hex(), (b"c" * 16).hex()}) == {(b"c" * 16).hex(): []}  # a new one
    store.stamp += 1
    store.changed = None                                             # the store forgot that far back: all read
    presence.beat()
    assert presence.here_changed({A.hex(), B.hex()}) == {A.hex(): [0], B.hex(): [3]}
    presence.stop()


def test_many_matches_are_read_in_parts() -> None:
    store = Recorder()
    presence = Presence(lambda: store, lambda: 1000.0)
    presence.beat()
    matches = {i.to_bytes(16, "big").hex() for i in range(presence.READ_AT_ONCE * 2 + 1)}
    assert len(presence.here_changed(matches)) == len(matches)
    assert [len(ids) for name, ids in store.calls if name == "presences"] == [  # type: ignore[arg-type]
        presence.READ_AT_ONCE, presence.READ_AT_ONCE, 1]
    presence.stop()
