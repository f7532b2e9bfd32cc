"""A vouched player's notification feed (issue 38 item 5, docs/notifications.md "The notification feed"):
what the gateway told of their seats, kept whether or not their host app has a webhook endpoint, listed
oldest first after a cursor by the player's assertion, against a real gateway with no GATEWAY_WEBHOOKS; the
feed's bounds on either store (SQLite, Redis).

Time: a person counts as away after 1 s without a call (GATEWAY_PRESENCE_SECONDS); every wait is for a
condition, bounded. The bound of 14 days is given `now` by the test."""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api_gateway.notify.outbox import FEED_DAYS, FeedCursorError, FeedItem, open_outbox

from .conftest import (
    PLAYER_KEYS,
    EngineProc,
    Gateway,
    gateway_env,
    launch_gateway,
    player_assertion,
    wait_for,
)
from .test_tables import call, ok, problem

Json = dict[str, Any]
_users = itertools.count()


@pytest.fixture(scope="module")
def feeding(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two workers on SQLite, the tests' host app k1 vouching for players, no webhook endpoint at all."""
    env = gateway_env(tmp_path_factory.mktemp("feed"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS, GATEWAY_PRESENCE_SECONDS="1")
    gw = launch_gateway(engine_proc.address, "--workers", "2", env=env)
    yield gw
    gw.stop()


def feed(gw: Gateway, assertion: str | None, query: str = "") -> Any:
    headers = {"Authorization": f"Bearer {assertion}"} if assertion else {}
    return gw.call("GET", "/v1/inbox/notifications" + query, headers=headers)


def everything(gw: Gateway, assertion: str, limit: int) -> list[Json]:
    """A player's whole feed, page by page of `limit`, each page asked after the last one's `next`."""
    items: list[Json] = []
    after = ""
    while True:
        page = ok(feed(gw, assertion, f"?limit={limit}" + (f"&after={after}" if after else "")))
        items += page["items"]
        if not page["more"]:
            assert page["next"] == (items[-1]["id"] if items else None)
            return items
        after = page["next"]


def test_a_players_feed_lists_what_their_seats_were_told_oldest_first(feeding: Gateway) -> None:
    gw = feeding
    anna, boris = (player_assertion(f"feed{next(_users)}") for _ in range(2))
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                               "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
    joined = [ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", {"invite": i["code"], "player": who}))
              for i, who in zip(opened["invites"], (anna, boris), strict=True)]
    table_id, match_id = opened["table_id"], joined[1]["match_id"]
    credentials = [j["credential"] for j in joined]
    mover = ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=opened["host_key"]))["turn"]
    waiting = 1 - mover
    wait_for(lambda: not ok(call(gw, "GET", f"/v1/tables/{table_id}", credential=opened["host_key"]))
             ["seats"][waiting]["here"])  # the seat not to move first has closed its app
    legal = ok(call(gw, "GET", f"/v1/matches/{match_id}/legal", credential=credentials[mover]))
    moved = ok(call(gw, "POST", f"/v1/matches/{match_id}/apply", {"action": legal["actions"][0]},
                    credential=credentials[mover]))
    ok(call(gw, "POST", f"/v1/matches/{match_id}/resign", credential=credentials[mover]))
    players = (anna, boris)

    def told(seat: int) -> list[Json]:
        return ok(feed(gw, players[seat]))["items"]
    wait_for(lambda: all(any(i["type"] == "match-over" for i in told(s)) for s in (0, 1)))
    for seat in (0, 1):
        items = told(seat)
        kinds = [i["type"] for i in items]
        expected = ["table-dealt", *(["invite-taken"] if seat == 0 else []), *(["your-turn"] if seat == waiting else []),
                    "resigned", "match-over"]
        assert sorted(kinds) == sorted(expected), kinds
        assert kinds.index("table-dealt") < kinds.index("resigned") < kinds.index("match-over")
        assert all(i["table_id"] == table_id and i["match_id"] == match_id and i["seat"] == seat for i in items)
        assert [i["created"] for i in items] == sorted(i["created"] for i in items)
        by_type = {i["type"]: i["data"] for i in items}
        assert by_type["resigned"] == {"by": mover} and by_type["match-over"]["result"]["losers"] == [mover]
        if seat == waiting:
            assert by_type["your-turn"] == {"seq": moved["seq"]}
        if seat == 0:
            assert by_type["invite-taken"] == {"taken": 1}
        # page by page after each cursor: the same items, once each
        assert everything(gw, players[seat], 1) == items and len({i["id"] for i in items}) == len(items)
        last = ok(feed(gw, players[seat], f"?after={items[-1]['id']}"))
        assert last == {"player_id": last["player_id"], "items": [], "next": items[-1]["id"], "more": False}
    assert ok(feed(gw, anna))["player_id"] == joined[0]["player_id"]


def test_a_feed_needs_the_players_assertion_and_a_cursor_it_gave(feeding: Gateway) -> None:
    problem(feed(feeding, None), 401, "player-required")
    problem(feed(feeding, "not-an-assertion"), 400, "invalid-player")
    forged = player_assertion("someone")[:-4] + "AAAA"
    problem(feed(feeding, forged), 400, "invalid-player")
    bad = feed(feeding, player_assertion("someone"), "?after=yesterday")
    problem(bad, 400, "malformed")
    assert bad.json["field"] == "after"
    problem(feed(feeding, player_assertion("someone"), "?limit=0"), 422, "validation-error")
    problem(feed(feeding, player_assertion("someone"), "?limit=501"), 422, "validation-error")
    fresh = ok(feed(feeding, player_assertion(f"feed{next(_users)}")))
    assert fresh["items"] == [] and fresh["next"] is None and not fresh["more"]


def test_a_feed_keeps_each_message_once_the_newest_and_the_last_days(store_url: str, tmp_path: Path) -> None:
    outbox = open_outbox(store_url)
    now, player = time.time(), f"app:feed{next(_users)}-{time.monotonic_ns()}"

    def item(n: int, created: float) -> FeedItem:
        return FeedItem(player, f"msg_{n}", created, {"type": "your-turn", "table_id": "t", "match_id": "m",
                                                      "seat": 0, "data": {"seq": n}})
    old = now - FEED_DAYS * 86400 - 60
    outbox.feed_add([item(0, old)], old)  # told more than 14 days ago
    outbox.feed_add([item(n, now) for n in range(1, 6)], now, kept=3)
    outbox.feed_add([item(5, now), item(4, now)], now, kept=3)  # told again: kept once
    found = outbox.feed(player, None, 10, now)
    assert [i["data"]["seq"] for _, i in found] == [3, 4, 5]  # the newest 3; the old one gone
    assert found[0][1] == {"type": "your-turn", "table_id": "t", "match_id": "m", "seat": 0, "data": {"seq": 3},
                           "created": now}
    assert [i["data"]["seq"] for _, i in outbox.feed(player, found[0][0], 1, now)] == [4]
    assert outbox.feed(player, found[-1][0], 10, now) == []
    assert outbox.feed("app:nobody", None, 10, now) == []
    with pytest.raises(FeedCursorError):
        outbox.feed(player, "x; DROP", 10, now)
    outbox.close()
