"""Seeking as a pair (issue 41 item 2; docs/tables.md "Seeking as a pair"), against real gateways, engine,
live store and archive: a party's maker gets a code, the partner seeks with it and is seated opposite,
strangers fill the other two seats (never the kept one), and the match is dealt, played as partners and
rated as teams; a bot partner on request; two parties at one table; a pair across two gateways on one
Redis; and every bad party answers its problem, never a 500.

Each test seeks its own variant (or rated/casual), so that seekers of different tests never meet."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clients.sdk.errors import Malformed, PartyFull, UnknownParty
from clients.sdk.rest import RestClient

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
from .test_tables import call, ok

pytestmark = pytest.mark.service

Json = dict[str, Any]


@pytest.fixture(scope="module")
def gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two workers on one SQLite file, taking the player assertions of one host app (so matches rate)."""
    gateway = launch_gateway(engine_proc.address, "--workers", "2",
                             env=gateway_env(tmp_path_factory.mktemp("parties"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gateway
    gateway.stop()


def seek(gw: Gateway, **body: Any) -> Json:
    return ok(call(gw, "POST", "/v1/seek", body))


def person(gw: Gateway, variant: str, name: str, **body: Any) -> Json:
    """A vouched person's seek of a 4-player `variant` (the host app's assertion for `name`)."""
    return seek(gw, variant=variant, players=4, name=name, player=player_assertion(name.lower()), **body)


def problem(reply: Reply, status: int, name: str) -> Json:
    """The problem answered, of this status and type."""
    assert reply.status == status and reply.content_type == "application/problem+json", (reply.status, reply.body[:400])
    found: Json = reply.json
    assert found["type"] == f"/v1/problems/{name}", found
    return found


def table_of(gw: Gateway, seated: Json) -> Json:
    """The table as its seat sees it (a party's table is private)."""
    return ok(call(gw, "GET", f"/v1/tables/{seated['table_id']}", credential=seated["credential"]))


def test_a_pair_is_seated_opposite_against_two_strangers_and_rated_as_a_team(gw: Gateway) -> None:
    anna = person(gw, "osel", "Anna", party=True)
    assert anna["opened"] and anna["seat"] == 0 and anna["match_id"] is None
    code = anna["party"]
    assert isinstance(code, str) and code.startswith(anna["table_id"] + ".")
    table = table_of(gw, anna)
    assert not table["public"] and table["options"]["teams"] is True
    # a party's table is kept from the lobby: nobody takes the partner's seat by its number
    assert anna["table_id"] not in [t["table_id"] for t in ok(call(gw, "GET", "/v1/tables?variant=osel"))["tables"]]
    problem(call(gw, "POST", f"/v1/tables/{anna['table_id']}/join", {"seat": 2, "name": "Mallory"}), 403,
            "invite-required")

    # two strangers come first: they take seats 1 and 3, never the one kept for Anna's partner
    clara = person(gw, "osel", "Clara")
    dan = person(gw, "osel", "Dan")
    assert (clara["table_id"], clara["seat"], clara["party"]) == (anna["table_id"], 1, None)
    assert (dan["table_id"], dan["seat"], dan["match_id"]) == (anna["table_id"], 3, None)
    assert table_of(gw, dan)["status"] == "waiting"

    boris = person(gw, "osel", "Boris", party=code)
    assert (boris["table_id"], boris["seat"], boris["opened"]) == (anna["table_id"], 2, False)
    match_id = boris["match_id"]
    assert match_id is not None
    table = table_of(gw, boris)
    assert table["status"] == "playing" and table["match_id"] == match_id
    assert [s["player"] for s in table["seats"]] == ["app:anna", "app:clara", "app:boris", "app:dan"]
    for seated in (anna, boris, clara, dan):
        assert ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=seated["credential"]))["seat"] \
            == seated["seat"]

    # Clara resigns for her side (1+3): Anna and Boris win together and are rated as one team
    ended = ok(call(gw, "POST", f"/v1/matches/{match_id}/resign", credential=clara["credential"]))
    end = next(e for e in ended["events"] if e["type"] == "match_ended")
    assert (end["losers"], end["winners"]) == ([1], [0])  # sides, not seats: 0+2 against 1+3
    record = wait_for(lambda: (r := call(gw, "GET", f"/v1/matches/{match_id}/record")).status == 200 and r.json)
    seats = {s["seat"]: s for s in record["seats"]}
    assert record["rated"] is True
    assert {seat: (s["side"], s["place"]) for seat, s in seats.items()} == {0: (0, 1), 1: (1, 2), 2: (0, 1),
                                                                          3: (1, 2)}
    after = {seat: s["skill_after"]["mu"] for seat, s in seats.items()}
    before = {seat: s["skill_before"]["mu"] for seat, s in seats.items()}
    assert after[0] == after[2] > before[0] == before[2]  # partners move as one team
    assert after[1] == after[3] < before[1]


def test_a_bot_partner_on_request_and_two_parties_at_one_table(gw: Gateway) -> None:
    eve = person(gw, "all-fives", "Eve", partner="bot", bots_level="expert")
    assert eve["opened"] and eve["seat"] == 0 and eve["party"] is None
    table = table_of(gw, eve)
    assert table["options"]["teams"] is True and table["public"]  # no seat is kept: the lobby may fill it
    assert [(s["kind"], s["level"]) for s in table["seats"]][2] == ("bot", "expert")
    # a second pair with a bot partner takes seat 1 and a bot seat 3: every seat taken, the match is dealt
    gina = person(gw, "all-fives", "Gina", partner="bot")
    assert (gina["table_id"], gina["seat"]) == (eve["table_id"], 1) and gina["match_id"] is not None
    table = table_of(gw, gina)
    assert [s["kind"] for s in table["seats"]] == ["open", "open", "bot", "bot"] and table["status"] == "playing"

    # two parties meet at one table: 0+2 against 1+3
    anna = person(gw, "fives-and-threes", "Anna", party=True)
    clara = person(gw, "fives-and-threes", "Clara", party=True)
    assert (clara["table_id"], clara["seat"], clara["opened"]) == (anna["table_id"], 1, False)
    assert clara["party"] not in (None, anna["party"])
    stranger = person(gw, "fives-and-threes", "Stranger")  # both free seats are kept: a table of its own
    assert stranger["opened"] and stranger["table_id"] != anna["table_id"]
    boris = person(gw, "fives-and-threes", "Boris", party=anna["party"])
    dan = person(gw, "fives-and-threes", "Dan", party=clara["party"])
    assert (boris["seat"], dan["seat"]) == (2, 3) and dan["match_id"] is not None
    assert [s["name"] for s in table_of(gw, dan)["seats"]] == ["Anna", "Clara", "Boris", "Dan"]


def test_a_kept_seat_the_wait_for_people_gave_a_bot_refuses_the_partner(gw: Gateway) -> None:
    anna = person(gw, "threes-fives", "Anna", party=True, bots_after=1, rated=False)

    def filled() -> bool:
        return table_of(gw, anna)["match_id"] is not None

    wait_for(filled, 20)
    assert [s["kind"] for s in table_of(gw, anna)["seats"]] == ["open", "bot", "bot", "bot"]
    problem(call(gw, "POST", "/v1/seek", {"variant": "threes-fives", "players": 4, "rated": False,
                                          "party": anna["party"]}), 409, "party-full")


def test_every_bad_party_answers_its_problem(gw: Gateway) -> None:
    anna = person(gw, "threes-fives", "Anna", party=True)
    boris = person(gw, "threes-fives", "Boris", party=anna["party"])
    assert boris["seat"] == 2
    # a third person with the code: the partner is seated
    third = problem(call(gw, "POST", "/v1/seek", {"variant": "threes-fives", "players": 4, "party": anna["party"]}),
                    409, "party-full")
    assert third["field"] == "party"
    table_id, _, secret = anna["party"].partition(".")
    for code in ("nope", f"{table_id}.WRONGCOD", f"{'0' * 32}.{secret}", "." + secret):
        found = problem(call(gw, "POST", "/v1/seek", {"variant": "threes-fives", "players": 4, "party": code}),
                        404, "unknown-party")
        assert found["field"] == "party"
    # a foreign party: another variant's, or another seek key's (casual, a clock)
    clara = person(gw, "osel", "Clara", party=True, rated=False)
    for body in ({"variant": "threes-fives", "players": 4}, {"variant": "osel", "players": 4},
                 {"variant": "osel", "players": 4, "rated": False, "clock": {"move": 30, "on_timeout": "autopilot"}}):
        found = problem(call(gw, "POST", "/v1/seek", {**body, "party": clara["party"]}), 404, "unknown-party")
        assert "osel for 4" in found["detail"]
    assert ok(call(gw, "GET", f"/v1/tables/{clara['table_id']}", credential=clara["credential"]))["seats"][2][
        "taken"] is False  # nothing changed: the partner's seat still waits

    before = ok(call(gw, "GET", "/v1/tables?limit=100"))
    for body, status, name, field in [
        ({"variant": "osel", "players": 2, "party": True}, 400, "malformed", "party"),
        ({"variant": "kozel", "players": 4, "party": True}, 400, "malformed", "party"),
        ({"variant": "block", "players": 4, "partner": "bot"}, 400, "malformed", "partner"),
        ({"variant": "osel", "players": 3, "partner": "bot"}, 400, "malformed", "partner"),
        ({"variant": "osel", "players": 4, "party": True, "options": {"teams": False}}, 400, "malformed", "party"),
        ({"variant": "osel", "players": 4, "party": anna["party"], "partner": "bot"}, 400, "malformed", "partner"),
        ({"variant": "chess", "players": 4, "party": True}, 404, "unknown-variant", "name"),
        ({"variant": "osel", "players": 4, "party": 5}, 422, "validation-error", "party"),
        ({"variant": "osel", "players": 4, "party": ""}, 422, "validation-error", "party"),
        ({"variant": "osel", "players": 4, "partner": "human"}, 422, "validation-error", "partner"),
    ]:
        found = problem(call(gw, "POST", "/v1/seek", body), status, name)
        assert found.get("field") == field, (body, found)
        if name == "malformed":
            assert found["detail"].startswith(f"{field}: "), found
    assert ok(call(gw, "GET", "/v1/tables?limit=100")) == before


def test_a_pair_seeks_through_two_gateways_on_one_redis(engine_proc: EngineProc, tmp_path: Path) -> None:
    """Anna makes the party on one gateway, Boris takes it on the other; the strangers seek one on each."""
    with gateways_on_one_redis(engine_proc, tmp_path, workers=1) as (a, b):
        anna = seek(a, variant="osel", players=4, name="Anna", party=True)
        clara = seek(b, variant="osel", players=4, name="Clara")
        boris = seek(b, variant="osel", players=4, name="Boris", party=anna["party"])
        dan = seek(a, variant="osel", players=4, name="Dan")
        assert {s["table_id"] for s in (anna, boris, clara, dan)} == {anna["table_id"]}
        assert [s["seat"] for s in (anna, clara, boris, dan)] == [0, 1, 2, 3]
        match_id = dan["match_id"]
        assert match_id is not None
        for seated, gateway in ((anna, b), (boris, a)):
            assert ok(call(gateway, "GET", f"/v1/matches/{match_id}/seat", credential=seated["credential"]))[
                "seat"] == seated["seat"]
        problem(call(a, "POST", "/v1/seek", {"variant": "osel", "players": 4, "party": anna["party"]}), 409,
                "party-full")


def test_the_sdk_seeks_as_a_pair(gw: Gateway) -> None:
    """The SDK's `seek`: a party's code, its partner, a bot partner, and the problems as their classes."""
    api = RestClient(gw.url)
    anna = api.seek("all-fives", 4, name="Anna", party=True, rated=False)
    assert anna.opened and anna.seat.seat == 0 and anna.party is not None and not anna.table.public
    boris = api.seek("all-fives", 4, name="Boris", party=anna.party, rated=False)
    assert (boris.seat.table_id, boris.seat.seat, boris.party) == (anna.seat.table_id, 2, None)
    with pytest.raises(PartyFull):
        api.seek("all-fives", 4, name="Mallory", party=anna.party, rated=False)
    with pytest.raises(UnknownParty):
        api.seek("all-fives", 4, name="Mallory", party=anna.party)  # rated: not the party's seek
    with pytest.raises(Malformed):
        api.seek("kozel", 4, party=True)
    for name in ("Clara", "Dan"):
        api.seek("all-fives", 4, name=name, rated=False)
    assert boris.seat.wait_for_match(timeout=10) == anna.seat.wait_for_match(timeout=10)
    assert anna.seat.view()["seat"] == 0
    eve = api.seek("all-fives", 4, name="Eve", partner="bot", rated=False, clock={"move": 30, "on_timeout": "autopilot"})
    assert eve.table.seats[2].kind == "bot" and eve.party is None


def test_a_partys_seeks_count_as_seeks(engine_proc: EngineProc, tmp_path: Path) -> None:
    """Rate limits as seek's: a player past `seeks-per-player` is refused a party's code too, and the partner's
    seat is still kept for when the window has passed."""
    limited = launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(
        tmp_path, GATEWAY_PLAYER_KEYS=PLAYER_KEYS, GATEWAY_LIMIT_SEEKS_PER_PLAYER="2/60"))
    try:
        anna = person(limited, "osel", "Anna", party=True)
        person(limited, "osel", "Boris", rated=False)
        person(limited, "osel", "Boris", rated=False)
        refused = problem(call(limited, "POST", "/v1/seek", {"variant": "osel", "players": 4, "party": anna["party"],
                                                             "player": player_assertion("boris")}), 429, "rate-limited")
        assert refused["limit"] == "seeks-per-player"
        assert table_of(limited, anna)["seats"][2]["taken"] is False
        assert person(limited, "osel", "Clara", party=anna["party"])["seat"] == 2  # another player: not limited
    finally:
        limited.stop()
