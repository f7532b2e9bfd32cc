"""Quick play (issue 25; docs/tables.md "Quick play"), against a real gateway, engine and SQLite:
seekers meet at one table, a table opened by a seek fills with bots after the wait it names, and a
seek the service cannot serve answers a problem and opens nothing."""
from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import Gateway
from .test_tables import call, ok, problem

pytestmark = pytest.mark.service

Json = dict[str, Any]


def seek(gw: Gateway, **body: Any) -> Json:
    return ok(call(gw, "POST", "/v1/seek", body))


def test_two_seekers_meet_at_one_table_and_their_match_is_dealt(tables_gw: Gateway) -> None:
    variant = "osel"  # a variant no other test seeks, so that the two find each other
    first = seek(tables_gw, variant=variant, players=2, name="Anna")
    assert first["opened"] and first["match_id"] is None and first["seat"] == 0
    listed = ok(call(tables_gw, "GET", f"/v1/tables?variant={variant}"))["tables"]
    assert [t["table_id"] for t in listed] == [first["table_id"]]
    second = seek(tables_gw, variant=variant, players=2, name="Boris")
    assert not second["opened"] and second["table_id"] == first["table_id"] and second["seat"] == 1
    assert second["match_id"] is not None and second["table"]["status"] == "playing"
    assert ok(call(tables_gw, "GET", f"/v1/tables?variant={variant}"))["tables"] == []  # full: out of the lobby
    # each plays with its own credential
    for joined in (first, second):
        latest = ok(call(tables_gw, "GET", f"/v1/matches/{second['match_id']}/seat",
                         credential=joined["credential"]))
        assert latest["seat"] == joined["seat"]


def test_a_seek_for_another_player_count_or_clock_opens_its_own_table(tables_gw: Gateway) -> None:
    a = seek(tables_gw, variant="block", players=2, name="A")
    b = seek(tables_gw, variant="block", players=3, name="B")
    c = seek(tables_gw, variant="block", players=2, name="C", clock={"move": 30})
    assert a["opened"] and b["opened"] and c["opened"]
    assert len({a["table_id"], b["table_id"], c["table_id"]}) == 3
    d = seek(tables_gw, variant="block", players=2, name="D", clock={"move": 30})
    assert d["table_id"] == c["table_id"] and d["match_id"] is not None


def test_a_table_opened_by_a_seek_fills_with_bots_after_its_wait(tables_gw: Gateway) -> None:
    opened = seek(tables_gw, variant="kozel", players=4, name="Anna", bots_after=1, bots_level="random")
    assert opened["opened"]
    deadline = time.monotonic() + 15
    table = ok(call(tables_gw, "GET", f"/v1/tables/{opened['table_id']}"))
    while table["match_id"] is None and time.monotonic() < deadline:
        time.sleep(0.3)
        table = ok(call(tables_gw, "GET", f"/v1/tables/{opened['table_id']}"))
    assert table["match_id"] is not None and table["status"] == "playing"
    assert [(s["kind"], s["level"]) for s in table["seats"][1:]] == [("bot", "random")] * 3
    latest = ok(call(tables_gw, "GET", f"/v1/matches/{table['match_id']}/seat", credential=opened["credential"]))
    assert latest["seat"] == 0 and not latest["over"]


@pytest.mark.parametrize(("body", "status", "name"), [
    ({"variant": "kozel", "players": 9, "name": "X"}, 400, "malformed"),
    ({"variant": "chess", "players": 2, "name": "X"}, 404, "unknown-variant"),
    ({"variant": "kozel", "players": 2, "bots_after": 601}, 422, "validation-error"),
    ({"variant": "kozel", "players": 2, "clock": {"move": 1}}, 400, "malformed"),
    ({"variant": "kozel", "players": 2, "player": "p1.nope"}, 400, "invalid-player"),
])
def test_a_seek_the_service_cannot_serve_opens_nothing(tables_gw: Gateway, body: Json, status: int,
                                                       name: str) -> None:
    before = ok(call(tables_gw, "GET", "/v1/tables?limit=100"))
    problem(call(tables_gw, "POST", "/v1/seek", body), status, name)
    assert ok(call(tables_gw, "GET", "/v1/tables?limit=100")) == before
