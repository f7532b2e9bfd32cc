"""The Bykovo micro-tournament's state and events as `domino.v1` messages (the typed face).

`Tournament` (RULES.md B, `engine_service.rules.tournament`) reads and writes a
JSON-shaped dict (`from_dict` / `to_dict`, what the JSON face carries); the
typed face carries the `TournamentState` message. Participants are indexes into
`participants` in both, so the conversion is field for field: `load` reads a
message into the dict the rules check (their refusals are prefixed ``state:``),
`dump` writes a tournament's dict as the message.

>>> from engine_service.rules import Tournament
>>> state = dump(Tournament.create(["Ann", "Bob", "Cid", "Dan"], seed=1))
>>> state.limit, list(state.next_players), state.over
(100, [0, 1, 2, 3], False)
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from domino.v1 import engine_pb2 as pb

from engine_service.rules.errors import MalformedError
from engine_service.rules.tournament import Tournament

__all__ = ["dump", "events_to_proto", "load", "standings_to_proto"]

Json = dict[str, Any]


def standings_to_proto(entries: Iterable[Json]) -> list[pb.StandingEntry]:
    """`Tournament.standings()` -> StandingEntry messages."""
    return [pb.StandingEntry(participant=e["participant"], index=e["index"], place=e["place"], total=e["total"],
                             out=e["out"], official=e["official"]) for e in entries]


def _standings_from_proto(entries: Iterable[pb.StandingEntry]) -> list[Json]:
    return [{"participant": e.participant, "index": e.index, "place": e.place, "total": e.total,
             "out": e.out, "official": e.official} for e in entries]


def load(msg: pb.TournamentState) -> Tournament:
    """The tournament a TournamentState describes; any inconsistency is a `MalformedError`."""
    data = {
        "participants": list(msg.participants),
        "seed": msg.seed,
        "limit": msg.limit,
        "first_sitters": list(msg.first_sitters),
        "rounds": [{"players": list(r.players), "places": list(r.places), "totals": list(r.totals),
                    "eliminated": list(r.eliminated)} for r in msg.rounds],
        "totals": list(msg.totals),
        "over": msg.over,
        "next_players": list(msg.next_players),
        "standings": _standings_from_proto(msg.standings),
    }
    try:
        return Tournament.from_dict(data)
    except MalformedError as exc:  # the rules' message, e.g. "rounds[1].players must be [0, 1, 2, 4]"
        raise MalformedError(f"state: {exc}") from None


def dump(tournament: Tournament) -> pb.TournamentState:
    """A tournament as its TournamentState (derived fields filled)."""
    d = tournament.to_dict()
    return pb.TournamentState(
        participants=d["participants"], seed=d["seed"], limit=d["limit"], first_sitters=d["first_sitters"],
        rounds=[pb.TournamentRound(players=r["players"], places=r["places"], totals=r["totals"],
                                   eliminated=r["eliminated"]) for r in d["rounds"]],
        totals=d["totals"], over=d["over"], next_players=d["next_players"],
        standings=standings_to_proto(d["standings"]))


def _event_to_proto(e: Json) -> pb.TournamentEvent:
    kind = e["type"]
    msg = pb.TournamentEvent()
    if kind == "tournament_round":
        r = msg.tournament_round
        r.number = e["number"]
        r.players.extend(e["players"])
        r.places.extend(e["places"])
    elif kind == "eliminated":
        msg.eliminated.participants.extend(e["participants"])
    elif kind == "tournament_over":
        msg.tournament_over.standings.extend(standings_to_proto(e["standings"]))
    else:
        raise KeyError(f"unknown tournament event type {kind!r}")
    return msg


def events_to_proto(events: Iterable[Json]) -> list[pb.TournamentEvent]:
    """`Tournament.record_round()` events (dicts with "type") -> TournamentEvent messages."""
    return [_event_to_proto(e) for e in events]
