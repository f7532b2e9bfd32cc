"""A finished match as the archive keeps it, read from the engine's record; pure (no I/O).

The gateway never reads a state: what it knows of a finished match is the
engine's ExportRecord answer (``{"record": {...}, "text": "..."}``,
domino-record 1, docs/records.md), which `finished_match` reads and keeps as
given. Everything the archive derives comes from that record:

- ``variant`` and ``players``; the ``result`` (``winners``, ``losers``,
  ``rating``, ``scores``; Kingdomino ``winners``, ``decided_by``, ``scores``);
- a seat that timed out (its ``timeout N`` step), or that resigned or was gone (``resign N``,
  ``gone N``: the exits of a match, issue 37, placed as a timeout is);
- whether the match was aborted (its ``abort N`` step: `FinishedMatch.aborted`, read from the record,
  not kept apart: no result, so no rating);
- the **sides**: as many as the result has scores, seat ``s`` on side
  ``s % sides`` (partners sit opposite: seats 0+2 against 1+3, RULES.md);
- each side's **place**, ranked as in sports (1, 2, 2, 4) by the result alone:
  the winning sides first, then those neither winning nor losing, then the
  losing sides, and a side that timed out (resigned, was gone) last on its own. Within a group, the
  engine's own numbers break ties where it gives them: Kozel's rating points
  (more is better: fewer points written) and Kingdomino's scores (more is
  better; not an aborted game's, which has no result); otherwise the sides share the place;
- each seat's **rating points**, the source's (Kozel: ``result.rating``, both
  formulas computed by the engine; 0 where the variant has none).

Which seats are people is the caller's: a player id per seat, or None for a
seat no player holds (a bot). A match is *rated* when at least two sides hold a
player the host app vouched for (``app:...``; a guest may be anyone, the winner's own
second tab included) and it was not aborted: the others are archived and counted, and
change no rating.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from api_gateway.archive.players import PREFIX_GUEST, PlayerIdError, check_player_id

Json = dict[str, Any]

#: A match or tournament id: what the tables (or a sealed match's `match_id`) call it.
ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: The steps that place a seat's side last on its own: a timeout, a resign, being gone (issue 37).
_TIMEOUT = re.compile(r"^(?:timeout|resign|gone) (\d{1,2})$")
#: The step of an aborted match (issue 37): it ends with no result.
_ABORT = re.compile(r"^abort \d{1,2}$")


class InvalidFinish(ValueError):
    """The caller's finished match cannot be archived as given (not over, seats that do not fit ...)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat of a finished match: who held it, its side and place, the rating points it gained."""

    player: str | None
    side: int
    place: int
    points: int


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """Everything the archive writes for one match (also what waits in the outbox)."""

    match_id: str
    variant: str
    family: str
    seats: tuple[Seat, ...]
    names: tuple[str | None, ...]
    result: Json
    record: str
    timed_out: int | None
    finished_at: datetime

    @property
    def players(self) -> list[str]:
        """The seats' player ids, each once (bots left out)."""
        return sorted({s.player for s in self.seats if s.player is not None})

    @property
    def aborted(self) -> bool:
        """The match was aborted (its record's ``abort N`` step): it has no result and rates nobody."""
        return aborted(read_record(self.record.encode())[0].get("moves"))

    @property
    def rated(self) -> bool:
        """At least two sides hold a player the host app vouched for (a guest's seat may be anyone's, the
        winner's own second tab included: a rating won against a guest could be won alone, issue 37), and
        the match was not aborted (it has no result)."""
        vouched = {s.side for s in self.seats if s.player is not None and not s.player.startswith(PREFIX_GUEST)}
        return len(vouched) >= 2 and not self.aborted

    def to_json(self) -> bytes:
        return orjson.dumps({
            "match_id": self.match_id, "variant": self.variant, "family": self.family,
            "seats": [[s.player, s.side, s.place, s.points] for s in self.seats], "names": list(self.names),
            "result": self.result, "record": self.record, "timed_out": self.timed_out,
            "finished_at": self.finished_at.isoformat()})

    @classmethod
    def from_json(cls, data: bytes) -> FinishedMatch:
        d = orjson.loads(data)
        return cls(d["match_id"], d["variant"], d["family"], tuple(Seat(*s) for s in d["seats"]),
                   tuple(d["names"]), d["result"], d["record"], d["timed_out"],
                   datetime.fromisoformat(d["finished_at"]))


