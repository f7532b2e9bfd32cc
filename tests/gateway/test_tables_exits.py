"""The exits of an online table's match (issue 37): resign, abort, claim victory, leaving a rated match, and
private tables that show nothing to whoever holds a spent invite; against real gateways (one on SQLite, two
on one Redis where races matter), their streams and their archive."""
from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    PLAYER_KEYS,
    EngineProc,
    Gateway,
    Reply,
    gateway_env,
    gateways_on_one_redis,
    launch_gateway,
    player_assertion,
    wait_for,
)
from .test_tables import Table, call, ok, open_table, seat_stream

Json = dict[str, Any]
TWO_PEOPLE = [{"kind": "open"}, {"kind": "open"}]
_users = itertools.count()


@pytest.fixture(scope="module")
def keyed(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two workers on one SQLite file, checking the player assertions of one host app (key k1)."""
    gw = launch_gateway(engine_proc.address, "--workers", "2", env=gateway_env(
        tmp_path_factory.mktemp("exits"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


def open_vouched(gw: Gateway, seats: list[Json] | None = None, guests: tuple[int, ...] = (), **extra: Any) -> Table:
    """A private table whose open seats are taken by people the host app vouches for (new users each time),
    but the seats in `guests`, taken by guests."""
    seats = seats or TWO_PEOPLE
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": extra.pop("variant", "kozel"), "players": len(seats),
                                               "seats": seats, **extra}), 201)
    credentials, match_id = [], None
    for invite in opened["invites"]:
        body = {"invite": invite["code"]}
        if invite["seat"] not in guests:
            body["player"] = player_assertion(f"u{next(_users)}")
        joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", body))
        credentials.append(joined["credential"])
        match_id = joined["match_id"]
    assert match_id is not None
    return Table(opened["table_id"], opened["host_key"], credentials, match_id, opened)


def problem(reply: Reply, status: int, name: str) -> Json:
    assert reply.status == status and reply.json["type"] == f"/v1/problems/{name}", (reply.status, reply.body[:400])
    found: Json = reply.json
    return found


def exit_(gw: Gateway, table: Table, seat: int, how: str) -> Reply:
    return call(gw, "POST", f"/v1/matches/{table.match_id}/{how}", credential=table.credentials[seat])


def events(answer: Json) -> list[Json]:
    return [e for e in answer["events"] if e["type"] in ("resigned", "gone", "aborted", "match_ended")]


def seen_players(gw: Gateway, table: Table) -> list[str | None]:
    shown = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))
    return [s["player"] for s in shown["seats"]]


def archived(gw: Gateway, player: str, match_id: str) -> Json:
    """The archive's summary of `match_id` in `player`'s matches (the hand-off is at once; bounded wait)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for item in ok(call(gw, "GET", f"/v1/players/{player}/matches?limit=20"))["items"]:
            if item["match_id"] == match_id:
                return item  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise AssertionError(f"{match_id} not archived for {player}")


def places(item: Json) -> dict[int, int]:
    return {s["seat"]: s["place"] for s in item["seats"]}


def move_each_person(gw: Gateway, table: Table) -> None:
    """Every person's seat makes a move (the abort window closes)."""
    moved: set[int] = set()
    for _ in range(40):
        for seat, credential in enumerate(table.credentials):
            legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=credential))
            if legal["actions"] and seat not in moved:
                ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                        credential=credential))
                moved.add(seat)
            elif legal["actions"]:  # the other seat has not moved yet, but it is this one's turn: move on
                ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                        credential=credential))
        if moved == set(range(len(table.credentials))):
            return
    raise AssertionError(f"only seats {moved} moved")


# ---------------------------------------------------------------- resign


