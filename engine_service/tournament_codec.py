"""Conversion between the Bykovo micro-tournament's JSON state and `domino.v1.TournamentState`.

The rules library's `Tournament` (RULES.md B, `engine_service.rules.tournament`)
speaks a JSON-shaped dict (`Tournament.to_dict()`); the wire speaks the
`TournamentState` message. Participants are indexes into `participants` on both
sides, so the conversion is field for field. Like `engine_service.codec` (which
this module leaves alone), it is shared by the engine servicer, the REST gateway
and the Python client, and both directions validate what they read, raising
`MalformedError` with the path of the offending field
(``state.rounds[2].totals[0]: ...``). Whether a state is consistent is the
rules' job in `Tournament.from_dict`, reached through `load`.

>>> state = tournament_from_proto(dump(Tournament.create(["Ann", "Bob", "Cid", "Dan"], seed=1)))
>>> state["limit"], state["next_players"], state["over"]
(100, [0, 1, 2, 3], False)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from domino.v1 import engine_pb2 as pb

from engine_service.codec import (  # the same checked readers as the match codec
    _INT32,
    _UINT32,
    _UINT64,
    _bad,
    _bool,
    _int,
    _ints,
    _obj,
    _seq,
    _str,
)
from engine_service.rules.errors import MalformedError
from engine_service.rules.tournament import Tournament

__all__ = [
    "dump",
    "events_from_proto",
    "events_to_proto",
    "load",
    "standings_from_proto",
    "standings_to_proto",
    "tournament_from_proto",
    "tournament_to_proto",
]

Json = dict[str, Any]



def _strs(value: object, where: str) -> list[str]:
    return [_str(v, f"{where}[{i}]") for i, v in enumerate(_seq(value, where))]


def _required(d: Mapping[str, Any], key: str, where: str) -> Any:
    value = d.get(key)
    if value is None:
        raise _bad(f"{where}.{key}", "required")
    return value


# ---------------------------------------------------------------- standings


def _standing_to_proto(e: object, where: str) -> pb.StandingEntry:
    e = _obj(e, where)
    return pb.StandingEntry(
        participant=_str(e.get("participant", ""), f"{where}.participant"),
        index=_int(e.get("index", 0), f"{where}.index", _UINT32),
        place=_int(e.get("place", 0), f"{where}.place", _UINT32),
        total=_int(e.get("total", 0), f"{where}.total", _INT32),
        out=_bool(e.get("out", False), f"{where}.out"),
        official=_bool(e.get("official", False), f"{where}.official"),
    )


def standings_to_proto(entries: object, where: str = "standings") -> list[pb.StandingEntry]:
    """`Tournament.standings()` -> StandingEntry messages."""
    return [_standing_to_proto(e, f"{where}[{i}]") for i, e in enumerate(_seq(entries, where))]


def standings_from_proto(entries: Iterable[pb.StandingEntry]) -> list[Json]:
    """StandingEntry messages -> the dicts of `Tournament.standings()`."""
    return [{"participant": e.participant, "index": e.index, "place": e.place, "total": e.total,
             "out": e.out, "official": e.official} for e in entries]


# ---------------------------------------------------------------- state


def _round_to_proto(r: object, where: str) -> pb.TournamentRound:
    r = _obj(r, where)
    msg = pb.TournamentRound()
    msg.players.extend(_ints(r.get("players") or [], f"{where}.players", _UINT32))
    msg.places.extend(_ints(r.get("places") or [], f"{where}.places", _UINT32))
    msg.totals.extend(_ints(r.get("totals") or [], f"{where}.totals", _INT32))
    msg.eliminated.extend(_ints(r.get("eliminated") or [], f"{where}.eliminated", _UINT32))
    return msg


def tournament_to_proto(d: object, where: str = "state") -> pb.TournamentState:
    """A `Tournament.to_dict()` dict -> TournamentState (MalformedError naming the field on bad shape).

    `participants` and `seed` are required; the derived keys (`limit`, `totals`,
    `over`, `next_players`, `standings`, a round's `eliminated`) may be left out.
    """
    d = _obj(d, where)
    msg = pb.TournamentState(
        seed=_int(_required(d, "seed", where), f"{where}.seed", _UINT64),
        limit=_int(d.get("limit", 0), f"{where}.limit", _UINT32),
        over=_bool(d.get("over", False), f"{where}.over"),
    )
    msg.participants.extend(_strs(_required(d, "participants", where), f"{where}.participants"))
    msg.first_sitters.extend(_ints(d.get("first_sitters") or [], f"{where}.first_sitters", _UINT32))
    msg.rounds.extend(_round_to_proto(r, f"{where}.rounds[{i}]")
                      for i, r in enumerate(_seq(d.get("rounds") or [], f"{where}.rounds")))
    msg.totals.extend(_ints(d.get("totals") or [], f"{where}.totals", _INT32))
    msg.next_players.extend(_ints(d.get("next_players") or [], f"{where}.next_players", _UINT32))
    msg.standings.extend(standings_to_proto(d.get("standings") or [], f"{where}.standings"))
    return msg


def tournament_from_proto(msg: pb.TournamentState) -> Json:
    """TournamentState -> the dict `Tournament.from_dict()` reads (and `to_dict()` writes, key for key)."""
    return {
        "participants": list(msg.participants),
        "seed": msg.seed,
        "limit": msg.limit,
        "first_sitters": list(msg.first_sitters),
        "rounds": [{"players": list(r.players), "places": list(r.places), "totals": list(r.totals),
                    "eliminated": list(r.eliminated)} for r in msg.rounds],
        "totals": list(msg.totals),
        "over": msg.over,
        "next_players": list(msg.next_players),
        "standings": standings_from_proto(msg.standings),
    }


def load(msg: pb.TournamentState, where: str = "state") -> Tournament:
    """The tournament a TournamentState describes; any inconsistency is a `MalformedError`."""
    data = tournament_from_proto(msg)
    try:
        return Tournament.from_dict(data)
    except MalformedError as exc:  # the rules' message, e.g. "rounds[1].players must be [0, 1, 2, 4]"
        raise _bad(where, str(exc)) from None


def dump(tournament: Tournament) -> pb.TournamentState:
    """A tournament as its TournamentState (derived fields filled)."""
    return tournament_to_proto(tournament.to_dict())


# ---------------------------------------------------------------- events


def _event_to_proto(e: object, where: str) -> pb.TournamentEvent:
    e = _obj(e, where)
    kind = e.get("type")
    msg = pb.TournamentEvent()
    if kind == "tournament_round":
        r = msg.tournament_round
        r.number = _int(e.get("number", 0), f"{where}.number", _UINT32)
        r.players.extend(_ints(e.get("players") or [], f"{where}.players", _UINT32))
        r.places.extend(_ints(e.get("places") or [], f"{where}.places", _UINT32))
    elif kind == "eliminated":
        msg.eliminated.participants.extend(_strs(e.get("participants") or [], f"{where}.participants"))
    elif kind == "tournament_over":
        msg.tournament_over.standings.extend(standings_to_proto(e.get("standings") or [], f"{where}.standings"))
    else:
        raise _bad(f"{where}.type", f"unknown tournament event type {kind!r}")
    return msg


def events_to_proto(events: Iterable[Json], where: str = "events") -> list[pb.TournamentEvent]:
    """`Tournament.record_round()` events (dicts with "type") -> TournamentEvent messages."""
    return [_event_to_proto(e, f"{where}[{i}]") for i, e in enumerate(events)]


def _event_from_proto(msg: pb.TournamentEvent, where: str) -> Json:
    kind = msg.WhichOneof("kind")
    if kind == "tournament_round":
        r = msg.tournament_round
        return {"type": kind, "number": r.number, "players": list(r.players), "places": list(r.places)}
    if kind == "eliminated":
        return {"type": kind, "participants": list(msg.eliminated.participants)}
    if kind == "tournament_over":
        return {"type": kind, "standings": standings_from_proto(msg.tournament_over.standings)}
    raise _bad(where, "a tournament event with no kind set")


def events_from_proto(events: Iterable[pb.TournamentEvent], where: str = "events") -> list[Json]:
    """TournamentEvent messages -> the dicts `Tournament.record_round()` returns."""
    return [_event_from_proto(e, f"{where}[{i}]") for i, e in enumerate(events)]
