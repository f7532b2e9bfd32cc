"""Quick play (issue 25; docs/tables.md "Quick play"), against a real gateway, engine and SQLite:
seekers meet at one table, a table opened by a seek fills with bots after the wait it names, a
seek the service cannot serve answers a problem and opens nothing, and a rated seeker is seated at the
waiting table whose opener's skill is nearest, the skills made by real archived matches."""
from __future__ import annotations

import base64
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from api_gateway.archive.players import PlayerKeys

from .conftest import EngineProc, Gateway, gateway_env, gateways_on_one_redis, launch_gateway
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


def test_quick_play_pairs_and_fills_past_more_public_tables_of_another_kind_than_a_page(
        engine_proc: EngineProc, tmp_path: Path) -> None:
    """120 newer public tables of another kind (4-player Kozel opened by hand; seek read only the newest 100
    of its variant's lobby, and the filler the newest 100 of all, so quick play found nobody and never
    filled): two seekers are still
    seated together, and a lone seeker's table still fills with bots after its wait."""
    gw = launch_gateway(engine_proc.address, "--workers", "2", env=gateway_env(tmp_path))
    try:
        anna = seek(gw, variant="kozel", players=2, name="Anna")
        clara = seek(gw, variant="kozel", players=3, name="Clara", bots_after=2, bots_level="random")
        for _ in range(120):
            ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "public": True}), 201)
        boris = seek(gw, variant="kozel", players=2, name="Boris")
        assert not boris["opened"] and boris["table_id"] == anna["table_id"] and boris["match_id"] is not None
        deadline = time.monotonic() + 20
        while ok(call(gw, "GET", f"/v1/tables/{clara['table_id']}"))["match_id"] is None:
            assert time.monotonic() < deadline, "the lone seeker's table was never filled"
            time.sleep(0.2)
    finally:
        gw.stop()


def test_a_seek_for_another_player_count_or_clock_opens_its_own_table(tables_gw: Gateway) -> None:
    a = seek(tables_gw, variant="block", players=2, name="A")
    b = seek(tables_gw, variant="block", players=3, name="B")
    c = seek(tables_gw, variant="block", players=2, name="C", clock={"move": 30, "on_timeout": "autopilot"})
    assert a["opened"] and b["opened"] and c["opened"]
    assert len({a["table_id"], b["table_id"], c["table_id"]}) == 3
    d = seek(tables_gw, variant="block", players=2, name="D", clock={"move": 30, "on_timeout": "autopilot"})
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


# ---------------------------------------------------------------- the nearest skill, from real archived matches

PLAYER_KEYS = "k1:" + base64.b64encode(b"seek-test-key-of-32-bytes-000000").decode()


@pytest.fixture(scope="module")
def rated_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway whose archive holds only this module's matches, and that takes the players' assertions."""
    gw = launch_gateway(engine_proc.address, "--workers", "1",
                        env=gateway_env(tmp_path_factory.mktemp("seek"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


def player(user: str) -> str:
    """The host app's signed assertion for its user (what a page or a phone would pass on)."""
    return PlayerKeys.parse(PLAYER_KEYS).sign(user, 3600)


def play_a_rated_match(gw: Gateway, winner: str, loser: str) -> str:
    """A real Kozel match between two players and two bots, ended by the loser conceding its own clock
    (the variant's timeout rule; a table's host may not time a seat out at will): the gateway archives it
    and rates both. Its match id."""
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "seats": [
        {"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "greedy"}]}), 201)
    joined = [ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                      {"invite": invite["code"], "name": user, "player": player(user)}))
              for invite, user in zip(opened["invites"], (winner, loser), strict=True)]
    assert [j["player_id"] for j in joined] == [f"app:{winner}", f"app:{loser}"]
    match_id = joined[-1]["match_id"]
    seat = ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=joined[1]["credential"]))
    ok(call(gw, "POST", "/v1/matches/timeout", {"token": seat["token"], "seat_key": seat["seat_key"]}))
    deadline = time.monotonic() + 15
    while (archived := call(gw, "GET", f"/v1/matches/{match_id}/record")).status == 404:
        assert time.monotonic() < deadline, "the match was not archived"
        time.sleep(0.1)
    record = ok(archived)
    assert record["rated"] and record["timed_out"] == 1
    return str(match_id)


def skill(gw: Gateway, user: str) -> float:
    """The player's skill ordinal in Kozel's family, as the archive has it (0: a newcomer)."""
    reply = call(gw, "GET", f"/v1/players/app:{user}")
    if reply.status == 404:
        return 0.0
    ratings = [r for r in ok(reply)["ratings"] if r["family"] == "K"]
    return float(ratings[0]["skill"]["ordinal"]) if ratings else 0.0


