"""The archive on a real SQLite file and a real PostgreSQL database: migrations, the exactly-once write
of a finished match with its rating updates, ratings over matches, tournaments, and the reads."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from api_gateway.archive import database
from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.outbox import SqliteOutbox
from api_gateway.archive.repository import NotArchived, Repository, UnknownPlayer
from api_gateway.archive.results import InvalidFinish
from api_gateway.archive.schema import match_seats, matches, metadata, ratings
from api_gateway.archive.schemas import ArchivedMatchSchema, LeaderboardSchema, PlayerSchema
from api_gateway.archive.service import Archive
from archive.helpers import engine_record, families, played

ALICE, BOB, CAROL, DAN = "app:alice", "app:bob", "app:carol", "app:dan"


@pytest.fixture
def archive(database_url: str, tmp_path: Path) -> Iterator[Archive]:
    found = Archive(Repository(database.create(database_url)), SqliteOutbox(f"sqlite:///{tmp_path / 'live.sqlite3'}"),
                    families)
    yield found
    found.close()


def rating(archive: Archive, player: str, family: str) -> dict[str, Any]:
    (found,) = [r for r in archive.player(player)["ratings"] if r["family"] == family]
    return found


# ------------------------------------------------------------------ migrations


def test_the_migrations_make_exactly_the_tables_the_code_describes(database_url: str) -> None:
    engine = database.create(database_url)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    assert database.current(engine) == database.head()
    database.check_schema(engine)
    database.upgrade(engine)  # at head already: nothing to do
    database.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    with pytest.raises(ArchiveUnavailable, match="revision none"):
        database.check_schema(engine)
    database.upgrade(engine)
    assert database.current(engine) == database.head()
    engine.dispose()


def test_a_database_not_migrated_answers_unavailable_naming_the_revision(backend: str, tmp_path: Path,
                                                                       request: pytest.FixtureRequest) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}" if backend == "sqlite" else \
        request.getfixturevalue("postgres").new_database()
    found = Archive(Repository(database.create(url)), SqliteOutbox(f"sqlite:///{tmp_path / 'live.sqlite3'}"), families)
    with pytest.raises(ArchiveUnavailable, match=f"needs {database.head()}"):
        found.player(ALICE)
    found.close()


# ------------------------------------------------------------------ a finished match


def test_a_finished_match_is_archived_once_with_its_ratings(archive: Archive) -> None:
    match = played("kozel", 4, seed=11)
    answer = engine_record(match, names=["Alice", "Bob", "Carol", "Dan"])
    seats = [ALICE, BOB, CAROL, DAN]
    assert archive.finish("m1", seats, answer) == "recorded"
    assert archive.finish("m1", seats, answer) == "duplicate"
    assert archive.repository.count(matches) == 1 and archive.repository.count(match_seats) == 4

    kept = archive.archived("m1")
    ArchivedMatchSchema().load(kept)
    assert kept["record"] == answer["record"] and kept["text"] == answer["text"]
    assert kept["result"] == answer["record"]["result"] and kept["variant"] == "kozel" and kept["family"] == "K"
    goat = answer["record"]["result"]["losers"]
    for seat in kept["seats"]:
        assert seat["player"] == seats[seat["seat"]] and seat["name"] == ["Alice", "Bob", "Carol", "Dan"][seat["seat"]]
        assert seat["points"] == match.rating[seat["seat"]]          # the engine's rating points
        assert seat["skill_before"] == {"mu": 25.0, "sigma": pytest.approx(25 / 3), "ordinal": pytest.approx(0)}
        if seat["seat"] in goat:
            assert seat["place"] == 4 and seat["skill_after"]["mu"] < 25
        else:
            assert seat["place"] < 4 and seat["skill_after"]["sigma"] < 25 / 3
    for seat, player in enumerate(seats):
        r = rating(archive, player, "K")
        assert (r["matches"], r["rated"], r["points"]) == (1, 1, match.rating[seat])
        assert r["skill"]["mu"] == kept["seats"][seat]["skill_after"]["mu"]
    doc = archive.player(ALICE)
    PlayerSchema().load(doc)
    assert doc["name"] == "Alice" and doc["matches"] == 1 and doc["recent"][0]["match_id"] == "m1"


def test_ratings_accumulate_over_matches_and_the_leaderboard_pages(archive: Archive) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    seats = [ALICE, BOB, CAROL, DAN]
    points = {p: 0 for p in seats}
    for i in range(6):
        match = played("kozel", 4, seed=100 + i)
        rotated = seats[i % 4:] + seats[:i % 4]
        assert archive.finish(f"k{i}", rotated, engine_record(match), start + timedelta(minutes=i)) == "recorded"
        for seat, player in enumerate(rotated):
            points[player] += match.rating[seat]
    for player in seats:
        r = rating(archive, player, "K")
        assert (r["matches"], r["rated"], r["points"]) == (6, 6, points[player])
        assert r["skill"]["sigma"] < 25 / 3
    board = archive.leaderboard("K", "skill", None, 0, 3)
    LeaderboardSchema().load({"variant": "kozel", "family": "K", "by": "skill", "items": board.items, "next": None})
    rest = archive.leaderboard("K", "skill", board.last, 3, 3)
    ranked = board.items + rest.items
    assert [e["rank"] for e in ranked] == [1, 2, 3, 4] and rest.last is None
    ordinals = [e["skill"]["ordinal"] for e in ranked]
    assert ordinals == sorted(ordinals, reverse=True) and {e["player"] for e in ranked} == set(seats)
    by_points = archive.leaderboard("K", "points", None, 0, 10).items
    assert [e["points"] for e in by_points] == sorted(points.values(), reverse=True)
    assert archive.leaderboard("O", "skill", None, 0, 10).items == []
    # a player's matches, newest first, two to a page
    page = archive.player_matches(ALICE, None, 4)
    assert [m["match_id"] for m in page.items] == ["k5", "k4", "k3", "k2"]
    last = archive.player_matches(ALICE, page.last[0] if page.last else None, 4)
    assert [m["match_id"] for m in last.items] == ["k1", "k0"] and last.last is None


def test_the_source_rating_points_of_the_worked_examples_reach_the_players(archive: Archive) -> None:
    """K Rating (seed 001): 25 points -> 8; a timeout at 32 gives 30 -> 1 and 13 -> 2, the seat that
    timed out 0. The engine computes them; the archive adds them to each player's points."""
    from engine_service.rules import Match

    won, _ = Match.new("kozel", 2, setup={"written": [25, 100]}, no_deal=True)
    won.settle("out", [[], ["0-1"]])
    assert archive.finish("w25", [ALICE, BOB], engine_record(won)) == "recorded"
    assert rating(archive, ALICE, "K")["points"] == 8 and rating(archive, BOB, "K")["points"] == 0

    timed, _ = Match.new("kozel", 3, setup={"written": [30, 32, 13]}, no_deal=True)
    timed.timeout(1)
    assert archive.finish("t32", [CAROL, DAN, ALICE], engine_record(timed)) == "recorded"
    kept = archive.archived("t32")
    assert kept["timed_out"] == 1
    assert [s["points"] for s in kept["seats"]] == [1, 0, 2]
    assert [s["place"] for s in kept["seats"]] == [2, 3, 1]   # the seat that timed out last
    assert rating(archive, CAROL, "K")["points"] == 1 and rating(archive, DAN, "K")["points"] == 0
    assert rating(archive, ALICE, "K")["points"] == 8 + 2


