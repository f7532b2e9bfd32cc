"""The archive end to end over REST: a sealed match played through /v1/matches (people and bots), its full
record fetched with the host key, archived through `Archive.finish` (the entry point the tables call
when a match ends), then read back through the gateway: the player, the leaderboard, the match list,
the archived record; and every refusal as problem+json (unknown player 404, bad cursor 400, the
database down 503 with Retry-After)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from gateway.conftest import TOKEN_KEYS, EngineProc, Gateway, launch_gateway, start_engine
from marshmallow import Schema

from api_gateway.archive import database
from api_gateway.archive.outbox import SqliteOutbox
from api_gateway.archive.repository import Repository
from api_gateway.archive.schemas import (
    ArchivedMatchSchema,
    LeaderboardSchema,
    PlayerMatchesSchema,
    PlayerSchema,
)
from api_gateway.archive.service import Archive
from archive.helpers import PostgresServer, engine_record, played

pytestmark = pytest.mark.service

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def engine() -> Iterator[EngineProc]:
    found = start_engine()
    yield found
    found.stop()


def gateway_on(engine: EngineProc, url: str, store: Path, workers: int = 1, **env: str) -> Gateway:
    return launch_gateway(engine.address, "--workers", str(workers), env={
        "STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_DATABASE": url, "GATEWAY_TOKEN_STORE": f"sqlite:///{store}",
        "GATEWAY_RETRY_AFTER": "3", **env})


@pytest.fixture(scope="module")
def archive_url(postgres: PostgresServer) -> str:
    url = postgres.new_database()
    engine = database.create(url)
    database.upgrade(engine)   # the operator's migration Job (a PostgreSQL archive is not upgraded by the gateway)
    engine.dispose()
    return url


@pytest.fixture(scope="module")
def gateway(engine: EngineProc, archive_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = gateway_on(engine, archive_url, tmp_path_factory.mktemp("live") / "live.sqlite3", workers=2)
    yield gw
    gw.stop()


def families_of(gw: Gateway) -> dict[str, str]:
    return {v["name"]: v["family"] for v in gw.get("/v1/variants").json["variants"]}


@pytest.fixture(scope="module")
def archive(gateway: Gateway, archive_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """The archive as a gateway worker holds it (same database; its outbox a file of its own)."""
    names = families_of(gateway)
    found = Archive(Repository(database.create(archive_url)),
                    SqliteOutbox(f"sqlite:///{tmp_path_factory.mktemp('outbox') / 'live.sqlite3'}"), names.__getitem__)
    yield found
    found.close()


def loads(schema: Schema, body: Any) -> Any:
    schema.load(body)   # unknown keys refused: the answer is exactly what the schema documents
    return body


def play_sealed(gw: Gateway, variant: str, players: int, bots: dict[int, str]) -> tuple[str, str, str]:
    """A sealed match played to its end through REST: the people's seats move by the engine's `suggest`
    (greedy), the bots' inside the engine. Answers the match id, the last token and the host key."""
    created = gw.post("/v1/matches", {"variant": variant, "players": players, "mode": "sealed",
                                      "bots": [{"seat": s, "level": lv} for s, lv in bots.items()]})
    assert created.status == 201, created.json
    answer = created.json
    token, keys, host = answer["token"], answer["seat_keys"], answer["host_key"]
    for _ in range(3000):
        view = answer["view"]
        if view["match_over"]:
            return answer["match_id"], token, host
        if view["round_over"]:
            reply = gw.post("/v1/matches/next-round", {"token": token, "seat_key": host})
        else:
            key = keys[view["to_move"]]
            move = gw.post("/v1/matches/suggest", {"token": token, "seat_key": key, "level": "greedy"})
            assert move.status == 200, move.json
            reply = gw.post("/v1/matches/apply", {"token": token, "seat_key": key, "action": move.json["action"]})
        assert reply.status == 200, reply.json
        answer = {**reply.json, "match_id": answer["match_id"]}
        token = answer["token"]
        if "view" not in answer:  # next-round and apply answer the caller's view
            answer["view"] = gw.post("/v1/matches/view", {"token": token, "seat_key": host}).json["view"]
    raise AssertionError("the match did not end")


