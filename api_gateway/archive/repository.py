"""Reads and writes of the archive; one code path for SQLite and PostgreSQL (SQLAlchemy Core).

`record_match` writes a finished match and every rating it changes in **one
transaction**, so a crash or a kill at any point leaves either all of it or none:

1. make sure every player and its ``ratings`` row for the family exist
   (insert-if-absent), in player order;
2. lock those rating rows (``SELECT ... FOR UPDATE`` on PostgreSQL, the file's
   write lock on SQLite), again in player order, so two matches of the same
   player apply one after the other and never deadlock on each other;
3. insert the ``matches`` row: its `match_id` is unique, so of two gateways
   finishing the same match at the same moment one inserts and the other, once
   it has the locks, fails on the unique key and answers *duplicate* (nothing
   written twice). Inserted under the locks, a match's `seq` follows the order in
   which its players' ratings were updated;
4. compute the new skills (`skill.rate`) and write the ratings and the seats.

Reads answer pages by keyset (`cursor`): the leaderboard by (sort figure,
player id), a player's matches by the archive's own sequence number.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Column, Connection, Engine, Row, Select, exc, func, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.expression import ColumnElement

from api_gateway.archive import database, metrics, skill
from api_gateway.archive.results import FinishedMatch, FinishedTournament
from api_gateway.archive.schema import match_seats, matches, players, ratings, tournament_places, tournaments

Json = dict[str, Any]
RECENT = 10

#: Leaderboard orders: the columns compared, best first (all descending, player id last).
ORDERS: dict[str, tuple[Column[Any], ...]] = {
    "skill": (ratings.c.ordinal, ratings.c.player_id),
    "points": (ratings.c.points, ratings.c.player_id),
    "places": (ratings.c.places_1, ratings.c.places_2, ratings.c.places_3, ratings.c.player_id),
}
#: The Python types of each order's keyset (what a cursor carries).
KEY_TYPES: dict[str, tuple[type, ...]] = {"skill": (float, str), "points": (int, str), "places": (int, int, int, str)}
#: Who is on each board: rated at least once, with points, with an official place.
#: Rated matches of a family after which a player's rating there is established, not provisional: the
#: skill boards list established players (a rating from one or two matches says little), unless asked.
ESTABLISHED = 5

_ON_BOARD: dict[str, ColumnElement[bool]] = {
    "skill": ratings.c.rated > 0,
    "points": ratings.c.points > 0,
    "places": ratings.c.places_1 + ratings.c.places_2 + ratings.c.places_3 > 0,
}


class UnknownPlayer(LookupError):
    """No player with this id has a finished match in the archive."""


class NotArchived(LookupError):
    """No finished match with this id is in the archive."""


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Json]
    last: tuple[Any, ...] | None   # the keyset of the last item when more may follow


def _utc(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _upsert(conn: Connection, table: Any) -> Any:
    """INSERT ... ON CONFLICT of the connection's dialect (the only statement that differs)."""
    return (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(table)


def ensure_players(conn: Connection, family: str, names: Mapping[str, str | None], moment: datetime) -> None:
    """Each player's row, its name the one given (a name of None keeps the one it has), and its `family`
    rating row as a newcomer's, each made when new; in player order, as every writer takes rows."""
    for pid in sorted(names):
        insert = _upsert(conn, players).values(id=pid, name=names[pid], created_at=moment)
        name = func.coalesce(insert.excluded.name, players.c.name)
        conn.execute(insert.on_conflict_do_update(index_elements=[players.c.id], set_={"name": name}))
        start = skill.newcomer()
        conn.execute(_upsert(conn, ratings).values(
            player_id=pid, family=family, mu=start.mu, sigma=start.sigma, ordinal=start.ordinal, points=0,
            matches=0, rated=0, wins=0, places_1=0, places_2=0, places_3=0, updated_at=moment,
        ).on_conflict_do_nothing(index_elements=[ratings.c.player_id, ratings.c.family]))


def write_standings(conn: Connection, tournament_id: str, family: str, held: Sequence[str | None],
                    places: Sequence[int], official: Sequence[bool], standings: list[Json], moment: datetime) -> None:
    """A finished tournament, however it was played (a Bykovo evening recorded, a hosted Swiss): the standings
    as given (`tournaments`), each participant's player (`held`: None for nobody's) and place
    (`tournament_places`), and each official place 1-3 of a player one more in their `family` ratings, whose
    rows `ensure_players` made."""
    seq = conn.execute(tournaments.insert().values(tournament_id=tournament_id, standings=standings,
                                                   finished_at=moment).returning(tournaments.c.seq)).scalar_one()
    conn.execute(tournament_places.insert(), [
        {"tournament_seq": seq, "participant": i, "player_id": p, "place": places[i], "official": official[i]}
        for i, p in enumerate(held)])
    for i, pid in sorted(((i, p) for i, p in enumerate(held) if p is not None), key=lambda ip: ip[1]):
        if official[i] and places[i] <= 3:
            column = ratings.c[f"places_{places[i]}"]
            conn.execute(ratings.update().where(ratings.c.player_id == pid, ratings.c.family == family)
                         .values({column: column + 1, "updated_at": moment}))


def _skill(mu: float | None, sigma: float | None) -> Json | None:
    if mu is None or sigma is None:
        return None
    s = skill.Skill(mu, sigma)
    return {"mu": s.mu, "sigma": s.sigma, "ordinal": s.ordinal}


class Repository:
    """The archive's database (one per worker process; every call opens its own transaction)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # ------------------------------------------------------------ writes

    def record_match(self, finished: FinishedMatch) -> bool:
        """Write `finished` and its rating updates at once; False when the match was archived already."""
        written = self._once(lambda conn: self._write_match(conn, finished), matches.c.match_id, finished.match_id)
        if written and finished.rated:
            metrics.RATED.inc()  # here, after the commit: once per match, whichever path wrote it
        return written

    def record_tournament(self, finished: FinishedTournament) -> bool:
        """Write a finished tournament and its official places; False when it was archived already."""
        return self._once(lambda conn: self._write_tournament(conn, finished), tournaments.c.tournament_id,
                          finished.tournament_id)

    def _once(self, write: Callable[[Connection], None], column: Any, key: str) -> bool:
        """`write` in one transaction; False when its unique `key` was there already (nothing written)."""
        try:
            database.transaction(self.engine, write)
        except exc.IntegrityError:
            if self._exists(column, key):
                return False
            raise
        return True

    def _exists(self, column: Any, key: str) -> bool:
        with database.reading(self.engine) as conn:
            return conn.execute(select(column).where(column == key)).first() is not None

    def _write_match(self, conn: Connection, m: FinishedMatch) -> None:
        names = {s.player: m.names[i] for i, s in enumerate(m.seats) if s.player is not None}
        ensure_players(conn, m.family, names, m.finished_at)
        before = self._lock(conn, m.family, m.players)
        seq = conn.execute(matches.insert().values(
            match_id=m.match_id, variant=m.variant, family=m.family, players=len(m.seats), rated=m.rated,
            timed_out=m.timed_out, result=m.result, record=m.record, finished_at=m.finished_at,
        ).returning(matches.c.seq)).scalar_one()
        after = self._rate(m, before) if m.rated else {}
        self._write_seats(conn, seq, m, before, after)
        self._write_ratings(conn, m, before, after)

    def _lock(self, conn: Connection, family: str, ids: Sequence[str]) -> dict[str, Row[Any]]:
        """The players' rating rows, locked for this transaction, in player order."""
        rows = conn.execute(select(ratings).where(ratings.c.family == family, ratings.c.player_id.in_(ids))
                            .order_by(ratings.c.player_id).with_for_update()).all()
        return {row.player_id: row for row in rows}

    @staticmethod
    def _rate(m: FinishedMatch, before: Mapping[str, Row[Any]]) -> dict[str, skill.Skill]:
        sides = sorted({s.side for s in m.seats if s.player is not None})
        teams = [[s.player for s in m.seats if s.side == side and s.player is not None] for side in sides]
        place = {s.side: s.place for s in m.seats}
        rated = skill.rate([[skill.Skill(before[p].mu, before[p].sigma) for p in team] for team in teams],
                           [place[side] for side in sides])
        return {p: new for team, news in zip(teams, rated) for p, new in zip(team, news)}

    def _write_seats(self, conn: Connection, seq: int, m: FinishedMatch, before: Mapping[str, Row[Any]],
                     after: Mapping[str, skill.Skill]) -> None:
        rows = []
        for seat, s in enumerate(m.seats):
            old = before[s.player] if s.player is not None and s.player in after else None
            new = after[s.player] if s.player is not None and s.player in after else None
            rows.append({"match_seq": seq, "seat": seat, "player_id": s.player, "side": s.side, "place": s.place,
                         "points": s.points if s.player is not None and m.rated else 0,
                         "mu_before": old.mu if old else None, "sigma_before": old.sigma if old else None,
                         "mu_after": new.mu if new else None, "sigma_after": new.sigma if new else None})
        conn.execute(match_seats.insert(), rows)

    def _write_ratings(self, conn: Connection, m: FinishedMatch, before: Mapping[str, Row[Any]],
                       after: Mapping[str, skill.Skill]) -> None:
        for s in sorted((s for s in m.seats if s.player is not None), key=lambda s: s.player or ""):
            assert s.player is not None
            row = before[s.player]
            new = after.get(s.player, skill.Skill(row.mu, row.sigma))
            conn.execute(ratings.update().where(ratings.c.player_id == s.player, ratings.c.family == m.family)
                         .values(mu=new.mu, sigma=new.sigma, ordinal=new.ordinal,
                                 points=row.points + (s.points if m.rated else 0), matches=row.matches + 1,
                                 rated=row.rated + (1 if m.rated else 0),
                                 wins=row.wins + (1 if m.rated and s.place == 1 else 0),
                                 updated_at=m.finished_at))

    def _write_tournament(self, conn: Connection, t: FinishedTournament) -> None:
        ensure_players(conn, "B", {p: None for p in t.players if p is not None}, t.finished_at)
        write_standings(conn, t.tournament_id, "B", t.players, t.places, t.official, t.standings, t.finished_at)

    # ------------------------------------------------------------ reads

    def player(self, player_id: str) -> Json:
        """A player's ratings per family, matches archived and recent results."""
        with database.reading(self.engine) as conn:
            found = conn.execute(select(players).where(players.c.id == player_id)).first()
            if found is None:
                raise UnknownPlayer(player_id)
            rows = conn.execute(select(ratings).where(ratings.c.player_id == player_id)
                                .order_by(ratings.c.family)).all()
            recent = self._matches_of(conn, player_id, None, RECENT)
        return {
            "id": found.id, "name": found.name, "created_at": _utc(found.created_at),
            "matches": sum(r.matches for r in rows),
            "ratings": [{"family": r.family, "skill": _skill(r.mu, r.sigma), "points": r.points,
                         "matches": r.matches, "rated": r.rated, "wins": r.wins,
                         "provisional": r.rated < ESTABLISHED,
                         "places": {"first": r.places_1, "second": r.places_2, "third": r.places_3}} for r in rows],
            "recent": recent.items,
        }

    def player_matches(self, player_id: str, after: int | None, limit: int) -> Page:
        """A player's archived matches, newest first, after the match of sequence number `after`."""
        with database.reading(self.engine) as conn:
            if conn.execute(select(players.c.id).where(players.c.id == player_id)).first() is None:
                raise UnknownPlayer(player_id)
            return self._matches_of(conn, player_id, after, limit)

    def _matches_of(self, conn: Connection, player_id: str, after: int | None, limit: int) -> Page:
        query = (select(matches.c.seq, matches.c.match_id, matches.c.variant, matches.c.family, matches.c.rated,
                        matches.c.timed_out, matches.c.finished_at, match_seats.c.seat)
                 .join(match_seats, match_seats.c.match_seq == matches.c.seq)
                 .where(match_seats.c.player_id == player_id))
        if after is not None:
            query = query.where(matches.c.seq < after)
        rows = conn.execute(query.order_by(matches.c.seq.desc()).limit(limit + 1)).all()
        seats = self._seats(conn, [r.seq for r in rows[:limit]])
        items = [{"match_id": r.match_id, "variant": r.variant, "family": r.family, "finished_at": _utc(r.finished_at),
                  "rated": r.rated, "timed_out": r.timed_out, "seat": r.seat, "seats": seats[r.seq]}
                 for r in rows[:limit]]
        return Page(items, (rows[limit - 1].seq,) if len(rows) > limit else None)

    @staticmethod
    def _seats(conn: Connection, seqs: Sequence[int]) -> dict[int, list[Json]]:
        found: dict[int, list[Json]] = {seq: [] for seq in seqs}
        if not seqs:
            return found
        rows = conn.execute(select(match_seats, players.c.name)
                            .join(players, players.c.id == match_seats.c.player_id, isouter=True)
                            .where(match_seats.c.match_seq.in_(seqs))
                            .order_by(match_seats.c.match_seq, match_seats.c.seat)).all()
        for r in rows:
            found[r.match_seq].append({
                "seat": r.seat, "player": r.player_id, "name": r.name, "side": r.side, "place": r.place,
                "points": r.points, "skill_before": _skill(r.mu_before, r.sigma_before),
                "skill_after": _skill(r.mu_after, r.sigma_after)})
        return found

    def leaderboard(self, family: str, by: str, after: tuple[Any, ...] | None, rank: int, limit: int,
                    provisional: bool = False) -> Page:
        """The family's players best first by `by` (skill, points or places), after the keyset `after`: the
        established ones (`ESTABLISHED` rated matches; every one for the tournaments' places), or with
        `provisional` every rated player, each marked."""
        order = ORDERS[by]
        query: Select[Any] = (select(ratings, players.c.name).join(players, players.c.id == ratings.c.player_id)
                              .where(ratings.c.family == family, _ON_BOARD[by]))
        if not provisional and by != "places":
            query = query.where(ratings.c.rated >= ESTABLISHED)
        if after is not None:
            query = query.where(tuple_(*order) < tuple_(*after))
        with database.reading(self.engine) as conn:
            rows = conn.execute(query.order_by(*(c.desc() for c in order)).limit(limit + 1)).all()
        items = [{"rank": rank + i + 1, "player": r.player_id, "name": r.name, "skill": _skill(r.mu, r.sigma),
                  "points": r.points, "matches": r.matches, "rated": r.rated, "wins": r.wins,
                  "provisional": r.rated < ESTABLISHED,
                  "places": {"first": r.places_1, "second": r.places_2, "third": r.places_3}}
                 for i, r in enumerate(rows[:limit])]
        last = tuple(getattr(rows[limit - 1], c.key) for c in order) if len(rows) > limit else None
        return Page(items, last)

    def archived(self, match_id: str) -> Json:
        """An archived match: its result, seats with their ratings before and after, and its record."""
        with database.reading(self.engine) as conn:
            row = conn.execute(select(matches).where(matches.c.match_id == match_id)).first()
            if row is None:
                raise NotArchived(match_id)
            seats = self._seats(conn, [row.seq])[row.seq]
        stored = orjson.loads(row.record)
        return {"match_id": row.match_id, "variant": row.variant, "family": row.family,
                "finished_at": _utc(row.finished_at), "rated": row.rated, "timed_out": row.timed_out,
                "result": row.result, "seats": seats, "record": stored["record"], "text": stored.get("text")}

    def count(self, table: Any) -> int:
        """Rows of a table (tests and the operator's checks)."""
        with database.reading(self.engine) as conn:
            return int(conn.execute(select(func.count()).select_from(table)).scalar_one())
