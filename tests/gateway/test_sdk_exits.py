"""The SDK's side of issue 37 against a real gateway and engine: a seat resigns, aborts or claims victory
(`Seat.resign`, `abort`, `claim`) and the other seat's stream carries the exit and the end; each refusal
(the abort closed, nobody gone, the match over, the host key) raises its class; a table opened rated or
casual, with spectators and a claim time says so, a private table shows itself only to its seats, an unused
invite and its spectator link; and the new problem types (rate-limited with its Retry-After) map to their
classes.

The gateway counts a seat as here for 2 s after its stream's last renewal or its last call
(`GATEWAY_PRESENCE_SECONDS`), so that a seat gone for a short claim time (10 s) can be claimed within a test.
"""
from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from clients.sdk import IllegalAction, RestClient, SealedForbidden, Seat, StreamEvent, errors
from clients.sdk.tables import OpenedTable, parse_watch_link

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway

pytestmark = pytest.mark.service

#: A short claim time (5 s is the shortest a table takes), long enough that a claim made right after the deal
#: is refused even on a busy machine.
CLAIM_AFTER = 10
#: The events of a seat's own action (domino: `seat`; Kingdomino: `player`).
ACTS = frozenset({"played", "drew", "passed", "tile_placed", "tile_picked", "tile_discarded"})


@pytest.fixture(scope="module")
def exits_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("exits"), GATEWAY_PRESENCE_SECONDS="2"))
    yield gw
    gw.stop()


def two_people(api: RestClient, **table: object) -> tuple[OpenedTable, Seat, Seat]:
    """A 2-player Kozel table of two people (private unless `table` says), both seated, its match dealt."""
    opened = api.create_table("kozel", 2, seats=["open", "open"], **table)  # type: ignore[arg-type]
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    assert anna.wait_for_match(timeout=10) == boris.match_id
    return opened, anna, boris


def until_both_moved(anna: Seat, boris: Seat) -> None:
    """Play the first legal action of whichever person is to act until each of them has acted once."""
    people = {anna.seat: anna, boris.seat: boris}
    acted: set[int] = set()
    for _ in range(40):
        if acted == set(people):
            return
        to_move = anna.legal().seat
        assert to_move in people, to_move
        mover = people[to_move]
        answer = mover.apply(mover.legal().actions[0])
        acted |= {e["seat"] for e in answer["events"] if e["type"] in ACTS and e.get("seat") in people}
    raise AssertionError("the two people did not both act")


def next_update(stream: Iterator[StreamEvent], kind: str, timeout: float = 30.0) -> StreamEvent:
    """The stream's first update carrying an event of `kind`."""
    deadline = time.monotonic() + timeout
    for event in stream:
        if event.event == "update" and any(e["type"] == kind for e in event.data.get("events", [])):
            return event
        assert time.monotonic() < deadline, f"no {kind} on the stream within {timeout} s"
    raise AssertionError(f"the stream ended without {kind}")