def test_a_sealed_match_played_over_rest_is_archived_and_read_back(gateway: Gateway, archive: Archive) -> None:
    match_id, token, host = play_sealed(gateway, "kozel", 4, {1: "random", 3: "random"})
    exported = gateway.post("/v1/matches/record", {"token": token, "seat_key": host})
    assert exported.status == 200 and exported.json["record"]["view"] == "full"
    seats = ["app:alice", None, "app:bob", None]
    assert archive.finish(match_id, seats, exported.body) == "recorded"
    assert archive.finish(match_id, seats, exported.body) == "duplicate"

    kept = gateway.get(f"/v1/matches/{match_id}/record")
    assert kept.status == 200, kept.json
    loads(ArchivedMatchSchema(), kept.json)
    assert kept.json["record"] == exported.json["record"] and kept.json["text"] == exported.json["text"]
    result = exported.json["record"]["result"]
    assert kept.json["result"] == result and kept.json["rated"] is True
    for player, seat in (("app:alice", 0), ("app:bob", 2)):
        doc = gateway.get(f"/v1/players/{quote(player)}")
        assert doc.status == 200
        loads(PlayerSchema(), doc.json)
        (k,) = doc.json["ratings"]
        assert (k["family"], k["matches"], k["rated"], k["points"]) == ("K", 1, 1, result["rating"][seat])
        assert k["skill"] == kept.json["seats"][seat]["skill_after"]
        assert doc.json["recent"][0]["match_id"] == match_id and doc.json["recent"][0]["seat"] == seat
        listing = gateway.get(f"/v1/players/{player}/matches")
        loads(PlayerMatchesSchema(), listing.json)
        assert [m["match_id"] for m in listing.json["items"]] == [match_id] and listing.json["next"] is None
    for variant in ("kozel", "kozel-classic"):   # one board per family
        board = gateway.get(f"/v1/leaderboard?variant={variant}&provisional=true")
        loads(LeaderboardSchema(), board.json)
        assert board.json["family"] == "K"
        listed = {e["player"]: e for e in board.json["items"]}
        assert listed.keys() >= {"app:alice", "app:bob"} and listed["app:alice"]["provisional"]
        # one rated match: provisional, so not on the board of established players
        established = gateway.get(f"/v1/leaderboard?variant={variant}").json["items"]
        assert not {e["player"] for e in established} & {"app:alice", "app:bob"}


def test_the_archived_record_is_served_by_a_gateway_that_never_saw_the_live_match(
        gateway: Gateway, archive: Archive, engine: EngineProc, archive_url: str, tmp_path: Path) -> None:
    match_id, token, host = play_sealed(gateway, "block", 2, {1: "greedy"})
    exported = gateway.post("/v1/matches/record", {"token": token, "seat_key": host})
    assert archive.finish(match_id, ["app:carol", None], exported.body) == "recorded"
    other = gateway_on(engine, archive_url, tmp_path / "another-live-store.sqlite3")
    try:
        kept = other.get(f"/v1/matches/{match_id}/record")
        assert kept.status == 200 and kept.json["record"] == exported.json["record"]
        assert other.post("/v1/matches/view", {"token": token, "seat_key": host}).status == 410  # live: gone here
    finally:
        other.stop()


