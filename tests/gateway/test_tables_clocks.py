"""Turn clocks the service applies itself (issue 25; docs/tables.md "Clocks"), against real gunicorn
gateways, a real engine, real SQLite and a real Redis.

- A seat that does not move is timed out with nobody calling and nobody connected: the variant's
  rule ends the match, once; every line shows each seat's time and the running deadline.
- Autopilot: a bot plays the seat on; the person's next call takes it back, with time on its clock.
- Two gateways on one Redis, both keepers watching the same clock: one timeout, never two.
- A clock setting out of range is a 400 naming its member, and opens no table.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from .conftest import EngineProc, Gateway, InProcess, gateway_env, gateways_on_one_redis
from .test_tables import Table, call, ok, open_table, problem, seat_stream

pytestmark = pytest.mark.service

Json = dict[str, Any]
#: The shortest move clock a table may have (api_gateway.clocks.MOVE_LIMITS).
MOVE = 5


def latest(gw: Gateway, table: Table, seat: int) -> Json:
    return ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[seat]))


def every_event(gw: Gateway, table: Table, seat: int) -> list[Json]:
    """Every event of the match on `seat`'s stream, from the first version on (its updates), to its end.
    The person's clock moves on meanwhile: each check runs well within a move's time."""
    stream = seat_stream(gw, table.match_id, table.credentials[seat], last=0)
    try:
        got = stream.until(lambda e: e.kind == "end", timeout=20)
    finally:
        stream.close()
    assert got and got[-1].kind == "end", got[-3:]
    return [event for update in got if update.kind == "update" for event in update.data["events"]]


def test_a_seat_that_does_not_move_is_timed_out_by_the_service_alone(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw, clock={"move": MOVE})
    first = latest(gw, table, 0)
    clocks = first["clocks"]
    running = clocks["running"]
    assert running in (0, 1)  # a person's: the bots moved at the deal
    assert clocks["setting"] == {"move": MOVE, "on_timeout": "rule"} and clocks["autopilot"] == []
    assert clocks["remaining"][running] <= MOVE and clocks["deadline"] > time.time()
    # nobody calls and nobody watches until well after the deadline
    time.sleep(max(0.0, clocks["deadline"] - time.time()) + 1.5)
    after = latest(gw, table, 1 - running)
    assert after["over"] and after["seq"] == first["seq"] + 1 and after["clocks"]["running"] is None
    events = every_event(gw, table, 1 - running)
    ended = [e for e in events if e["type"] == "match_ended"]  # Kozel's timeout: the late seat loses
    assert len(ended) == 1 and ended[0]["losers"] == [running], events


def test_autopilot_plays_the_seat_on_until_its_person_is_back(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw, clock={"move": MOVE, "on_timeout": "autopilot", "autopilot_level": "greedy"})
    first = latest(gw, table, 0)
    late = first["clocks"]["running"]
    other = 1 - late
    time.sleep(max(0.0, first["clocks"]["deadline"] - time.time()) + 1.5)
    # the other person sees the bot's move for the late seat, and that seat on autopilot
    seen = latest(gw, table, other)
    assert seen["clocks"]["autopilot"] == [late] and not seen["over"]
    assert seen["seq"] > first["seq"]
    moved = [e for e in events_up_to(gw, table, other, seen["seq"]) if e.get("seat") == late
             and e["type"] in ("played", "passed", "drew")]
    assert moved, "no move was made for the seat on autopilot"
    # the late person's next call takes its seat back, with time on its clock
    back = latest(gw, table, late)
    assert back["clocks"]["autopilot"] == [] and back["clocks"]["remaining"][late] >= MOVE - 1
    assert back["seq"] == seen["seq"] + 1  # the seat given back is a change every stream sees


def test_when_every_person_is_away_the_autopilot_takes_turns_and_the_match_goes_on(tables_gw: Gateway) -> None:
    """Block (no timeout rule), two people, both away: the first late seat goes on autopilot; when the
    second's clock runs out too, no bot may take the last person's seat, so the seat away longest is given
    back and the bot plays the late one. The match goes on, never a clock that ran out and does nothing
    (it was: the table stayed playing with an expired clock, the keepers warning five times a second)."""
    gw = tables_gw
    for _ in range(5):
        table = open_table(gw, [{"kind": "open"}, {"kind": "open"}], variant="block", players=2,
                           clock={"move": MOVE, "on_timeout": "autopilot", "autopilot_level": "greedy"})
        first = latest_quietly(gw, table)
        late = first["clocks"]["running"]
        time.sleep(max(0.0, first["clocks"]["deadline"] - time.time()) + 1.5)
        one_away = latest_quietly(gw, table)
        # In about one deal in 500 (2 of seeds 0-999), the bot's opening tile blocks the round at once (no other
        # tile of its number in either hand): no clock runs then (a clean-clone run failed so); this needs another deal.
        if not one_away["view"]["round_over"]:
            break
    assert one_away["clocks"]["autopilot"] == [late] and one_away["clocks"]["running"] == 1 - late, one_away
    time.sleep(max(0.0, one_away["clocks"]["deadline"] - time.time()) + 1.5)
    both = latest_quietly(gw, table)
    assert both["clocks"]["autopilot"] == [1 - late], both["clocks"]  # the first is back, the second away
    assert both["seq"] >= one_away["seq"] + 2 and (both["over"] or both["clocks"]["deadline"] > time.time())


def latest_quietly(gw: Gateway, table: Table) -> Json:
    """The table's latest view as its host sees it (a seat's own call would take that seat back)."""
    return ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))


def events_up_to(gw: Gateway, table: Table, seat: int, seq: int) -> list[Json]:
    """The events of `seat`'s stream from the first version to version `seq`."""
    stream = seat_stream(gw, table.match_id, table.credentials[seat], last=0)
    try:
        got = stream.until(lambda e: e.id is not None and e.id >= seq, timeout=10)
    finally:
        stream.close()
    return [event for update in got if update.kind == "update" for event in update.data["events"]]


