"""Presence (`api_gateway.hosting.presence`) without a gateway: what a seat's state is from the times kept, and
what a worker writes for its open streams and its calls (a store that records the writes, a clock the test sets)."""
from __future__ import annotations

from api_gateway.hosting.presence import Presence, seat_presence


class Recorder:
    """A store's `seen`, recorded."""

    def __init__(self) -> None:
        self.writes: list[dict[bytes, dict[int, float]]] = []

    def seen(self, marks: dict[bytes, dict[int, float]]) -> None:
        self.writes.append(marks)


def test_a_seat_is_here_until_its_time_then_away_since_it_and_a_seat_never_seen_since_the_deal() -> None:
    shown = seat_presence({0: 110.0, 1: 90.0}, [0, 1, 2], since=50.0, now=100.0)
    assert shown == {0: {"here": True, "away_since": None}, 1: {"here": False, "away_since": 90},
                     2: {"here": False, "away_since": 50}}


def test_a_worker_writes_a_call_once_a_period_and_renews_all_its_open_streams_in_one_write() -> None:
    store, now = Recorder(), [1000.0]
    presence = Presence(lambda: store, lambda: now[0], renew_every=10.0, here_for=25.0)
    a, b = b"a" * 16, b"b" * 16
    presence.called(a, 0)
    presence.called(a, 0)                       # the same seat within the period: no second write
    assert store.writes == [{a: {0: 1025.0}}]
    now[0] = 1011.0
    close_a1 = presence.streaming(a, 1)
    close_b2 = presence.streaming(b, 2)
    close_b2_again = presence.streaming(b, 2)   # a second stream of one seat
    assert store.writes[1:] == [{a: {1: 1036.0}}, {b: {2: 1036.0}}]
    now[0] = 1020.0
    assert presence.renew() == 2 and store.writes[-1] == {a: {1: 1045.0}, b: {2: 1045.0}}  # one write for all
    close_a1()
    close_b2()
    assert presence.renew() == 1                 # seat 2 has a stream still
    close_b2_again()
    written = len(store.writes)
    assert presence.renew() == 0 and len(store.writes) == written  # nothing open: nothing written
    presence.stop()
