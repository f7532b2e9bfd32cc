"""The archive's tables (SQLAlchemy Core): players, their ratings per family, finished matches, tournaments.

One description for SQLite and PostgreSQL; the migrations (`migrations/versions`)
create exactly these, and tests/archive check that the two agree.

- ``players``: a player id (``app:<user>``, vouched for by the host app, or
  ``guest:<random>``, made by the service: `api_gateway.archive.players`) and
  the display name last seen.
- ``ratings``: one row per player and variant family (``K`` Kozel, ``O`` Osel,
  ``KD`` Kingdomino ...: the engine's `family` of each variant). The skill rating
  (openskill's `mu` and `sigma`, `ordinal` = mu - 3 sigma, the conservative figure
  a leaderboard sorts by), the source's rating points (Kozel's), the matches
  archived and those rated, first places, and the Bykovo tournament's official
  places (1st, 2nd, 3rd).
- ``matches``: one row per finished match, unique by `match_id` (the key that
  makes archiving exactly once), with the engine's result and its record
  (domino-record 1, the ExportRecord answer stored as given); `seq` is the
  archive's own order (cursors page on it).
- ``match_seats``: who sat where, their place, the points gained and the skill
  rating before and after (null for a seat no player holds: a bot).
- ``tournaments`` and ``tournament_places``: finished Bykovo tournaments and
  their standings, unique by `tournament_id`.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

#: Constraint names spelled out, so that migrations name them the same on both databases.
metadata = MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})

PLAYER_ID = 80      # "app:" or "guest:" and at most 64 characters
NAME = 64
MATCH_ID = 64
FAMILY = 8
VARIANT = 40

#: An integer key that autoincrements on both databases (BIGINT on PostgreSQL, SQLite's rowid).
Seq = BigInteger().with_variant(Integer(), "sqlite")

players = Table(
    "players", metadata,
    Column("id", String(PLAYER_ID), primary_key=True),
    Column("name", String(NAME)),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

ratings = Table(
    "ratings", metadata,
    Column("player_id", String(PLAYER_ID), ForeignKey("players.id"), primary_key=True),
    Column("family", String(FAMILY), primary_key=True),
    Column("mu", Double, nullable=False),
    Column("sigma", Double, nullable=False),
    Column("ordinal", Double, nullable=False),
    Column("points", Integer, nullable=False),
    Column("matches", Integer, nullable=False),
    Column("rated", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("places_1", Integer, nullable=False),
    Column("places_2", Integer, nullable=False),
    Column("places_3", Integer, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index(None, "family", "ordinal", "player_id"),
    Index(None, "family", "points", "player_id"),
)


def _finished(name: str, key: str, *columns: Column[Any]) -> Table:
    """A table of finished things (matches, tournaments): `seq`, the archive's own order (cursors
    page on it); `key`, the unique id that makes archiving one exactly once; `columns`; when it finished."""
    return Table(
        name, metadata,
        Column("seq", Seq, primary_key=True, autoincrement=True),
        Column(key, String(MATCH_ID), nullable=False, unique=True),
        *columns,
        Column("finished_at", DateTime(timezone=True), nullable=False),
    )


def _places(name: str, key: str, finished: Table, position: str, *columns: Column[Any]) -> Table:
    """Who took part in a row of a `finished` table (its `seq` as `key`), one row per `position` (a seat,
    a participant): the player (null for a seat no player holds), then `columns`; indexed by player,
    for a player's history."""
    return Table(
        name, metadata,
        Column(key, Seq, ForeignKey(f"{finished.name}.seq"), primary_key=True),
        Column(position, Integer, primary_key=True),
        Column("player_id", String(PLAYER_ID), ForeignKey("players.id")),
        *columns,
        Index(None, "player_id", key),
    )


matches = _finished(
    "matches", "match_id",
    Column("variant", String(VARIANT), nullable=False),
    Column("family", String(FAMILY), nullable=False),
    Column("players", Integer, nullable=False),
    Column("rated", Boolean, nullable=False),
    Column("timed_out", Integer),
    Column("result", JSON, nullable=False),
    Column("record", Text, nullable=False),
)

match_seats = _places(
    "match_seats", "match_seq", matches, "seat",
    Column("side", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("mu_before", Double),
    Column("sigma_before", Double),
    Column("mu_after", Double),
    Column("sigma_after", Double),
)

tournaments = _finished(
    "tournaments", "tournament_id",
    Column("standings", JSON, nullable=False),
)

tournament_places = _places(
    "tournament_places", "tournament_seq", tournaments, "participant",
    Column("place", Integer, nullable=False),
    Column("official", Boolean, nullable=False),
)

#: Hosted tournaments being played (issue 41, docs/tournaments.md): one row per tournament, its whole state as
#: JSON, written by compare-and-set of `version` (every gateway shares it; a restart loses nothing). `status`
#: (open, playing, over) is indexed: the keepers read the tournaments still to advance.
hosted_tournaments = Table(
    "hosted_tournaments", metadata,
    Column("tournament_id", String(MATCH_ID), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("public", Boolean, nullable=False),
    Column("state", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index(None, "status", "public", "created_at"),
)