@pytest.fixture(scope="module")
def redis_pair(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Gateway]]:
    with gateways_on_one_redis(engine_proc, tmp_path_factory.mktemp("clocks-redis"), workers=2) as gws:
        yield gws


def test_two_gateways_on_one_redis_apply_a_clock_once(redis_pair: list[Gateway]) -> None:
    """Four keepers (two workers on each of two gateways) watch the same clocks: each clock that runs
    out is applied exactly once, whichever gateway wins."""
    a, b = redis_pair
    tables = [open_table(a if i % 2 else b, clock={"move": MOVE}) for i in range(4)]
    deadline = max(latest(a, t, 0)["clocks"]["deadline"] for t in tables)
    time.sleep(max(0.0, deadline - time.time()) + 2.0)
    for i, table in enumerate(tables):
        gw = b if i % 2 else a  # read through the other gateway than the one that opened it
        assert latest(gw, table, 0)["over"]
        ended = [e for e in every_event(gw, table, 0) if e["type"] == "match_ended"]
        assert len(ended) == 1, ended


ONE_PERSON = [{"kind": "open"}, {"kind": "bot"}]


@pytest.mark.parametrize(("clock", "field", "table"), [
    ({"move": 1}, "clock.move", {}),
    ({"bank": 20}, "clock.bank", {}),
    ({"bank": 300, "increment": 86401}, "clock.increment", {}),
    ({"move": 14 * 86400 + 1}, "clock.move", {}),
    ({"move": 30, "on_timeout": "pause"}, "clock.on_timeout", {}),
    ({"move": 30, "bank": 300}, "clock", {}),
    # a variant with no timeout rule: the clock could only ever hand a seat to a bot, never the last person's
    ({"move": 30}, "clock.on_timeout", {"variant": "block", "players": 2}),
    ({"move": 30, "on_timeout": "rule"}, "clock.on_timeout", {"variant": "osel", "players": 4}),
    ({"move": 30, "on_timeout": "autopilot"}, "clock", {"variant": "block", "players": 2, "seats": ONE_PERSON}),
])
def test_a_clock_out_of_range_opens_no_table(tables_gw: Gateway, clock: Json, field: str, table: Json) -> None:
    before = ok(call(tables_gw, "GET", "/v1/tables?limit=100"))
    reply = call(tables_gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "public": True,
                                                   "clock": clock, **table})
    problem(reply, 400, "malformed")
    assert reply.json["field"] == field, reply.json
    assert ok(call(tables_gw, "GET", "/v1/tables?limit=100")) == before