@dataclass(frozen=True, slots=True)
class FinishedTournament:
    """A finished Bykovo tournament: each participant's player id (or None) and place."""

    tournament_id: str
    players: tuple[str | None, ...]
    places: tuple[int, ...]
    official: tuple[bool, ...]
    standings: list[Json]
    finished_at: datetime

    def to_json(self) -> bytes:
        return orjson.dumps({"tournament_id": self.tournament_id, "players": list(self.players),
                             "places": list(self.places), "official": list(self.official),
                             "standings": self.standings, "finished_at": self.finished_at.isoformat()})

    @classmethod
    def from_json(cls, data: bytes) -> FinishedTournament:
        d = orjson.loads(data)
        return cls(d["tournament_id"], tuple(d["players"]), tuple(d["places"]), tuple(d["official"]),
                   d["standings"], datetime.fromisoformat(d["finished_at"]))


def now() -> datetime:
    return datetime.now(UTC)


def _ints(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise InvalidFinish(f"record result: {what} must be a list of integers")
    return value


def _players(players: Sequence[str | None], count: int) -> tuple[str | None, ...]:
    if len(players) != count:
        raise InvalidFinish(f"{len(players)} player ids for a match of {count} seats")
    for p in players:
        if p is not None:
            try:
                check_player_id(p)
            except PlayerIdError as exc:
                raise InvalidFinish(str(exc)) from None
    held = [p for p in players if p is not None]
    if len(held) != len(set(held)):
        raise InvalidFinish("a player holds two seats of one match")
    return tuple(players)


def places(result: Mapping[str, Any], players: int, timed_out: int | None) -> tuple[list[int], list[int]]:
    """Each seat's side and place (1-based, shared places ranked as in sports) from the result alone."""
    scores = _ints(result.get("scores", []), "scores")
    sides = len(scores) or players
    if sides < 2 or players % sides:
        raise InvalidFinish(f"record result: {len(scores)} scores for {players} seats")
    side_of = [seat % sides for seat in range(players)]
    winners = set(_ints(result.get("winners", []), "winners"))
    losers = set(_ints(result.get("losers", []), "losers"))
    rating = _ints(result.get("rating", []), "rating")
    if not (winners | losers) <= set(range(sides)) or (rating and len(rating) != players):
        raise InvalidFinish("record result: a winner, loser or rating that names no side")
    tiebreak = [0] * sides
    if rating:  # Kozel: the rating points, more is better
        for seat, points in enumerate(rating):
            tiebreak[side_of[seat]] += points
    elif "decided_by" in result and result["decided_by"] != "aborted":  # Kingdomino: the score, more is better
        tiebreak = list(scores)  # (an aborted game has no result: its sides share the place)
    timed_side = None if timed_out is None else side_of[timed_out]

    def key(side: int) -> tuple[int, int]:
        group = 3 if side == timed_side else 0 if side in winners else 2 if side in losers else 1
        return group, -tiebreak[side]

    keys = [key(side) for side in range(sides)]
    side_place = [1 + sum(other < mine for other in keys) for mine in keys]
    return side_of, [side_place[side_of[seat]] for seat in range(players)]


def _timed_out(moves: Any, players: int) -> int | None:
    if not isinstance(moves, list):
        raise InvalidFinish("record: moves must be a list")
    for move in reversed(moves):
        step = move.get("step") if isinstance(move, dict) else None
        found = _TIMEOUT.match(step) if isinstance(step, str) else None
        if found and int(found[1]) < players:
            return int(found[1])
    return None


def aborted(moves: Any) -> bool:
    """Whether a record's moves end with an abort (``abort N``, issue 37): the match has no result."""
    if not isinstance(moves, list) or not moves or not isinstance(moves[-1], dict):
        return False
    step = moves[-1].get("step")
    return isinstance(step, str) and _ABORT.match(step) is not None


def read_record(answer: bytes | Mapping[str, Any]) -> tuple[Json, str]:
    """The record's JSON form out of an ExportRecord answer, and the answer itself as JSON text."""
    try:
        parsed = orjson.loads(answer) if isinstance(answer, bytes) else dict(answer)
    except orjson.JSONDecodeError as exc:
        raise InvalidFinish(f"the record answer is not JSON: {exc}") from None
    record = parsed.get("record") if isinstance(parsed, dict) else None
    if not isinstance(record, dict) or record.get("record") != "domino-record" or record.get("version") != 1:
        raise InvalidFinish("expected the engine's ExportRecord answer: {\"record\": domino-record 1, \"text\"}")
    text = answer.decode() if isinstance(answer, bytes) else orjson.dumps(parsed).decode()
    return record, text


def finished_match(match_id: str, players: Sequence[str | None], answer: bytes | Mapping[str, Any],
                   family_of: Callable[[str], str], finished_at: datetime | None = None) -> FinishedMatch:
    """The archive's row for a finished match, from its record (see the module docstring);
    `family_of` names a variant's family (the engine's variant list)."""
    if not isinstance(match_id, str) or not ID.match(match_id):
        raise InvalidFinish("match_id: 1-64 letters, digits, '-' or '_'")
    record, text = read_record(answer)
    result = record.get("result")
    count = record.get("players")
    if not isinstance(result, dict):
        raise InvalidFinish("the record's match is not over (its result is null)")
    if not isinstance(count, int) or isinstance(count, bool) or not 2 <= count <= 7:
        raise InvalidFinish("record: players must be 2..7")
    held = _players(players, count)
    timed_out = _timed_out(record.get("moves"), count)
    side_of, place = places(result, count, timed_out)
    rating = _ints(result.get("rating", []), "rating")
    names = record.get("names") or []
    seat_names = tuple(n[:64] if isinstance(n, str) and n else None for n in names[:count])
    variant = str(record.get("variant"))
    return FinishedMatch(
        match_id, variant, family_of(variant),
        tuple(Seat(held[s], side_of[s], place[s], rating[s] if rating else 0) for s in range(count)),
        seat_names + (None,) * (count - len(seat_names)), result, text, timed_out, finished_at or now())


def finished_tournament(tournament_id: str, players: Sequence[str | None], standings: Sequence[Mapping[str, Any]],
                        finished_at: datetime | None = None) -> FinishedTournament:
    """A finished Bykovo tournament from its standings (the engine's `standings`, every participant ranked;
    `official` marks the first three places once it is over, as the source counts them)."""
    if not isinstance(tournament_id, str) or not ID.match(tournament_id):
        raise InvalidFinish("tournament_id: 1-64 letters, digits, '-' or '_'")
    entries = [dict(e) for e in standings]
    held = _players(players, len(entries))
    place = [0] * len(entries)
    official = [False] * len(entries)
    for e in entries:
        index, rank = e.get("index"), e.get("place")
        if not isinstance(index, int) or not 0 <= index < len(entries) or not isinstance(rank, int) or place[index]:
            raise InvalidFinish("standings: each participant once, with its index and place")
        place[index], official[index] = rank, e.get("official") is True
    if not any(official):
        raise InvalidFinish("the tournament is not over (no official place in its standings)")
    return FinishedTournament(tournament_id, held, tuple(place), tuple(official), entries, finished_at or now())