def test_the_leaderboard_and_a_players_matches_page_by_cursor(gateway: Gateway, archive: Archive) -> None:
    people = [f"app:page{i}" for i in range(5)]
    for i in range(6):
        seats = [people[(i + j) % 5] for j in range(3)]
        assert archive.finish(f"page-{i}", seats, engine_record(played("osel", 3, seed=300 + i))) == "recorded"
    seen: list[dict[str, Any]] = []
    path = "/v1/leaderboard?variant=osel&limit=2&provisional=true"
    while True:
        page = gateway.get(path)
        assert page.status == 200, page.json
        seen += page.json["items"]
        if page.json["next"] is None:
            break
        path = f"/v1/leaderboard?variant=osel&limit=2&provisional=true&cursor={page.json['next']}"
    assert [e["rank"] for e in seen] == list(range(1, len(seen) + 1))
    assert {e["player"] for e in seen} == set(people)
    ordinals = [e["skill"]["ordinal"] for e in seen]
    assert ordinals == sorted(ordinals, reverse=True)
    first = gateway.get(f"/v1/players/{people[0]}/matches?limit=2").json
    second = gateway.get(f"/v1/players/{people[0]}/matches?limit=2&cursor={first['next']}").json
    ids = [m["match_id"] for m in first["items"] + second["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids) >= 3


def problem(reply: Any, status: int, kind: str) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.body[:300])
    assert reply.content_type == PROBLEM
    body: dict[str, Any] = reply.json
    assert body["type"] == kind and body["status"] == status
    return body


def test_bad_input_is_a_clear_problem(gateway: Gateway, archive: Archive) -> None:
    archive.finish("bad-input", ["app:erin", "app:finn"], engine_record(played("block", 2, seed=4)))
    page = gateway.get("/v1/leaderboard?variant=block&limit=1&provisional=true").json
    assert page["next"] is not None
    matches_of = gateway.get("/v1/players/app:erin/matches?limit=1")  # a cursor of another list
    cases = [
        ("/v1/players/not-an-id", 404, "/v1/problems/unknown-player"),
        ("/v1/players/not-an-id/matches", 404, "/v1/problems/unknown-player"),
        ("/v1/matches/never-played/record", 404, "/v1/problems/not-archived"),
        ("/v1/leaderboard?variant=no-such-variant", 404, "/v1/problems/unknown-variant"),
        ("/v1/leaderboard?variant=block&cursor=garbage!", 400, "/v1/problems/bad-cursor"),
        (f"/v1/leaderboard?variant=osel&provisional=true&cursor={page['next']}", 400, "/v1/problems/bad-cursor"),
        (f"/v1/leaderboard?variant=block&cursor={page['next']}", 400, "/v1/problems/bad-cursor"),  # another board
        (f"/v1/leaderboard?variant=block&by=points&provisional=true&cursor={page['next']}", 400,
         "/v1/problems/bad-cursor"),
        (f"/v1/players/app:finn/matches?cursor={page['next']}", 400, "/v1/problems/bad-cursor"),
        ("/v1/leaderboard", 422, "/v1/problems/validation-error"),
        ("/v1/leaderboard?variant=block&limit=0", 422, "/v1/problems/validation-error"),
        ("/v1/leaderboard?variant=block&limit=101", 422, "/v1/problems/validation-error"),
        ("/v1/leaderboard?variant=block&by=luck", 422, "/v1/problems/validation-error"),
        ("/v1/leaderboard?variant=block&sort=x", 422, "/v1/problems/validation-error"),
    ]
    assert matches_of.status == 200
    for path, status, kind in cases:
        problem(gateway.get(path), status, kind)
    documented = gateway.get("/v1/problems/bad-cursor").json
    assert documented["status"] == 400


def test_the_routes_are_in_the_openapi_document_with_their_problems(gateway: Gateway) -> None:
    paths = gateway.get("/openapi.json").json["paths"]
    for path, codes in {"/v1/players/{player_id}": {"404", "503"},
                        "/v1/players/{player_id}/matches": {"400", "404", "422", "503"},
                        "/v1/leaderboard": {"400", "404", "422", "503"},
                        "/v1/matches/{match_id}/record": {"404", "503"}}.items():
        responses = paths[path]["get"]["responses"]
        assert codes | {"200"} <= set(responses), (path, sorted(responses))
        assert "Retry-After" in responses["503"]["headers"]


def test_the_database_down_answers_503_with_retry_after_and_then_answers_again(
        engine: EngineProc, own_postgres: PostgresServer, tmp_path: Path) -> None:
    url = own_postgres.new_database()
    migrate = database.create(url)
    database.upgrade(migrate)
    migrate.dispose()
    gw = gateway_on(engine, url, tmp_path / "live.sqlite3", GATEWAY_DATABASE_TIMEOUT="1")
    try:
        assert gw.get("/v1/players/app:zed").json["newcomer"]  # the database answers: a newcomer
        own_postgres.stop()
        for path in ("/v1/players/app:zed", "/v1/leaderboard?variant=kozel", "/v1/matches/x/record"):
            down = problem(gw.get(path), 503, "/v1/problems/archive-unavailable")
            assert gw.get(path).headers["retry-after"] == "3"
            assert str(own_postgres.port) not in str(down)   # the database's address is for the operator only
        own_postgres.start()
        assert gw.get("/v1/players/app:zed").json["newcomer"]
        assert gw.get("/v1/leaderboard?variant=kozel").status == 200
    finally:
        gw.stop()


def test_a_postgresql_archive_behind_the_code_answers_503_until_migrated(
        engine: EngineProc, postgres: PostgresServer, tmp_path: Path) -> None:
    url = postgres.new_database()
    gw = gateway_on(engine, url, tmp_path / "live.sqlite3")
    try:
        problem(gw.get("/v1/leaderboard?variant=kozel"), 503, "/v1/problems/archive-unavailable")
        assert "revision none" in gw.logs()
        migrate = database.create(url)
        database.upgrade(migrate)
        migrate.dispose()
        assert gw.get("/v1/leaderboard?variant=kozel").status == 200
    finally:
        gw.stop()


def test_an_embedded_archive_is_upgraded_by_the_gateway_at_start(engine: EngineProc, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'embedded.sqlite3'}"
    gw = gateway_on(engine, url, tmp_path / "live.sqlite3")
    try:
        assert gw.get("/v1/leaderboard?variant=kozel").json["items"] == []
    finally:
        gw.stop()
    check = database.create(url)
    assert database.current(check) == database.head()
    check.dispose()


def test_a_valid_player_id_the_archive_has_not_seen_is_a_newcomer(gateway: Gateway, archive: Archive) -> None:
    """A page looks up every new player's rating: a newcomer is an answer (no ratings yet), not a 404 that
    a browser logs as an error (issue 37)."""
    for player in ("app:nobody-yet", "guest:AAAAAAAAAAAAAAAAAAAAAA"):
        doc = gateway.get(f"/v1/players/{player}")
        assert doc.status == 200, doc.json
        loads(PlayerSchema(), doc.json)
        assert doc.json == {"id": player, "name": None, "created_at": None, "matches": 0, "ratings": [],
                            "recent": [], "newcomer": True}
        listing = gateway.get(f"/v1/players/{player}/matches")
        assert listing.status == 200 and listing.json == {"items": [], "next": None}
    archive.finish("newcomer-no-more", ["app:nobody-yet", "app:someone"], engine_record(played("block", 2, seed=9)))
    assert gateway.get("/v1/players/app:nobody-yet").json["newcomer"] is False


def test_a_player_is_provisional_until_five_rated_matches_and_then_on_the_board(gateway: Gateway,
                                                                                archive: Archive) -> None:
    """Ratings from a few matches say little: a player is provisional until 5 rated matches in the family,
    and the skill board lists established players (every rated one, marked, with `provisional=true`)."""
    regular, newcomer = "app:regular-5", "app:once-1"
    for i in range(5):
        opponent = newcomer if i == 0 else f"app:someone-{i}"
        archive.finish(f"provisional-{i}", [regular, opponent], engine_record(played("block", 2, seed=500 + i)))
    rating = next(r for r in gateway.get(f"/v1/players/{regular}").json["ratings"] if r["family"] == "BL")
    assert rating["rated"] == 5 and rating["provisional"] is False
    assert gateway.get(f"/v1/players/{newcomer}").json["ratings"][0]["provisional"] is True
    established = {e["player"] for e in gateway.get("/v1/leaderboard?variant=block&limit=100").json["items"]}
    everyone = {e["player"]: e["provisional"]
                for e in gateway.get("/v1/leaderboard?variant=block&limit=100&provisional=true").json["items"]}
    assert regular in established and newcomer not in established
    assert everyone[regular] is False and everyone[newcomer] is True