def test_only_the_variants_with_a_timeout_rule_take_a_clock_that_applies_it(tables_gw: Gateway) -> None:
    """`timeout_rule` in the variant list: Kozel's formula and Kingdomino's forfeit; elsewhere a clock hands
    the seat to a bot (two seats for people at least), and `rule` is refused naming the variant."""
    listed = {v["name"]: v["timeout_rule"] for v in ok(call(tables_gw, "GET", "/v1/variants"))["variants"]}
    assert {name for name, rule in listed.items() if rule} == {"kozel", "kozel-classic", "kingdomino"}
    assert len(listed) == 10
    refused = call(tables_gw, "POST", "/v1/tables", {"variant": "block", "players": 2, "clock": {"move": 30}})
    problem(refused, 400, "malformed")
    assert "block has no timeout rule" in refused.json["detail"] and "autopilot" in refused.json["detail"]
    for body in ({"variant": "block", "players": 2, "clock": {"move": 30, "on_timeout": "autopilot"}},
                 {"variant": "kingdomino", "players": 2, "clock": {"move": 30}},
                 {"variant": "kozel-classic", "players": 2, "seats": ONE_PERSON, "clock": {"move": 30}}):
        assert ok(call(tables_gw, "POST", "/v1/tables", body), 201)["table"]["clock"]["move"] == 30


def test_a_table_says_its_clock(tables_gw: Gateway, tmp_path: Path) -> None:
    opened = ok(call(tables_gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                                        "clock": {"bank": 300, "increment": 5}}), 201)
    assert opened["table"]["clock"] == {"bank": 300.0, "increment": 5.0, "on_timeout": "rule"}
    plain = ok(call(tables_gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2}), 201)
    assert plain["table"]["clock"] is None


def test_a_clock_this_gateway_cannot_apply_does_not_stop_the_clocks_due_after_it(
        engine_proc: EngineProc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Two gateways on one store with different token keys (as after a key dropped too soon): the first
    clock to run out is one whose token the second gateway cannot open. The second gateway's pass says so
    and still applies its own match's timeout, due after it; the first gateway applies the other."""
    from api_gateway.app import TIMEOUTS, create_app
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.tokens import KeyRing

    monkeypatch.setattr(Keeper, "start", lambda self: None)  # the keeper's passes are this test's calls
    env = {**gateway_env(tmp_path), "GATEWAY_ENGINE": engine_proc.address}
    apps = [create_app(from_env(env)), create_app(from_env({**env, "STATE_TOKEN_KEYS": KeyRing.generate("other")}))]
    tables = []
    for app in apps:  # the first gateway's match first: its clock runs out first
        gw = cast(Gateway, InProcess(app))
        table = open_table(gw, [{"kind": "open"}] + [{"kind": "bot", "level": "random"}] * 3, clock={"move": MOVE})
        assert latest(gw, table, 0)["turn"] == 0  # the person's clock runs (the bot moved at once if first)
        tables.append((gw, table))
    time.sleep(MOVE + 0.2)

    first, second = (app.extensions[TIMEOUTS] for app in apps)
    with caplog.at_level("WARNING", logger="api_gateway.hosting.timeouts"):
        assert second.expire_due() == 1
    assert any("cannot be opened" in r.getMessage() and tables[0][1].match_id in r.getMessage()
               for r in caplog.records)
    gw, table = tables[1]
    assert latest(gw, table, 0)["over"]  # the second gateway's own match: timed out
    assert first.expire_due() == 1
    gw, table = tables[0]
    assert latest(gw, table, 0)["over"]
