"""A Swiss's final standings in the archive (docs/tournaments.md, "When it ends"), on a real SQLite file and a real
PostgreSQL database, migrated: `HostedRows.finish` writes the tournament's state (archived) and its standings in
one transaction, exactly once; the places read back as a Bykovo tournament's are (the players' ratings, here of
the variant's family), the standings as given, each participant's place; a casual Swiss's are nobody's."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from archive.helpers import PostgresServer, sqlite_url
from sqlalchemy import Engine, select

from api_gateway.archive import database
from api_gateway.archive.hosted import FinalStandings, HostedRows
from api_gateway.archive.repository import Repository
from api_gateway.archive.schema import tournament_places, tournaments
from api_gateway.hosting import tournament_swiss as swiss

Json = dict[str, Any]
NAMES = ["Anna", "Boris", "Cyril", "Dasha"]


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer.create()
    yield server
    server.destroy()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = sqlite_url(tmp_path) if request.param == "sqlite" else request.getfixturevalue("postgres").new_database()
    made = database.create(url)
    database.upgrade(made)
    yield made
    made.dispose()


def over(tournament_id: str) -> tuple[Json, list[Json]]:
    """A Swiss of four at one table, over: 3, 2, 1, 0 points (Anna first ... Dasha last), and its standings."""
    part = swiss.started({"rounds": 1, "seats": 4, "sides": 4}, 4)
    swiss.record(part, [[0, 1, 2, 3]], [[3.0, 2.0, 1.0, 0.0]], [])
    state = {"tournament_id": tournament_id, "public": False, "status": "over", "archived": False, "swiss": part}
    return state, swiss.standings(part, NAMES, True)


def test_the_standings_are_archived_once_with_the_write_that_says_so(engine: Engine) -> None:
    rows = HostedRows(engine)
    state, entries = over("t1")
    rows.create("t1", state)
    row = rows.get("t1")
    assert row is not None
    players: list[str | None] = ["app:anna", "guest:boris", None, "app:dasha"]  # Cyril's seat: nobody's
    final = FinalStandings("K", players, NAMES, entries)
    assert rows.finish(row, {**state, "archived": True}, final)
    assert not rows.finish(row, {**state, "archived": True}, final)  # a write came first: nothing written
    again = rows.get("t1")
    assert again is not None and again.version == 2 and again.state["archived"]
    assert rows.active() == []  # archived: no keeper looks at it again
    repo = Repository(engine)
    assert repo.count(tournaments) == 1 and repo.count(tournament_places) == 4
    with database.reading(engine) as conn:
        stored = conn.execute(select(tournaments.c.standings)).scalar_one()
        places = conn.execute(select(tournament_places.c.participant, tournament_places.c.player_id,
                                     tournament_places.c.place, tournament_places.c.official)
                              .order_by(tournament_places.c.participant)).all()
    stored = orjson.loads(stored) if isinstance(stored, str) else stored
    assert [(e["index"], e["place"], e["score"], e["buchholz"]) for e in stored] == \
        [(0, 1, 3.0, 3.0), (1, 2, 2.0, 4.0), (2, 3, 1.0, 5.0), (3, 4, 0.0, 6.0)]
    assert [tuple(p) for p in places] == [(0, "app:anna", 1, True), (1, "guest:boris", 2, True),
                                          (2, None, 3, True), (3, "app:dasha", 4, False)]

    def kozel_places(player: str) -> Json:
        return next(r["places"] for r in repo.player(player)["ratings"] if r["family"] == "K")

    assert kozel_places("app:anna") == {"first": 1, "second": 0, "third": 0}
    assert kozel_places("guest:boris") == {"first": 0, "second": 1, "third": 0}
    assert kozel_places("app:dasha") == {"first": 0, "second": 0, "third": 0}  # fourth: not official
    assert repo.player("app:anna")["name"] == "Anna"
    # a second Swiss won by the same player: one more first place, the rating row kept
    state2, entries2 = over("t2")
    rows.create("t2", state2)
    row2 = rows.get("t2")
    assert row2 is not None
    assert rows.finish(row2, {**state2, "archived": True}, FinalStandings("K", players, NAMES, entries2))
    assert kozel_places("app:anna") == {"first": 2, "second": 0, "third": 0}
    leaders = repo.leaderboard("K", "places", None, 0, 10).items
    assert [e["player"] for e in leaders] == ["app:anna", "guest:boris"]
    # a third, which Anna joined as "Anya": the archive's name is the latest she used, as a table's seat's is
    state3, entries3 = over("t3")
    rows.create("t3", state3)
    row3 = rows.get("t3")
    assert row3 is not None
    assert rows.finish(row3, {**state3, "archived": True}, FinalStandings("K", players, ["Anya", *NAMES[1:]], entries3))
    assert repo.player("app:anna")["name"] == "Anya"