def test_partners_rate_as_a_team_and_bot_seats_are_not_players(archive: Archive) -> None:
    match = played("osel", 4, seed=5, options={"teams": True})
    answer = engine_record(match)
    result = answer["record"]["result"]
    assert len(result["scores"]) == 2
    assert archive.finish("team", [ALICE, BOB, CAROL, None], answer) == "recorded"
    kept = archive.archived("team")
    assert [s["side"] for s in kept["seats"]] == [0, 1, 0, 1]
    assert kept["seats"][0]["place"] == kept["seats"][2]["place"] != kept["seats"][1]["place"]
    a, c = kept["seats"][0]["skill_after"], kept["seats"][2]["skill_after"]
    assert a == c and (a["mu"] > 25) == (kept["seats"][0]["place"] == 1)
    assert kept["seats"][3]["player"] is None and kept["seats"][3]["skill_after"] is None
    # one player against bots: archived and counted, no rating changes
    solo = played("block", 2, seed=3)
    assert archive.finish("solo", [DAN, None], engine_record(solo)) == "recorded"
    r = rating(archive, DAN, "BL")
    assert (r["matches"], r["rated"], r["skill"]["mu"]) == (1, 0, 25.0)
    assert archive.archived("solo")["rated"] is False
    assert all(e["player"] != DAN for e in archive.leaderboard("BL", "skill", None, 0, 10).items)