def test_resign_ends_the_match_the_side_losing_on_every_stream_and_in_the_archive(keyed: Gateway) -> None:
    gw = keyed
    table = open_vouched(gw)  # Kozel: scored as the seat's timeout (RULES.md K)
    other = seat_stream(gw, table.match_id, table.credentials[1])
    assert other.next() is not None  # its view
    problem(call(gw, "POST", f"/v1/matches/{table.match_id}/resign", credential=table.host_key), 403,
            "sealed-forbidden")
    answer = ok(exit_(gw, table, 0, "resign"))
    ended = events(answer)
    assert ended[0] == {"type": "resigned", "seat": 0}
    assert ended[1]["type"] == "match_ended" and ended[1]["losers"] == [0] and len(ended[1]["rating"]) == 2
    got = other.until(lambda e: e.kind == "end")
    updates = [e for e in got if e.kind == "update"]
    assert [e["type"] for e in updates[-1].data["events"]][:2] == ["resigned", "match_ended"]
    assert got[-1].kind == "end"
    problem(exit_(gw, table, 1, "resign"), 409, "illegal-action")  # over: nothing more to resign
    players = seen_players(gw, table)
    item = archived(gw, str(players[0]), table.match_id)
    assert item["rated"] is True and places(item) == {0: 2, 1: 1}
    other.close()


def test_resign_where_the_variant_has_no_timeout_rule_places_the_side_last(keyed: Gateway) -> None:
    gw = keyed
    seats = [{"kind": "open"}, {"kind": "open"}, {"kind": "bot"}, {"kind": "bot"}]
    table = open_vouched(gw, seats, variant="osel", options={"teams": True})
    answer = ok(exit_(gw, table, 1, "resign"))
    end = events(answer)[1]
    assert (end["losers"], end["winners"], end["rating"]) == ([1], [0], [])  # sides: 0+2 against 1+3
    item = archived(gw, str(seen_players(gw, table)[1]), table.match_id)
    assert item["rated"] is True and places(item) == {0: 1, 1: 2, 2: 1, 3: 2}


# ---------------------------------------------------------------- abort


def test_abort_before_every_person_moved_rates_nobody_and_is_closed_after(keyed: Gateway) -> None:
    gw = keyed
    table = open_vouched(gw)
    legal = [ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=c)) for c in table.credentials]
    mover = next(i for i, lg in enumerate(legal) if lg["actions"])
    ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal[mover]["actions"][0]},
            credential=table.credentials[mover]))
    answer = ok(exit_(gw, table, mover, "abort"))  # the other person has not moved: either may abort
    ended = events(answer)
    assert ended[0] == {"type": "aborted", "seat": mover}
    assert (ended[1]["losers"], ended[1]["winners"]) == ([], [])
    players = seen_players(gw, table)
    item = archived(gw, str(players[0]), table.match_id)
    assert item["rated"] is False
    profile = ok(call(gw, "GET", f"/v1/players/{players[0]}"))
    assert all(r["rated"] == 0 for r in profile["ratings"])  # nobody's rating changed

    late = open_vouched(gw)
    move_each_person(gw, late)
    problem(exit_(gw, late, 0, "abort"), 409, "abort-closed")
    assert not ok(call(gw, "GET", f"/v1/matches/{late.match_id}/seat", credential=late.host_key))["over"]


# ---------------------------------------------------------------- leaving


def test_leaving_a_rated_match_once_everyone_moved_is_a_resign(keyed: Gateway) -> None:
    gw = keyed
    table = open_vouched(gw)
    move_each_person(gw, table)
    players = seen_players(gw, table)
    ok(call(gw, "POST", f"/v1/tables/{table.table_id}/leave", credential=table.credentials[1]))
    assert ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["over"]
    item = archived(gw, str(players[1]), table.match_id)
    assert item["rated"] is True and places(item) == {0: 1, 1: 2}  # the leaver lost: not an unrated match

    casual = open_vouched(gw, rated=False)
    move_each_person(gw, casual)
    ok(call(gw, "POST", f"/v1/tables/{casual.table_id}/leave", credential=casual.credentials[1]))
    assert not ok(call(gw, "GET", f"/v1/matches/{casual.match_id}/seat", credential=casual.host_key))["over"]


def test_no_rating_is_won_against_a_guest_seat_or_by_leaving(keyed: Gateway) -> None:
    """One person on a vouched seat and a guest seat (a second tab, anyone): whatever the guest does (resign,
    leave, be claimed against, lose to the end) nobody's rating moves, and the match is archived unrated."""
    gw = keyed
    for exit_how in ("resign", "leave"):
        table = open_vouched(gw, guests=(1,))
        move_each_person(gw, table)
        alice = str(seen_players(gw, table)[0])
        assert alice.startswith("app:")
        if exit_how == "resign":
            ok(exit_(gw, table, 1, "resign"))
        else:
            ok(call(gw, "POST", f"/v1/tables/{table.table_id}/leave", credential=table.credentials[1]))
        item = archived(gw, alice, table.match_id)
        assert item["rated"] is False and places(item)[0] == 1
        profile = ok(call(gw, "GET", f"/v1/players/{alice}"))
        assert all(r["rated"] == 0 and r["points"] == 0 for r in profile["ratings"])


