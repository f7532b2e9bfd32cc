"""The player's inbox (issue 38, docs/tables.md "The inbox"), against real gunicorn gateways: two players
the host app vouches for and a guest at several tables (waiting, playing, one finished, one left); each
inbox lists exactly that person's live games, with the turn, the clocks and the moves they have not seen,
on one gateway and across two gateways on one Redis.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from .conftest import (
    PLAYER_KEYS,
    EngineProc,
    Gateway,
    gateway_env,
    gateways_on_one_redis,
    launch_gateway,
    player_assertion,
    wait_for,
)
from .test_tables import call, ok, seat_stream

pytestmark = pytest.mark.service

Json = dict[str, Any]
ACTIONS = {"played", "drew", "passed", "tile_placed", "tile_picked", "tile_discarded"}


@pytest.fixture(scope="module")
def keyed(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("inbox"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


@dataclass
class Seated:
    table_id: str
    seat: int
    credential: str
    match_id: str | None


def open_private(gw: Gateway, players: int = 2, bots: int = 0, **extra: Any) -> tuple[str, list[str]]:
    seats = [{"kind": "open"}] * (players - bots) + [{"kind": "bot", "level": "greedy"}] * bots
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": players, "seats": seats, **extra}), 201)
    return opened["table_id"], [i["code"] for i in opened["invites"]]


def join(gw: Gateway, table_id: str, invite: str, who: str | None, name: str) -> Seated:
    body: Json = {"invite": invite, "name": name}
    if who is not None:
        body["player"] = player_assertion(who)
    joined = ok(call(gw, "POST", f"/v1/tables/{table_id}/join", body))
    return Seated(table_id, joined["seat"], joined["credential"], joined["match_id"])


def inbox(gw: Gateway, who: str) -> Json:
    return ok(gw.get("/v1/inbox", headers={"Authorization": f"Bearer {player_assertion(who)}"}))


def guest_inbox(gw: Gateway, credentials: list[str]) -> Json:
    return ok(call(gw, "POST", "/v1/inbox", {"credentials": credentials}))


def move(gw: Gateway, seated: Seated) -> Json:
    """The seat plays its first legal action (it must be its turn)."""
    legal = ok(call(gw, "GET", f"/v1/matches/{seated.match_id}/legal", credential=seated.credential))
    assert legal["actions"], legal
    return ok(call(gw, "POST", f"/v1/matches/{seated.match_id}/apply", {"action": legal["actions"][0]},
                   credential=seated.credential))


def latest(gw: Gateway, seated: Seated) -> Json:
    return ok(call(gw, "GET", f"/v1/matches/{seated.match_id}/seat", credential=seated.credential))


def moves_since_own(gw: Gateway, seated: Seated, seq: int) -> int:
    """What the seat has not seen, counted from its own stream (every update up to `seq`): the other seats'
    moves since its own last one (the seat must have moved: its stream's updates start after the deal)."""
    stream = seat_stream(gw, seated.match_id or "", seated.credential, last=0)
    try:
        events = [e for e in stream.until(lambda e: e.id is not None and e.id >= seq) if e.kind == "update"]
    finally:
        stream.close()
    count = 0
    for e in events:
        for event in e.data.get("events") or ():
            if event.get("type") in ACTIONS:
                count = 0 if event.get("seat") == seated.seat else count + 1
    return count


def by_table(found: Json) -> dict[str, Json]:
    games = {g["table_id"]: g for g in found["games"]}
    assert len(games) == len(found["games"]), "a game listed twice"
    return games


def play_until_turn(gw: Gateway, seats: list[Seated], want: int, most: int = 40) -> None:
    """People's moves (each at its turn; a draw keeps it) until a seat other than `want` made one and it is `want`'s turn."""
    for _ in range(most):
        now = latest(gw, seats[0])
        turn = now["turn"]
        if turn is None:
            ok(call(gw, "POST", f"/v1/matches/{seats[0].match_id}/next-round", {}, credential=seats[0].credential))
            continue
        mover = next(s for s in seats if s.seat == turn)
        move(gw, mover)
        if latest(gw, seats[0])["turn"] == want and mover.seat != want:
            return
    raise AssertionError("the turn never came")


def test_each_person_sees_exactly_their_live_games(keyed: Gateway) -> None:
    gw = keyed
    anna, boris = "anna-" + _tag(), "boris-" + _tag()
    # 1. Anna and Boris play each other: a live match
    t1, inv = open_private(gw, name="Anna v Boris")
    a1, b1 = join(gw, t1, inv[0], anna, "Anna"), join(gw, t1, inv[1], boris, "Boris")
    assert b1.match_id is not None
    a1.match_id = b1.match_id
    # 2. Anna with a guest and two bots: live, the guest by its credential
    t2, inv = open_private(gw, players=4, bots=2)
    a2 = join(gw, t2, inv[0], anna, "Anna")
    g2 = join(gw, t2, inv[1], None, "Guest")
    a2.match_id = g2.match_id
    # 3. Boris waits for people
    t3, inv = open_private(gw)
    b3 = join(gw, t3, inv[0], boris, "Boris")
    # 4. Anna and Boris, a match that ended (Boris resigned): in neither inbox
    t4, inv = open_private(gw)
    a4, b4 = join(gw, t4, inv[0], anna, "Anna"), join(gw, t4, inv[1], boris, "Boris")
    ok(call(gw, "POST", f"/v1/matches/{b4.match_id}/resign", {}, credential=b4.credential))
    # 5. Anna took a seat and gave it up: not hers any more
    t5, inv = open_private(gw)
    a5 = join(gw, t5, inv[0], anna, "Anna")
    ok(call(gw, "POST", f"/v1/tables/{t5}/leave", {}, credential=a5.credential))
    # 6. Boris and the guest, with a correspondence clock: a day a move
    t6, inv = open_private(gw, clock={"move": 86400})
    b6, g6 = join(gw, t6, inv[0], boris, "Boris"), join(gw, t6, inv[1], None, "Guest")
    b6.match_id = g6.match_id

    # a few moves at table 1, each person at their turn, until it is Anna's turn after Boris's move
    play_until_turn(gw, [a1, b1], a1.seat)
    # at table 2 both people move once (the bots move in between): what each has not seen is after its move
    moved: set[int] = set()
    while moved != {a2.seat, g2.seat}:
        turn = latest(gw, a2)["turn"]
        mover = a2 if turn == a2.seat else g2
        assert turn == mover.seat, turn
        move(gw, mover)
        moved.add(mover.seat)

    mine = by_table(inbox(gw, anna))
    assert set(mine) == {t1, t2}, mine
    assert inbox(gw, anna)["player_id"] == f"app:{anna}"
    his = by_table(inbox(gw, boris))
    assert set(his) == {t1, t3, t6}, his
    theirs = guest_inbox(gw, [g2.credential, g6.credential])
    assert theirs["player_id"] is None and theirs["gone"] == []
    assert set(by_table(theirs)) == {t2, t6}

    # table 1 as each sees it: the turn, the version, the moves not seen
    now = latest(gw, a1)
    for seated, games in ((a1, mine), (b1, his)):
        game = games[t1]
        assert (game["seat"], game["match_id"], game["seq"], game["turn"]) == (seated.seat, a1.match_id, now["seq"],
                                                                               now["turn"])
        assert game["your_turn"] is (now["turn"] == seated.seat)
        assert game["status"] == "playing" and game["name"] == "Anna v Boris" and game["variant"] == "kozel"
        assert game["unread"] == moves_since_own(gw, seated, now["seq"]) and not game["unread_more"]
        assert [(s["name"], s["player"]) for s in game["seats"]] == [("Anna", f"app:{anna}"), ("Boris", f"app:{boris}")]
    assert mine[t1]["your_turn"] and mine[t1]["unread"] >= 1 and his[t1]["unread"] == 0
    for games in (mine, his):  # your turn first, then the latest active
        order = [(not g["your_turn"], -g["active"]) for g in games.values()]
        assert order == sorted(order), order
    # table 2: the guest's seat and Anna's see the same match, each its own unread
    seq2 = latest(gw, a2)["seq"]
    assert mine[t2]["unread"] == moves_since_own(gw, a2, seq2)
    assert by_table(theirs)[t2]["unread"] == moves_since_own(gw, g2, seq2) and by_table(theirs)[t2]["seat"] == g2.seat
    # table 3 waits for people; table 6 shows its clocks as the seat's view does
    assert his[t3]["status"] == "waiting" and his[t3]["match_id"] is None and his[t3]["turn"] is None
    view6 = latest(gw, b6)
    clocks = his[t6]["clocks"]
    assert clocks == view6["clocks"] and clocks["running"] == view6["turn"] and clocks["deadline"] > 0
    assert clocks["setting"]["move"] == 86400

    # Boris moves at table 1: Anna's unread grows; Boris's is nothing; the finished and the left stay out
    play_until_turn(gw, [a1, b1], b1.seat)
    now = latest(gw, a1)
    assert by_table(inbox(gw, anna))[t1]["unread"] == moves_since_own(gw, a1, now["seq"])
    assert by_table(inbox(gw, boris))[t1]["unread"] == moves_since_own(gw, b1, now["seq"])
    assert t4 not in by_table(inbox(gw, anna)) and a4.table_id == t4

    # Boris gives up his waiting seat: table 3 leaves his inbox at once
    ok(call(gw, "POST", f"/v1/tables/{t3}/leave", {}, credential=b3.credential))
    assert set(by_table(inbox(gw, boris))) == {t1, t6}


def test_a_guests_credentials_that_hold_no_seat_are_named_gone(keyed: Gateway) -> None:
    gw = keyed
    t, inv = open_private(gw)
    g = join(gw, t, inv[0], None, "Guest")
    left_table, inv2 = open_private(gw)
    left = join(gw, left_table, inv2[0], None, "Guest")
    ok(call(gw, "POST", f"/v1/tables/{left_table}/leave", {}, credential=left.credential))
    forged = g.credential[:-4] + "AAAA"
    unknown = "0" * 32 + ".0." + "x" * 32
    found = guest_inbox(gw, [left.credential, g.credential, forged, unknown, g.credential])
    assert found["gone"] == [0, 2, 3]
    assert [(x["table_id"], x["seat"], x["status"]) for x in found["games"]] == [(t, g.seat, "waiting")]


def problem(reply: Any, status: int, name: str) -> Json:
    assert reply.status == status, (reply.status, reply.body[:400])
    body: Json = orjson.loads(reply.body)
    assert body["type"] == f"/v1/problems/{name}", body
    return body


def test_no_inbox_without_proof_and_none_of_another_player(keyed: Gateway, engine_proc: EngineProc,
                                                           tmp_path: Path) -> None:
    gw = keyed
    missing = gw.get("/v1/inbox")
    problem(missing, 401, "player-required")
    assert missing.headers["www-authenticate"] == "Bearer" and missing.headers["cache-control"] == "no-store"
    problem(gw.get("/v1/inbox", headers={"Authorization": "Bearer not-a-jwt"}), 400, "invalid-player")
    problem(gw.get("/v1/inbox", headers={"Authorization": f"Basic {player_assertion('anna')}"}), 400,
            "invalid-player")
    # another host app's assertion (signed with a key this service does not hold) proves nobody
    import jwt  # noqa: PLC0415 - only this test signs with a foreign key

    foreign = jwt.encode({"sub": "anna", "iat": 1, "exp": 2**40}, b"f" * 32, algorithm="HS256", headers={"kid": "k1"})
    problem(gw.get("/v1/inbox", headers={"Authorization": f"Bearer {foreign}"}), 400, "invalid-player")
    # a guest's list: credentials only, in their shape, at most 50
    table, inv = open_private(gw)
    host_key_like = f"{table}.host.{'x' * 32}"
    bad = problem(call(gw, "POST", "/v1/inbox", {"credentials": ["hello"]}), 422, "validation-error")
    assert bad["field"] == "credentials[0]"
    problem(call(gw, "POST", "/v1/inbox", {"credentials": [host_key_like]}), 422, "validation-error")
    problem(call(gw, "POST", "/v1/inbox", {"credentials": []}), 422, "validation-error")
    seated = join(gw, table, inv[0], None, "G")
    many = problem(call(gw, "POST", "/v1/inbox", {"credentials": [seated.credential] * 51}), 422, "validation-error")
    assert many["field"] == "credentials"
    problem(call(gw, "POST", "/v1/inbox", {"credential": seated.credential}), 422, "validation-error")
    # a gateway that keeps no host app key vouches for nobody
    plain = launch_gateway(engine_proc.address, env=gateway_env(tmp_path))
    try:
        problem(plain.get("/v1/inbox", headers={"Authorization": f"Bearer {player_assertion('anna')}"}), 400,
                "invalid-player")
    finally:
        plain.stop()


def test_two_gateways_on_one_redis_show_the_same_inbox(engine_proc: EngineProc, tmp_path: Path) -> None:
    anna, boris = "anna-" + _tag(), "boris-" + _tag()
    with gateways_on_one_redis(engine_proc, tmp_path, 1, GATEWAY_PLAYER_KEYS=PLAYER_KEYS) as (a, b):
        table, inv = open_private(a, clock={"move": 3600})
        anna_seat = join(a, table, inv[0], anna, "Anna")
        assert set(by_table(inbox(b, anna))) == {table}  # a seat taken on one gateway, listed by the other
        boris_seat = join(b, table, inv[1], boris, "Boris")
        anna_seat.match_id = boris_seat.match_id
        play_until_turn(b, [anna_seat, boris_seat], boris_seat.seat)
        seen_a, seen_b = by_table(inbox(a, boris))[table], by_table(inbox(b, boris))[table]
        assert seen_a == seen_b and seen_a["your_turn"] and seen_a["unread"] >= 1
        assert seen_a["clocks"]["running"] == boris_seat.seat
        ok(call(a, "POST", f"/v1/matches/{boris_seat.match_id}/resign", {}, credential=boris_seat.credential))
        assert inbox(b, anna)["games"] == [] and inbox(a, boris)["games"] == []


def _tag() -> str:
    import secrets  # noqa: PLC0415

    return secrets.token_hex(4)


def test_the_sdk_lists_a_persons_games_and_resumes_a_kept_seat(keyed: Gateway) -> None:
    from clients.sdk import RestClient
    from clients.sdk.errors import InvalidPlayer, PlayerRequired

    api = RestClient(keyed.url)
    anna = "anna-" + _tag()
    opened = api.create_table("kozel", 2, name="SDK inbox", clock={"move": 86400})
    mine = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna", player=player_assertion(anna))
    guest = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Guest")
    lone = api.create_table("kozel", 2)
    waiting = api.join_table(lone.table_id, invite=lone.invites[0].code, name="Guest")
    left = api.join_table(lone.table_id, invite=lone.invites[1].code, name="Guest")
    left.leave()

    hers = api.inbox(player=player_assertion(anna))
    assert hers.player_id == f"app:{anna}" and [(g.table_id, g.seat) for g in hers.games] == [(opened.table_id, 0)]
    game = hers.games[0]
    assert game.name == "SDK inbox" and game.status == "playing" and game.match_id == mine.wait_for_match()
    assert game.clocks is not None and game.time_left() is not None and game.credential is None
    with pytest.raises(LookupError):
        hers.resume(game)  # found by the assertion: its credential is on the device that joined

    theirs = api.inbox(credentials=[guest.credential, waiting.credential, left.credential])
    assert theirs.player_id is None and theirs.gone == [left.credential]
    assert {(g.table_id, g.seat, g.status) for g in theirs.games} == {(opened.table_id, 1, "playing"),
                                                                       (lone.table_id, 0, "waiting")}
    at_table = next(g for g in theirs.games if g.table_id == opened.table_id)
    resumed = theirs.resume(at_table)
    assert resumed.credential == guest.credential and resumed.view()["seat"] == 1
    assert at_table.your_turn is (resumed.view()["turn"] == 1)
    assert "credential" not in repr(theirs) and guest.credential not in repr(theirs)
    with pytest.raises(PlayerRequired):
        api.inbox()
    # what Anna was told while away: the deal of her table, in her notification feed, then nothing after it
    told = wait_for(lambda: [n for n in api.notifications(player_assertion(anna)).items if n.type == "table-dealt"])
    assert told[0].table_id == opened.table_id and told[0].seat == 0
    page = api.notifications(player_assertion(anna))
    assert page.player_id == f"app:{anna}" and page.next == page.items[-1].id
    assert api.notifications(player_assertion(anna), after=page.next).items == []
    with pytest.raises(InvalidPlayer):
        api.inbox(player="not-an-assertion")


def test_the_terminal_lists_the_kept_seats_games_and_resumes_one(keyed: Gateway, tmp_path: Path) -> None:
    import pexpect

    from clients.sdk import RestClient
    from clients.sdk.seat_book import SavedSeat, SeatBook

    from .test_play_join import spawn_play

    api = RestClient(keyed.url)
    opened = api.create_table("kozel", 2, name="Terminal inbox", clock={"move": 86400})
    kept = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Tess")
    other = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    lone = api.create_table("kozel", 2)
    gone = api.join_table(lone.table_id, invite=lone.invites[0].code, name="Tess")
    gone.leave()
    book = SeatBook(tmp_path / "domino" / "seats.json")
    book.save(SavedSeat(opened.table_id, kept.seat or 0, kept.credential, [keyed.url], "Tess", "kozel"))
    book.save(SavedSeat(lone.table_id, 0, gone.credential, [keyed.url], "Tess", "kozel"))

    child = spawn_play("--inbox", state=tmp_path)
    child.expect(r"Forgot 1 kept seat: no longer held")
    child.expect(r"Your live games \(1\):")
    turn = "your turn" if kept.view()["turn"] == kept.seat else "Boris to move"
    child.expect(rf'1\. "Terminal inbox": kozel, 2 players; seat 0; {turn}.*left')
    child.expect("Resume which game")
    child.sendline("7")
    child.expect("No game 7")
    child.sendline("1")
    child.expect('Back at seat 0 of table "Terminal inbox"')
    child.close(force=True)
    assert [s.table_id for s in book.all()] == [opened.table_id]
    assert other.view()["seat"] == 1

    anna = "anna-" + _tag()
    hers = api.create_table("kozel", 2, name="Anna's")
    api.join_table(hers.table_id, invite=hers.invites[0].code, name="Anna", player=player_assertion(anna))
    boris = api.join_table(hers.table_id, invite=hers.invites[1].code, name="Boris")
    wait_for(lambda: api.notifications(player_assertion(anna)).items)  # the deal, told to Anna
    turn = "your turn" if boris.view()["turn"] == 0 else "Boris to move"
    env = {"DOMINO_PLAYER": player_assertion(anna)}
    child = spawn_play("--inbox", "--url", keyed.url, state=tmp_path / "empty", env_extra=env)
    child.expect(r"While you were away \(\d+ new\):")
    child.expect(rf"  table-dealt: {hers.table_id[:8]}")
    child.expect(r"Your live games \(1\):")
    child.expect(rf'1\. "Anna\'s": kozel, 2 players; seat 0; {turn}; joined on another device')
    child.sendline("1")
    child.expect("taken on another device: resume it there")
    child.sendline("")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    again = spawn_play("--inbox", "--url", keyed.url, state=tmp_path / "empty", env_extra=env)
    again.expect(r"Your live games \(1\):")      # told once: the feed's cursor is kept
    assert "While you were away" not in (again.before or "")
    again.sendline("")
    again.expect(pexpect.EOF)
