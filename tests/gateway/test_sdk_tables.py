"""The SDK's online tables (clients/sdk/tables.py) against a real gateway and engine: two people join a table
with two bots and play a whole Kozel round through their seats, each seat's event stream carrying the other's
moves; one stream is dropped mid-round and resumes with none missed and none twice; the lobby follows its
cursor; each refusal of the contract (/work/tables-spec.md, docs/tables.md) raises its class."""
from __future__ import annotations

import threading
import time

import pytest

from clients.sdk import ClientProblem, IllegalAction, RestClient, Seat, StreamEvent, errors
from clients.sdk.tables import EventStream

from .conftest import Gateway

pytestmark = pytest.mark.service


def two_people(api: RestClient) -> tuple[Seat, Seat]:
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "expert"], name="SDK test")
    assert [i.seat for i in opened.invites] == [0, 1] and opened.table.status == "waiting"
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    assert anna.match_id is None and anna.seat == 0          # dealt when the last open seat is taken
    boris = RestClient.for_link(opened.invites[1].link).join_link(opened.invites[1].link, name="Boris")
    assert boris.seat == 1 and boris.match_id is not None
    assert anna.wait_for_match(timeout=5) == boris.match_id
    table = anna.table()                                 # a private table: its seats see it
    assert table.status == "playing" and [s.name for s in table.seats][:2] == ["Anna", "Boris"]
    return anna, boris


def read_to(stream: EventStream, seen: list[StreamEvent], seq: int) -> None:
    """Read `stream` until it has handed out the update of version `seq`."""
    deadline = time.monotonic() + 30
    while not seen or (seen[-1].seq or -1) < seq:
        assert time.monotonic() < deadline, f"no update {seq} within 30 s: {[e.seq for e in seen]}"
        seen.append(next(stream))


