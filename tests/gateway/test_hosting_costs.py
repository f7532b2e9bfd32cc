"""What a move costs the live store (issue 36): a table move makes the round trips a sealed apply makes
(two: read, then advance), and opens its token once; nothing reads the store while nothing happens.

Counted in-process on both stores: every round trip of a backend goes through its `_run`, and every
token opening through `KeyRing.open`.
"""
from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from .conftest import EngineProc, Gateway, InProcess, gateway_env
from .test_tables import call, ok, open_table

pytestmark = pytest.mark.service

ONE_AND_A_BOT = [{"kind": "open"}, {"kind": "bot", "level": "random"}]


class Counted:
    """Counts the calls of one method of a class made on the test's thread while a test runs (`monkeypatch`):
    the calls a request makes (the in-process app serves it on this thread), not those of any background
    thread of this or an earlier app in the process (keepers, presence renewals, webhook senders)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> None:
        self.calls = 0
        original = getattr(owner, name)
        mine = threading.get_ident()

        def counting(this: Any, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == mine:
                self.calls += 1
            return original(this, *args, **kwargs)
        monkeypatch.setattr(owner, name, counting)

    def during(self, work: Any) -> tuple[int, Any]:
        before = self.calls
        result = work()
        return self.calls - before, result


def test_a_table_move_costs_the_store_trips_of_a_sealed_apply_and_opens_its_token_once(
        engine_proc: EngineProc, tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from api_gateway.app import create_app
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.store.redis import RedisStore
    from api_gateway.store.sqlite import SqliteStore
    from api_gateway.tokens import KeyRing

    monkeypatch.setattr(Keeper, "start", lambda self: None)  # only the calls below touch the store
    app = create_app(from_env({**gateway_env(tmp_path, store_url), "GATEWAY_ENGINE": engine_proc.address}))
    gw = cast(Gateway, InProcess(app))
    trips = Counted(monkeypatch, SqliteStore if store_url.startswith("sqlite") else RedisStore, "_run")
    openings = Counted(monkeypatch, KeyRing, "open")

    # A table's move by the seat's credential: the match and its table read at once, then the advance.
    table = open_table(gw, ONE_AND_A_BOT, variant="block", players=2)
    legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=table.credentials[0]))
    assert legal["actions"], legal  # the person moves first or after the bot's move (made with the deal)
    moved = trips.during(lambda: openings.during(lambda: call(
        gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
        credential=table.credentials[0])))
    store_trips, (opened, reply) = moved
    assert reply.status == 200, reply.body[:300]
    assert (store_trips, opened) == (2, 1)

    # A plain sealed apply: the version checked, then the advance.
    game = ok(call(gw, "POST", "/v1/matches", {"variant": "block", "players": 2, "mode": "sealed"}), 201)
    seat, first = next((seat, found) for seat, key in enumerate(game["seat_keys"])
                       if (found := ok(call(gw, "POST", "/v1/matches/legal",
                                            {"token": game["token"], "seat_key": key})))["actions"])
    store_trips, (opened, reply) = trips.during(lambda: openings.during(lambda: call(
        gw, "POST", "/v1/matches/apply", {"token": game["token"], "seat_key": game["seat_keys"][seat],
                                          "action": first["actions"][0]})))
    assert reply.status == 200, reply.body[:300]
    assert (store_trips, opened) == (2, 1)


def test_a_move_at_a_table_of_guests_costs_the_notifier_nothing(
        engine_proc: EngineProc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The notifier learns of a move with the table's record its request read, so a move at a table of guests
    on a gateway without Web Push queues nothing (no read of the table on the sender's thread, no wake-up);
    with Web Push on, any seat may have subscribed and the move is queued."""
    from api_gateway.app import create_app
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.notify.notifier import Notifier

    from .test_webpush import SUBJECT, VAPID_KEY

    monkeypatch.setattr(Keeper, "start", lambda self: None)
    queued = Counted(monkeypatch, Notifier, "_queue")
    for push, told in (({}, 0), ({"GATEWAY_VAPID_KEY": VAPID_KEY, "GATEWAY_VAPID_SUBJECT": SUBJECT}, 1)):
        (tmp_path / str(told)).mkdir()
        env = gateway_env(tmp_path / str(told), **push)
        gw = cast(Gateway, InProcess(create_app(from_env({**env, "GATEWAY_ENGINE": engine_proc.address}))))
        table = open_table(gw, ONE_AND_A_BOT, variant="block", players=2)
        seat = table.credentials[0]
        legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=seat))
        move = functools.partial(call, gw, "POST", f"/v1/matches/{table.match_id}/apply",
                                 {"action": legal["actions"][0]}, credential=seat)
        moved, reply = queued.during(move)
        assert reply.status == 200, reply.body[:300]
        assert moved == told, push
