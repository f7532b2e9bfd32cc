"""Tried as a hostile or careless client would (issue 37): any credential text is a 401 (never a 500), a
lobby cursor that is no cursor a 400 (never a 503), a display name holds no control or bidirectional
characters, and a table's host key cannot end the match for a seat whose clock has not run out (with it
one person won rated matches alone, the second seat held as a guest)."""
from __future__ import annotations

import base64
import time
from pathlib import Path

import jwt
import pytest

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway
from .test_tables import TWO_AND_TWO, call, ok, open_table, problem

KEY = base64.b64encode(b"k" * 32).decode()

pytestmark = pytest.mark.service


def test_any_credential_text_is_refused_as_a_credential(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw)
    base = table.credentials[0].split(".")
    forged = [f"{table.table_id}.\u00b2.{base[2]}", f"{table.table_id}.\u00b9.{base[2]}", f"{table.table_id}.01.x",
              f"{table.table_id}.-1.x", f"{table.table_id}.host", "\u00e9." * 40, ".", f"{table.table_id}..",
              "x" * 5000]
    routes = [("GET", f"/v1/matches/{table.match_id}/seat", None), ("GET", f"/v1/matches/{table.match_id}/legal", None),
              ("POST", f"/v1/matches/{table.match_id}/apply", {"action": "pass"}),
              ("POST", f"/v1/matches/{table.match_id}/next-round", {}),
              ("POST", f"/v1/matches/{table.match_id}/events/ticket", None),
              ("POST", f"/v1/tables/{table.table_id}/leave", None), ("GET", f"/v1/tables/{table.table_id}/invites", None),
              ("GET", f"/v1/matches/{table.match_id}/events", None),
              ("POST", f"/v1/tables/{table.table_id}/again", None)]
    for credential in forged:
        for method, path, body in routes:
            reply = call(gw, method, path, body, credential=credential)
            assert reply.status in (400, 401), (credential[:40], path, reply.status, reply.body[:300])


def test_a_cursor_that_is_no_cursor_is_a_bad_cursor(tables_gw: Gateway) -> None:
    for cursor in ("NaN_x", "inf_x", "-inf_abc", "1e999_x", "nan", "12_" + "a" * 100):
        problem(call(tables_gw, "GET", f"/v1/tables?cursor={cursor}"), 400, "bad-cursor")


def test_a_name_is_shown_without_controls_or_bidirectional_marks(tables_gw: Gateway) -> None:
    gw = tables_gw
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "seats": TWO_AND_TWO,
                                               "name": "Anna\u202e's\ntable\u0000"}), 201)
    assert opened["table"]["name"] == "Anna 's table"
    joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                     {"invite": opened["invites"][0]["code"], "name": "\u202eecila\u202c\r\n"}))
    assert joined["table"]["seats"][0]["name"] == "ecila"
    joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                     {"invite": opened["invites"][1]["code"], "name": "\u0000\u200f"}))
    assert joined["table"]["seats"][1]["name"] == "Player 2"  # nothing left: the seat's own name


def test_a_table_s_host_cannot_time_out_a_seat_whose_clock_has_not_run_out(tables_gw: Gateway) -> None:
    gw = tables_gw
    for clock in (None, {"move": 300}):
        table = open_table(gw, [{"kind": "open"}, {"kind": "open"}], variant="kozel", players=2,
                           **({"clock": clock} if clock else {}))
        host = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))
        for seat in (0, 1):  # the seat to move and the other
            problem(call(gw, "POST", "/v1/matches/timeout", {"token": host["token"], "seat_key": host["seat_key"],
                                                             "seat": seat}), 403, "sealed-forbidden")
        assert not ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["over"]
        # a seat may still concede its own clock
        mine = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))
        conceded = ok(call(gw, "POST", "/v1/matches/timeout", {"token": mine["token"], "seat_key": mine["seat_key"]}))
        assert conceded["view"]["match_over"], conceded


def test_one_person_holds_one_seat_of_a_table(engine_proc: EngineProc, tmp_path: Path) -> None:
    """The same player (one assertion joining both invites: a double click, two tabs) is refused the second
    seat, so no match is played against oneself and then refused by the archive; a seek never seats a
    player at a table where it sits already."""
    gw = launch_gateway(engine_proc.address, "--workers", "1",
                        env=gateway_env(tmp_path, GATEWAY_PLAYER_KEYS=f"k1:{KEY}"))
    try:
        now = int(time.time())
        alice = jwt.encode({"sub": "alice", "iat": now, "exp": now + 3600}, b"k" * 32, algorithm="HS256",
                           headers={"kid": "k1"})
        opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2}), 201)
        first = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                        {"invite": opened["invites"][0]["code"], "player": alice}))
        assert first["player_id"] == "app:alice"
        problem(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                     {"invite": opened["invites"][1]["code"], "player": alice}), 409, "seat-held")
        assert ok(call(gw, "GET", f"/v1/tables/{opened['table_id']}", credential=opened["host_key"]))["status"] \
            == "waiting"  # nothing changed
        sought = ok(call(gw, "POST", "/v1/seek", {"variant": "kozel", "players": 2, "player": alice}))
        again = ok(call(gw, "POST", "/v1/seek", {"variant": "kozel", "players": 2, "player": alice}))
        assert sought["opened"] and again["opened"] and again["table_id"] != sought["table_id"]
    finally:
        gw.stop()


def test_a_rated_table_gives_no_seat_engine_help_and_a_casual_one_does(tables_gw: Gateway) -> None:
    """Rated (the default): a seat's suggest and hints are refused with a problem saying why, or the rating
    would be the expert bot's; casual (`"rated": false`): both answer."""
    gw = tables_gw
    for rated in (True, False):
        body: dict[str, object] = {} if rated else {"rated": False}
        table = open_table(gw, [{"kind": "open"}, {"kind": "open"}], variant="kozel", players=2, **body)
        assert ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["rated"] is rated
        for credential in table.credentials:
            seat = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=credential))
            carried = {"token": seat["token"], "seat_key": seat["seat_key"]}
            for path in ("/v1/matches/suggest", "/v1/matches/hints"):
                reply = call(gw, "POST", path, {**carried, **({"level": "expert"} if "suggest" in path else {})})
                if rated:
                    problem(reply, 403, "help-refused")
                else:
                    assert reply.status in (200, 409), (path, reply.status, reply.body[:300])  # 409: not its turn


def test_a_casual_table_s_match_is_archived_and_changes_no_rating(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw, [{"kind": "open"}, {"kind": "open"}], variant="kozel", players=2, rated=False)
    seat = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[1]))
    ok(call(gw, "POST", "/v1/matches/timeout", {"token": seat["token"], "seat_key": seat["seat_key"]}))
    deadline = time.monotonic() + 15
    while (archived := call(gw, "GET", f"/v1/matches/{table.match_id}/record")).status == 404:
        assert time.monotonic() < deadline, "the casual match was not archived"
        time.sleep(0.1)
    record = ok(archived)
    assert record["rated"] is False and all(s["player"] is None for s in record["seats"]), record["seats"]
