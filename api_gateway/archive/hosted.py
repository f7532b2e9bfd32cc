"""The hosted tournaments' rows (issue 41, docs/tournaments.md): each tournament's whole state as JSON, with a
version that every write compares and sets, in the archive database (SQLite embedded, PostgreSQL in a
cluster): it outlives a gateway's restart and every gateway reads the same one.

No rules here: `api_gateway.hosting.tournament_host` decides what a state becomes; this module only keeps it,
refuses a write whose version another write overtook (`put` answers False: read again, decide again), and
lists the tournaments a keeper must look at (`active`) and the lobby's (`lobby`).

A Swiss's final standings are archived with its last write (`finish`: one transaction with the state that
says so), where the archive keeps a Bykovo tournament's places: a `tournaments` row (the standings as given),
`tournament_places` (each participant's place) and the official places (the first three) in the players'
ratings of the variant's family, which the players' pages and the leaderboard by places show.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from sqlalchemy import Connection, Engine, select

from api_gateway.archive import database
from api_gateway.archive.repository import ensure_players, write_standings
from api_gateway.archive.schema import NAME
from api_gateway.archive.schema import hosted_tournaments as rows

Json = dict[str, Any]
T = TypeVar("T")
#: The statuses of a hosted tournament: joining, its rounds being played, finished.
OPEN, PLAYING, OVER = "open", "playing", "over"


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A tournament's state at `version` (1 when opened, one more at each write)."""

    tournament_id: str
    version: int
    state: Json


@dataclass(frozen=True, slots=True)
class FinalStandings:
    """A Swiss's standings to archive: `entries` (each with the participant's `index`, `place` and `official`,
    as the view shows them), the player of each participant in the tournament's order (None: nobody's, a casual
    one), their names, and the family whose ratings count the official places."""

    family: str
    players: list[str | None]
    names: list[str]
    entries: list[Json]


class HostedRows:
    """The `hosted_tournaments` table (one per worker; every call its own transaction). The database down, or
    at a schema behind this code, is `ArchiveUnavailable` (503)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._schema_ok = False

    def _check(self) -> None:
        if not self._schema_ok:
            database.check_schema(self.engine)
            self._schema_ok = True

    def _write(self, work: Callable[[Connection], T]) -> T:
        self._check()
        return database.transaction(self.engine, work)

    def create(self, tournament_id: str, state: Json) -> None:
        now = datetime.now(UTC)
        self._write(lambda conn: conn.execute(rows.insert().values(
            tournament_id=tournament_id, version=1, status=_status(state), public=bool(state["public"]),
            state=orjson.dumps(state).decode(), created_at=now, updated_at=now)))

    def get(self, tournament_id: str) -> TournamentRow | None:
        self._check()
        with database.reading(self.engine) as conn:
            found = conn.execute(select(rows.c.version, rows.c.state)
                                 .where(rows.c.tournament_id == tournament_id)).first()
        if found is None:
            return None
        return TournamentRow(tournament_id, int(found.version), orjson.loads(found.state))

    def put(self, row: TournamentRow, state: Json) -> bool:
        """Write `state` as the version after `row`'s, unless another write came first (False)."""
        def work(conn: Connection) -> bool:
            done = conn.execute(rows.update()
                                .where(rows.c.tournament_id == row.tournament_id, rows.c.version == row.version)
                                .values(version=row.version + 1, status=_status(state),
                                        state=orjson.dumps(state).decode(), updated_at=datetime.now(UTC)))
            return bool(done.rowcount == 1)
        return self._write(work)

    def finish(self, row: TournamentRow, state: Json, final: FinalStandings) -> bool:
        """`put` of `state` (the tournament archived) and, in the same transaction, `final` into the archive's
        tournaments: written exactly once, with the write that says so; False when another write came first
        (nothing written)."""
        def work(conn: Connection) -> bool:
            done = conn.execute(rows.update()
                                .where(rows.c.tournament_id == row.tournament_id, rows.c.version == row.version)
                                .values(version=row.version + 1, status=_status(state),
                                        state=orjson.dumps(state).decode(), updated_at=datetime.now(UTC)))
            if done.rowcount != 1:
                return False
            _archive_standings(conn, row.tournament_id, final)
            return True
        return self._write(work)

    def active(self, limit: int = 100) -> list[str]:
        """The tournaments being played, and those over whose places are not archived yet: what a keeper's
        pass advances (one indexed read)."""
        self._check()
        with database.reading(self.engine) as conn:
            found = conn.execute(select(rows.c.tournament_id).where(rows.c.status == PLAYING)
                                 .order_by(rows.c.created_at).limit(limit)).scalars().all()
        return list(found)

    def lobby(self, limit: int) -> list[Json]:
        """The public tournaments still open for joining, newest first."""
        self._check()
        with database.reading(self.engine) as conn:
            found = conn.execute(select(rows.c.state).where(rows.c.status == OPEN, rows.c.public.is_(True))
                                 .order_by(rows.c.created_at.desc()).limit(limit)).scalars().all()
        return [orjson.loads(s) for s in found]


def _status(state: Json) -> str:
    """The row's indexed status: a tournament over stays `playing` there until its places are archived, so
    that the keepers' one read (`active`) finds it."""
    return PLAYING if state["status"] == OVER and not state.get("archived") else str(state["status"])


def _archive_standings(conn: Connection, tournament_id: str, final: FinalStandings) -> None:
    """The standings as a finished tournament and each official place (1-3) of a player one more in their
    ratings of `final.family` (`repository.write_standings`; players and ratings rows made when new)."""
    now = datetime.now(UTC)
    names = {p: final.names[final.players.index(p)][:NAME] for p in final.players if p is not None}
    ensure_players(conn, final.family, names, now)
    by_index = {int(e["index"]): e for e in final.entries}
    count = range(len(final.players))
    write_standings(conn, tournament_id, final.family, final.players, [int(by_index[i]["place"]) for i in count],
                    [bool(by_index[i]["official"]) for i in count], final.entries, now)