# ---------------------------------------------------------------- claim and presence


@pytest.fixture(scope="module")
def quick_presence(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway whose seats count as away 3 s after their last stream renewal (every 1.2 s) or call."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("presence"), GATEWAY_PRESENCE_SECONDS="3"))
    yield gw
    gw.stop()


def test_victory_is_claimed_only_once_the_other_person_is_gone(quick_presence: Gateway) -> None:
    gw = quick_presence
    table = open_table(gw, seats=TWO_PEOPLE, players=2, claim_after=5)
    streams = [seat_stream(gw, table.match_id, c) for c in table.credentials]
    assert all(s.next() is not None for s in streams)

    def seats() -> list[Json]:
        return ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["seats"]  # type: ignore[no-any-return]

    wait_for(lambda: all(s["here"] for s in seats()), 20)  # both streams open: both here
    time.sleep(6)  # twice a presence lifetime, more than claim_after: the open streams' renewals keep them here
    problem(exit_(gw, table, 0, "claim"), 409, "claim-refused")
    streams[1].close()                                   # seat 1's person closes the app
    away = wait_for(lambda: (lambda s: s if not s["here"] else None)(seats()[1]), 20)
    assert away["away_since"] <= time.time()
    problem(exit_(gw, table, 0, "claim"), 409, "claim-refused")  # gone, but not yet for claim_after

    def claimed() -> Reply | None:
        reply = exit_(gw, table, 0, "claim")
        return reply if reply.status == 200 else None
    answer = wait_for(claimed, 15).json
    ended = events(answer)
    assert ended[0] == {"type": "gone", "seat": 1} and ended[1]["losers"] == [1]  # Kozel: seat 1's timeout
    got = streams[0].until(lambda e: e.kind == "end")
    assert any(e.kind == "update" and e.data["events"][0]["type"] == "gone" for e in got)
    streams[0].close()


def test_the_streams_are_told_who_is_here_as_it_changes(quick_presence: Gateway) -> None:
    """Each seat's stream and the host's get a `presence` event when the seats here change (at the workers'
    renewals: 1.2 s here), and a stream opened later gets the current one at its start."""
    gw = quick_presence
    table = open_table(gw, seats=TWO_PEOPLE, players=2)
    anna = seat_stream(gw, table.match_id, table.credentials[0])
    host = seat_stream(gw, table.match_id, table.host_key)
    assert anna.next() is not None and host.next() is not None
    wait_for(lambda: anna.presence and anna.presence[-1] == {"here": [0]}, 20)
    boris = seat_stream(gw, table.match_id, table.credentials[1])
    assert boris.next() is not None
    wait_for(lambda: anna.presence[-1] == {"here": [0, 1]} and host.presence[-1] == {"here": [0, 1]}, 20)
    wait_for(lambda: boris.presence and boris.presence[-1] == {"here": [0, 1]}, 20)
    boris.close()                                        # Boris closes the app: away after 3 s
    wait_for(lambda: anna.presence[-1] == {"here": [0]} and host.presence[-1] == {"here": [0]}, 20)
    late = seat_stream(gw, table.match_id, table.host_key)  # told at once who is here, not at the next change
    assert late.next() is not None
    wait_for(lambda: late.presence and late.presence[-1] == {"here": [0]}, 20)
    changes = [p["here"] for p in anna.presence]
    assert all(a != b for a, b in zip(changes, changes[1:])), changes  # only changes are told
    for stream in (anna, host, late):
        stream.close()


# ---------------------------------------------------------------- races across gateways


def test_exits_race_moves_and_each_other_across_two_gateways(engine_proc: EngineProc, tmp_path: Path) -> None:
    with gateways_on_one_redis(engine_proc, tmp_path, 1, GATEWAY_PRESENCE_SECONDS="1") as (a, b):
        # a resign racing the other seat's move: one order or the other, never both lost, never a 5xx
        for _ in range(3):
            table = open_table(a, seats=TWO_PEOPLE, players=2)
            legal = [ok(call(b, "GET", f"/v1/matches/{table.match_id}/legal", credential=c))
                     for c in table.credentials]
            mover = next(i for i, lg in enumerate(legal) if lg["actions"])
            barrier = threading.Barrier(2)
            replies: dict[str, Reply] = {}

            def move(table: Table = table, mover: int = mover, action: str = legal[mover]["actions"][0],
                     barrier: threading.Barrier = barrier, replies: dict[str, Reply] = replies) -> None:
                barrier.wait()
                replies["move"] = call(b, "POST", f"/v1/matches/{table.match_id}/apply", {"action": action},
                                       credential=table.credentials[mover])

            def resign(table: Table = table, mover: int = mover, barrier: threading.Barrier = barrier,
                       replies: dict[str, Reply] = replies) -> None:
                barrier.wait()
                replies["resign"] = exit_(a, table, 1 - mover, "resign")

            threads = [threading.Thread(target=move), threading.Thread(target=resign)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert replies["resign"].status == 200, replies["resign"].body
            assert replies["move"].status in (200, 409), replies["move"].body  # after the resign: the match is over
            latest = ok(call(a, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))
            assert latest["over"] and latest["seq"] == (2 if replies["move"].status == 200 else 1)

        # two people claim at once against the third, who never came: exactly one claim ends it
        table = open_table(a, seats=[{"kind": "open"}] * 3, players=3, claim_after=5)
        for seat in (0, 1):
            call(a, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[seat])
        time.sleep(5.5)
        barrier = threading.Barrier(2)
        claims: list[Reply] = []

        def claim(seat: int, gw: Gateway) -> None:
            barrier.wait()
            claims.append(exit_(gw, table, seat, "claim"))

        threads = [threading.Thread(target=claim, args=(0, a)), threading.Thread(target=claim, args=(1, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status for r in claims) == [200, 409], [r.body[:200] for r in claims]
        won = next(r for r in claims if r.status == 200).json
        assert events(won)[0] == {"type": "gone", "seat": 2}


# ---------------------------------------------------------------- private tables


def test_a_private_table_shows_nothing_to_a_spent_invite_and_spectators_only_by_link(tables_gw: Gateway) -> None:
    gw = tables_gw
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "seats": TWO_PEOPLE}), 201)
    tid, code = opened["table_id"], opened["invites"][0]["code"]
    assert opened["spectator_link"] is None and opened["table"]["spectators"] is False
    problem(call(gw, "GET", f"/v1/tables/{tid}"), 403, "spectators-off")
    assert ok(call(gw, "GET", f"/v1/tables/{tid}?invite={code}"))["table_id"] == tid  # to whoever will take it
    ok(call(gw, "POST", f"/v1/tables/{tid}/join", {"invite": code}))
    problem(call(gw, "GET", f"/v1/tables/{tid}?invite={code}"), 403, "invalid-invite")  # spent: nothing
    ok(call(gw, "POST", f"/v1/tables/{tid}/join", {"invite": opened["invites"][1]["code"]}))
    match_id = ok(call(gw, "GET", f"/v1/tables/{tid}", credential=opened["host_key"]))["match_id"]
    watcher = seat_stream(gw, match_id)
    assert watcher.status == 403
    spectate = call(gw, "GET", f"/v1/matches/{match_id}/spectate")
    problem(spectate, 403, "spectators-off")

    watched = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "seats": TWO_PEOPLE,
                                                 "spectators": True}), 201)
    query = "?" + watched["spectator_link"].partition("&")[2]
    assert query.startswith("?watch=") and watched["table"]["spectators"] is True
    assert ok(call(gw, "GET", f"/v1/tables/{watched['table_id']}{query}"))["table_id"] == watched["table_id"]
    problem(call(gw, "GET", f"/v1/tables/{watched['table_id']}?watch=WRONGONE"), 403, "spectators-off")
    for invite in watched["invites"]:
        joined = ok(call(gw, "POST", f"/v1/tables/{watched['table_id']}/join", {"invite": invite["code"]}))
    stream = seat_stream(gw, joined["match_id"], query=query)
    first = stream.next()
    assert stream.status == 200 and first is not None and first.kind == "view" and first.data["seat"] is None
    stream.close()

    public = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "public": True}), 201)
    assert ok(call(gw, "GET", f"/v1/tables/{public['table_id']}"))["public"] is True  # anyone