def test_a_seat_resigns_and_the_other_seats_stream_carries_it_and_the_end(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened, anna, boris = two_people(api)
    with pytest.raises(SealedForbidden):             # the host key plays no seat: it cannot resign one
        opened.as_host().resign()
    with boris.events() as stream:
        assert next(stream).event == "view"
        answer = anna.resign()
        kinds = [e["type"] for e in answer["events"]]
        assert kinds[0] == "resigned" and answer["events"][0]["seat"] == anna.seat, kinds
        assert "match_ended" in kinds and answer["view"]["match_over"] and anna.over
        seen = next_update(stream, "resigned")
        assert seen.seq == answer["seq"] and [e["type"] for e in seen.data["events"]] == kinds
        assert seen.data["view"]["match_over"]
        assert any(e.event == "end" for e in stream)  # and the stream ends
    with pytest.raises(IllegalAction):                # over: nothing to resign any more
        boris.resign()
    with pytest.raises(errors.ClientProblem) as refused:  # nor to claim
        boris.claim()
    assert refused.value.status == 409
    assert anna.table().status == "over"


def test_an_abort_before_everyone_moved_and_abort_closed_after(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    _, anna, boris = two_people(api)
    answer = boris.abort()                            # nobody has moved: the match ends, no result
    assert [e["type"] for e in answer["events"]][0] == "aborted" and answer["events"][0]["seat"] == boris.seat
    assert anna.view()["over"]
    _, anna, boris = two_people(api)
    until_both_moved(anna, boris)
    with pytest.raises(errors.AbortClosed) as closed:
        anna.abort()
    assert closed.value.status == 409 and not anna.view()["over"]   # nothing changed
    with anna.events() as stream:                     # leaving a rated match now is a resign
        assert next(stream).event == "view"
        boris.leave()
        seen = next_update(stream, "resigned")
        assert seen.data["events"][0]["seat"] == boris.seat and seen.data["view"]["match_over"]


def test_victory_is_claimed_over_a_seat_gone_for_the_claim_time_and_refused_before(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened, anna, boris = two_people(api, claim_after=CLAIM_AFTER)
    with pytest.raises(errors.ClaimRefused):          # Boris has not been gone long enough
        anna.claim()
    # Boris never calls nor streams after taking his seat: away since the deal. Anna keeps calling: here.
    deadline = time.monotonic() + CLAIM_AFTER + 30
    while True:
        anna.view()
        table = anna.table()
        assert table.claim_after == CLAIM_AFTER
        me = table.seats[anna.seat or 0]
        assert me.here is True and me.away_since is None
        if table.claimable():
            break
        assert time.monotonic() < deadline, table.raw["seats"]
        time.sleep(0.5)
    him = table.seats[boris.seat or 0]
    assert table.claimable() == [boris.seat] and him.here is False and him.away_since is not None
    assert (him.away_for() or 0) >= CLAIM_AFTER
    answer = anna.claim()
    assert answer["events"][0]["type"] == "gone" and answer["events"][0]["seat"] == boris.seat
    assert answer["view"]["match_over"] and opened.refresh().status == "over"


def test_a_casual_private_table_with_spectators_shows_itself_to_its_seats_invites_and_link(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"], rated=False, spectators=True, claim_after=60)
    assert opened.spectator_link is not None and opened.watch_code is not None
    base, table_id, code = parse_watch_link(opened.spectator_link)
    assert table_id == opened.table_id and base == exits_gw.url.rstrip("/")
    assert opened.table.rated is False and opened.table.spectators and opened.table.claim_after == 60
    assert all(s.here is None and s.away_since is None for s in opened.table.seats)   # no match yet
    with pytest.raises(errors.SpectatorsOff):         # a private table, asked by nobody in particular
        api.table(opened.table_id)
    assert api.table(opened.table_id, watch=code).spectators
    first = opened.invites[0].code
    assert api.table(opened.table_id, invite=first).table_id == opened.table_id   # an unused invite shows it
    anna = api.join_table(opened.table_id, invite=first, name="Anna")
    with pytest.raises(errors.ClientProblem) as spent:                            # a spent one does not
        api.table(opened.table_id, invite=first)
    assert spent.value.status == 403
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    match_id = anna.wait_for_match(timeout=10)
    assert match_id == boris.match_id
    with pytest.raises(errors.SpectatorsOff):
        next(api.watch_events(match_id))
    with api.watch_events(match_id, code) as watching:
        first_event = next(watching)
        assert first_event.event == "view" and not first_event.data["view"].get("hand")   # the public view
        boris.resign()                                # a casual match may be resigned too
        assert next_update(watching, "resigned").data["view"]["match_over"]
    assert opened.refresh().status == "over"           # the host key sees it


def test_a_table_answer_is_read_with_its_presence_and_claim_time() -> None:
    """(No gateway.) A bot's seat has no presence; a person away since 1000 is claimable from 1000 +
    claim_after on; a table without `rated` is rated."""
    table = {"table_id": "t1", "variant": "kozel", "players": 2, "public": True, "seats": [
        {"seat": 0, "kind": "open", "taken": True, "name": "Anna", "here": False, "away_since": 1000},
        {"seat": 1, "kind": "bot", "level": "greedy", "taken": True, "name": "greedy bot"}],
        "status": "playing", "match_id": "m", "claim_after": 120}
    from clients.sdk.tables import Table

    read = Table.from_json(table)
    assert read.rated and not read.spectators and read.claim_after == 120
    assert read.seats[1].here is None and read.seats[1].away_for() is None
    assert read.seats[0].away_for(now=1100) == 100 and read.claimable(now=1100) == []
    assert read.claimable(now=1120) == [0]


@pytest.mark.parametrize(("status", "name", "cls"), [
    (429, "rate-limited", errors.RateLimited), (409, "abort-closed", errors.AbortClosed),
    (409, "claim-refused", errors.ClaimRefused), (403, "spectators-off", errors.SpectatorsOff)])
def test_the_new_problem_types_raise_their_classes(status: int, name: str, cls: type[errors.ProblemError]) -> None:
    problem = {"type": f"/v1/problems/{name}", "title": name, "status": status, "detail": "no",
               **({"limit": "tables-per-address"} if name == "rate-limited" else {})}
    reply = httpx.Response(status, json=problem, headers={"Retry-After": "7"} if status == 429 else {})
    raised = errors.problem_of(reply)
    assert type(raised) is cls and isinstance(raised, errors.ClientProblem) and raised.status == status
    if cls is errors.RateLimited:
        assert raised.retry_after == 7.0 and isinstance(raised, errors.RateLimited)
        assert raised.limit == "tables-per-address"
