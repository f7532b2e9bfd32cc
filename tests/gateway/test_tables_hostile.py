"""Tried as a hostile or careless client would (issue 37): any credential text is a 401 (never a 500), a
lobby cursor that is no cursor a 400 (never a 503), a display name holds no control or bidirectional
characters, and a table's host key cannot end the match for a seat whose clock has not run out (with it
one person won rated matches alone, the second seat held as a guest)."""
from __future__ import annotations

import pytest

from .conftest import Gateway
from .test_tables import TWO_AND_TWO, call, ok, open_table, problem

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
        conceded = call(gw, "POST", "/v1/matches/timeout", {"token": mine["token"], "seat_key": mine["seat_key"]})
        assert conceded.status in (200, 409), conceded.body[:300]  # 409: not its turn in Kozel's rule