def test_a_seeker_is_seated_at_the_table_whose_openers_skill_is_nearest(rated_gw: Gateway) -> None:
    gw = rated_gw
    # Real matches make the skills differ: Anna and Dan each won one, Boris and Eve each lost one.
    play_a_rated_match(gw, "anna", "boris")
    play_a_rated_match(gw, "dan", "eve")
    # the dashboard's "ratings updated" panel counts each rated match once
    rated = re.search(r"^domino_gateway_archive_rated_matches_total (\S+)$", gw.metrics(), re.M)
    assert rated is not None and float(rated.group(1)) == 2.0
    skills = {user: skill(gw, user) for user in ("anna", "boris", "dan", "eve", "newcomer")}
    assert skills["anna"] > 0 > skills["boris"] and skills["dan"] > 0 > skills["eve"] and skills["newcomer"] == 0
    assert abs(skills["anna"] - skills["dan"]) < abs(skills["dan"] - skills["boris"])
    assert abs(skills["newcomer"] - skills["boris"]) < abs(skills["newcomer"] - skills["anna"])

    # Two quick-play tables wait at once: Anna's (the older) and Boris's. A seek joins the only waiting
    # table, so Anna's is filled by three guests first (out of the lobby), Boris opens his, and one guest
    # leaves Anna's (back in the lobby with one seat free).
    anna = seek(gw, variant="kozel", players=4, name="Anna", player=player("anna"))
    assert anna["opened"]
    guests = [seek(gw, variant="kozel", players=4, name=f"Guest {i}") for i in range(3)]
    assert {g["table_id"] for g in guests} == {anna["table_id"]} and guests[-1]["match_id"] is not None
    boris = seek(gw, variant="kozel", players=4, name="Boris", player=player("boris"))
    assert boris["opened"] and boris["table_id"] != anna["table_id"]
    ok(call(gw, "POST", f"/v1/tables/{anna['table_id']}/leave", {}, credential=guests[0]["credential"]))
    waiting = [t["table_id"] for t in ok(call(gw, "GET", "/v1/tables?variant=kozel"))["tables"]]
    assert sorted(waiting) == sorted([anna["table_id"], boris["table_id"]])

    # A newcomer (skill 0) is nearer Boris's skill than Anna's: seated at Boris's table, the newer one.
    newcomer = seek(gw, variant="kozel", players=4, name="New", player=player("newcomer"))
    assert not newcomer["opened"] and newcomer["table_id"] == boris["table_id"]
    # Dan, a winner like Anna, is nearer hers: seated at her table, though Boris's has seats free too.
    dan = seek(gw, variant="kozel", players=4, name="Dan", player=player("dan"))
    assert not dan["opened"] and dan["table_id"] == anna["table_id"] and dan["player_id"] == "app:dan"
    assert freeseats(gw, boris["table_id"]) == 2


def freeseats(gw: Gateway, table_id: str) -> int:
    table = ok(call(gw, "GET", f"/v1/tables/{table_id}"))
    return sum(1 for s in table["seats"] if s["kind"] == "open" and not s["taken"])