@pytest.mark.parametrize(("variant", "players", "options"), [
    ("kozel-classic", 3, None), ("osel", 3, None), ("bykovo", 4, None), ("threes-fives", 4, {"teams": True}),
    ("all-threes", 2, None), ("all-fives", 3, None), ("block", 4, None), ("kingdomino", 4, None)])
def test_every_family_archives_and_rates(archive: Archive, variant: str, players: int,
                                         options: dict[str, Any] | None) -> None:
    game = played(variant, players, seed=21, options=options)
    seats = [ALICE, BOB, CAROL, DAN][:players]
    assert archive.finish(f"{variant}-1", seats, engine_record(game)) == "recorded"
    kept = archive.archived(f"{variant}-1")
    assert kept["family"] == families(variant) and kept["rated"] is True
    result = kept["result"]
    winners = set(result.get("winners", []))
    sides = len(result["scores"])
    for seat in kept["seats"]:
        if seat["side"] in winners:
            assert seat["place"] == 1
        assert 1 <= seat["place"] <= sides
    assert min(s["place"] for s in kept["seats"]) == 1


def test_a_kingdomino_forfeit_ranks_the_player_who_timed_out_last(archive: Archive) -> None:
    game = played("kingdomino", 3, seed=5, timeout_after=10)
    assert archive.finish("kd-timeout", [ALICE, BOB, CAROL], engine_record(game)) == "recorded"
    kept = archive.archived("kd-timeout")
    assert kept["timed_out"] == 0 and kept["seats"][0]["place"] == 3
    assert kept["seats"][0]["skill_after"]["mu"] < 25


def test_bykovo_tournament_places_count_the_first_three(archive: Archive) -> None:
    from engine_service.rules.tournament import Tournament

    people = ["Ann", "Bob", "Cid", "Dan", "Eve"]
    t = Tournament.create(people, seed=3)
    rounds = 0
    while not t.over:
        t.record_round([0, 10, 20, 30], 0)
        rounds += 1
    standings = t.standings()
    ids = [ALICE, BOB, CAROL, DAN, "app:eve"]
    assert archive.finish_tournament("tour1", ids, standings) == "recorded"
    assert archive.finish_tournament("tour1", ids, standings) == "duplicate"
    for entry in standings:
        places = rating(archive, ids[entry["index"]], "B")["places"]
        expected = {"first": int(entry["place"] == 1), "second": int(entry["place"] == 2),
                    "third": int(entry["place"] == 3)}
        assert places == expected, (entry, places)
    board = archive.leaderboard("B", "places", None, 0, 10).items
    assert [e["places"]["first"] for e in board][:1] == [1] and len(board) == 3
    with pytest.raises(InvalidFinish, match="not over"):
        archive.finish_tournament("tour2", ids, Tournament.create(people, seed=4).standings())


# ------------------------------------------------------------------ refusals


def test_what_cannot_be_archived_is_refused_before_anything_is_written(archive: Archive) -> None:
    from engine_service.rules import Match

    over = engine_record(played("block", 2, seed=1))
    live, _ = Match.new("block", 2, seed=1)
    cases: list[tuple[str, list[str | None], Any, str]] = [
        ("live", [ALICE, BOB], engine_record(live), "not over"),
        ("short", [ALICE], over, "1 player ids for a match of 2"),
        ("twice", [ALICE, ALICE], over, "two seats"),
        ("bad-id", ["alice", BOB], over, "not a player id"),
        ("bad/match", [ALICE, BOB], over, "match_id"),
        ("garbled", [ALICE, BOB], b"{not json", "not JSON"),
        ("other", [ALICE, BOB], {"state": {}}, "ExportRecord"),
    ]
    for match_id, seats, answer, message in cases:
        with pytest.raises(InvalidFinish, match=message):
            archive.finish(match_id, seats, answer)
    assert archive.repository.count(matches) == 0 and archive.repository.count(ratings) == 0
    with pytest.raises(UnknownPlayer):
        archive.player(ALICE)
    with pytest.raises(NotArchived):
        archive.archived("live")