def test_two_seats_play_a_round_and_each_stream_carries_the_others_moves(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    anna, boris = two_people(api)
    seats = {0: anna, 1: boris}
    streams = {s: seat.events() for s, seat in seats.items()}
    seen: dict[int, list[StreamEvent]] = {0: [], 1: []}
    for s in seats:
        seen[s].append(next(streams[s]))
        assert seen[s][0].event == "view" and seen[s][0].data["seat"] == s
        assert len(seen[s][0].data["view"]["hand"]) in (6, 7)
    played: dict[int, list[str]] = {0: [], 1: []}
    answers: list[int] = []
    view = anna.view()["view"]
    dropped_at = None
    while True:
        if view["round_over"]:
            if len(answers) >= 8:
                break
            answer = anna.next_round()            # a round that ended early (a fish): one more
            mover = None
        else:
            mover = seats[view["to_move"]]        # the bots are played by the service
            assert mover.seat is not None
            action = mover.legal().actions[0]
            answer = mover.apply(action)
            played[mover.seat].append(action)
        answers.append(answer["seq"])
        view = answer["view"]
        if len(answers) == 3:
            streams[0].drop()                     # Anna's connection goes down; she reads nothing for 3 moves
            dropped_at = answer["seq"]
        if dropped_at is None or len(answers) >= 6:
            read_to(streams[0], seen[0], answer["seq"])
        read_to(streams[1], seen[1], answer["seq"])
        if mover is not None and not view["round_over"] and view["to_move"] != mover.seat:
            with pytest.raises(IllegalAction):    # out of turn: refused, nothing changed
                mover.apply(mover.state["hand"][0])
            assert mover.view()["seq"] == answer["seq"]
    assert dropped_at is not None
    assert streams[0].connections >= 2 and streams[1].connections >= 1
    for s in seats:
        updates = [e.seq for e in seen[s] if e.event == "update"]
        assert updates == list(range(seen[s][0].data["seq"] + 1, answers[-1] + 1)), (s, updates)   # none missed
        other = 1 - s
        their_moves = [ev["action"] if ev["type"] == "played" else "pass" for e in seen[s] if e.event == "update"
                       for ev in e.data["events"] if ev["type"] in ("played", "passed") and ev.get("seat") == other]
        assert [a.removesuffix("!") for a in their_moves] == [a.removesuffix("!") for a in played[other]]
        last = seen[s][-1].data
        assert last["view"]["round_over"] and last["view"]["seat"] == s and len(last["view"]["revealed_hands"]) == 4
    # the next round: one seat deals it, the other's click is refused harmlessly
    dealt = anna.next_round()  # the round after the last one played (a round may have ended early: two then)
    assert dealt["view"]["round_number"] == view["round_number"] + 1 and not dealt["view"]["round_over"]
    with pytest.raises(ClientProblem) as twice:
        boris.next_round()
    assert twice.value.status == 409
    read_to(streams[1], seen[1], dealt["seq"])
    assert any(ev["type"] == "round_dealt" for ev in seen[1][-1].data["events"])
    for stream in streams.values():
        stream.close()
    # another device resumes from an id it had: the updates after it, no view first
    middle = seen[0][3].seq
    assert middle is not None
    with anna.events(last_event_id=middle) as resumed:
        again = next(resumed)
    assert again.event == "update" and again.seq == middle + 1 and again.data == seen[0][4].data


def test_a_quiet_stream_closed_by_the_server_comes_back_by_itself(gateway: Gateway) -> None:
    """The session gateway ends a stream after 1 s without news (`event: closed`, reason idle): the iterator
    connects again with Last-Event-ID and the next move arrives once."""
    api = RestClient(gateway.url)
    anna, boris = two_people(api)
    stream = boris.events()
    first = next(stream)
    time.sleep(2.5)
    view = anna.view()["view"]
    mover = {0: anna, 1: boris}[view["to_move"]]
    answer = mover.apply(mover.legal().actions[0])
    seen = [first]
    read_to(stream, seen, answer["seq"])
    assert "idle" in stream.closed_reasons and stream.connections >= 2
    # the versions once each, and no second view; a `presence` event may come between them (the presence beat
    # every 10 s), and it reads as the version before it: an event without an id keeps the last one (SSE)
    assert {e.event for e in seen[1:]} <= {"update", "presence"}, [(e.event, e.id) for e in seen]
    assert [e.seq for e in seen[1:] if e.event == "update"] == list(range(first.data["seq"] + 1, answer["seq"] + 1))
    stream.close()


def test_the_lobby_follows_its_cursor(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    opened = [api.create_table("all-fives", 2, public=True, name=f"lobby {i}") for i in range(3)]
    listed = [t.table_id for t in api.list_tables("all-fives", limit=1)]
    assert {o.table_id for o in opened} <= set(listed) and len(listed) == len(set(listed))
    assert all(t.variant == "all-fives" and t.free_seats for t in api.list_tables("all-fives", limit=2))
    # a seat number on a public table: four people race for it, exactly one gets it
    outcomes: list[object] = []

    def take(name: str) -> None:
        try:
            outcomes.append(api.join_table(opened[0].table_id, seat=1, name=name))
        except errors.SeatTaken as err:
            outcomes.append(err)

    racers = [threading.Thread(target=take, args=(name,)) for name in ("Carla", "Dmitri", "Eve", "Fyodor")]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    assert len(outcomes) == 4 and len([o for o in outcomes if isinstance(o, Seat)]) == 1, outcomes
    with pytest.raises(errors.SeatTaken):
        api.join_table(opened[0].table_id, seat=1, name="Late")


def test_each_refusal_raises_its_class(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"])
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    with pytest.raises(errors.InvalidInvite):
        api.join_table(opened.table_id, invite=opened.invites[0].code, name="Again")
    with pytest.raises(errors.InviteRequired):
        api.join_table(opened.table_id, seat=0, name="Nobody")
    with pytest.raises(errors.UnknownTable):
        api.table("0" * 32)
    with pytest.raises(ValueError):
        api.join_table(opened.table_id, name="neither")
    other = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"])
    boris = api.join_table(other.table_id, invite=other.invites[0].code, name="Boris")
    with pytest.raises(errors.WrongTable):
        Seat(api, other.table_id, 0, anna.credential, match_id=boris.match_id).view()
    with pytest.raises(errors.InvalidCredential) as unknown:
        Seat(api, opened.table_id, 0, "not-a-credential", match_id=anna.match_id).view()
    assert unknown.value.status == 401
    with pytest.raises(errors.MatchNotOver):
        anna.again()
    assert api.seat_for(opened.table_id, anna.credential).seat == 0     # a second device, credential alone
    anna.leave()
    with pytest.raises((errors.NotSeated, errors.InvalidCredential)):
        anna.leave()
    with pytest.raises(errors.InvalidCredential):
        anna.view()


def test_the_host_sees_the_public_view_and_its_stream(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"])
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    opened.refresh()
    host = opened.as_host()
    assert host.seat is None and host.match_id == anna.match_id == opened.table.match_id
    latest = host.view()
    assert latest["seat"] is None and latest["view"]["hand"] == [] and "credential" not in str(latest)
    with host.events() as stream:
        first = next(stream)
        assert first.event == "view" and first.data["seat"] is None and first.data["view"]["hand"] == []
        answer = anna.apply(anna.legal().actions[0])
        update = next(stream)
        assert update.seq == answer["seq"] and update.data["view"]["hand"] == []
    assert [i.seat for i in opened.fresh_invites()] == []      # no open seat is free