def test_tables_the_engine_cannot_deal_now_wait_for_the_next_pass(engine_proc: EngineProc, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Two gateways on one store, one of whose engine is down. The keeper's fill pass there tries every
    table whose wait is over, leaves each waiting with a warning (no traceback, the next table still
    tried), and the gateway whose engine answers fills them all on its pass."""
    from api_gateway.app import create_app
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.http.tables_routes import MATCHMAKING

    monkeypatch.setattr(Keeper, "start", lambda self: None)  # the passes are this test's calls
    env = gateway_env(tmp_path)
    up = create_app(from_env({**env, "GATEWAY_ENGINE": engine_proc.address}))
    down = create_app(from_env({**env, "GATEWAY_ENGINE": "127.0.0.1:9", "GATEWAY_ENGINE_TIMEOUT": "0.5"}))
    opened = []
    for players in (2, 3):
        reply = up.test_client().post("/v1/seek", json={"variant": "kozel", "players": players, "name": "Anna",
                                                          "bots_after": 1, "bots_level": "random"})
        assert reply.status_code == 200 and reply.get_json()["opened"], reply.get_json()
        opened.append(reply.get_json()["table_id"])
    time.sleep(1.1)

    with caplog.at_level("WARNING", logger="api_gateway.hosting.matchmaking"):
        assert down.extensions[MATCHMAKING].fill_due() == 0
    warned = [r for r in caplog.records if "not filled yet" in r.getMessage()]
    assert sorted(t for t in opened if any(t in r.getMessage() for r in warned)) == sorted(opened)
    assert all(r.exc_info is None for r in caplog.records)
    for table_id in opened:
        assert up.test_client().get(f"/v1/tables/{table_id}").get_json()["match_id"] is None

    assert up.extensions[MATCHMAKING].fill_due() == 2
    for table_id in opened:
        table = up.test_client().get(f"/v1/tables/{table_id}").get_json()
        assert table["match_id"] is not None and table["status"] == "playing"


def test_a_filler_pass_during_a_seek_waits_until_its_seeker_is_seated(engine_proc: EngineProc, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A seek with `bots_after` 0 opens its table due for bots at once, then seats its seeker and notes the
    seeker's host app for webhooks. A filler pass (another worker's keeper, woken by the table's writes)
    before the seat was taken asked the engine for a match of bots alone (refused: a warning, a retry a
    second later); one after the seat was taken but before the app was noted dealt unseen by the webhooks
    (CI lost a `table-dealt` so). Here a pass starts before the seat is taken: it waits for the seek key's
    turn, then fills the seat still free."""
    from api_gateway.app import create_app
    from api_gateway.config import from_env
    from api_gateway.hosting.keepers import Keeper
    from api_gateway.http.tables_routes import MATCHMAKING

    monkeypatch.setattr(Keeper, "start", lambda self: None)  # the pass is this test's call
    app = create_app(from_env({**gateway_env(tmp_path), "GATEWAY_ENGINE": engine_proc.address}))
    matchmaking = app.extensions[MATCHMAKING]
    tables, store = matchmaking.tables, matchmaking.tables.store
    refused, passed, filled = threading.Event(), threading.Event(), []
    lease = store.lease

    def noting(name: str, holder: bytes, seconds: float) -> bool:
        taken: bool = lease(name, holder, seconds)
        if not taken:
            refused.set()
        return taken

    def a_pass() -> None:
        filled.append(matchmaking.fill_due())
        passed.set()

    join = tables.join
    passes: list[threading.Thread] = []

    def join_after_a_pass_began(table_id: str, body: Json) -> Json:
        passes.append(threading.Thread(target=a_pass))
        passes[0].start()
        deadline = time.monotonic() + 30
        while not (refused.is_set() or passed.is_set()):  # it waits for the turn, or (before) it filled
            assert time.monotonic() < deadline, "the filler's pass neither waits nor ends"
            time.sleep(0.01)
        return join(table_id, body)

    monkeypatch.setattr(store, "lease", noting)
    monkeypatch.setattr(tables, "join", join_after_a_pass_began)
    reply = app.test_client().post("/v1/seek", json={"variant": "kozel", "players": 2, "name": "Anna",
                                                      "bots_after": 0, "bots_level": "random"})
    assert reply.status_code == 200, reply.get_json()
    seeker = reply.get_json()
    assert seeker["opened"] and seeker["seat"] == 0
    passes[0].join(30)
    assert filled == [1]
    table = app.test_client().get(f"/v1/tables/{seeker['table_id']}").get_json()
    assert table["match_id"] is not None and [s["kind"] for s in table["seats"]] == ["open", "bot"]
    assert table["seats"][0]["taken"] and table["seats"][0]["name"] == "Anna"


@pytest.mark.parametrize(("players", "tables"), [(2, 6), (4, 3)])
def test_twelve_people_seeking_at_one_instant_make_full_tables(engine_proc: EngineProc, tmp_path: Path,
                                                               players: int, tables: int) -> None:
    """Twelve people seek the same quick play at the same instant, half through each of two gateways on one
    Redis: they take turns (a lease per seek key), so they fill tables rather than each opening one (8 of
    12 ended alone at tables of their own)."""
    with gateways_on_one_redis(engine_proc, tmp_path, workers=2) as gws:
        start = threading.Barrier(12)

        def seeker(i: int) -> Json:
            start.wait()
            return seek(gws[i % 2], variant="block", players=players, name=f"P{i}")

        with ThreadPoolExecutor(12) as pool:
            seated = list(pool.map(seeker, range(12)))
        by_table: dict[str, list[Json]] = {}
        for s in seated:
            by_table.setdefault(s["table_id"], []).append(s)
        assert len(by_table) == tables, {t: len(s) for t, s in by_table.items()}
        for table_id, people in by_table.items():
            assert sorted(p["seat"] for p in people) == list(range(players))
            assert ok(call(gws[0], "GET", f"/v1/tables/{table_id}"))["status"] == "playing"
