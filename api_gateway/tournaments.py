# mypy: allow-untyped-decorators
"""/v1/tournaments: the Bykovo micro-tournament (RULES.md B) over JSON.

Stateless like the matches: every call carries the whole tournament state
(the JSON of the last answer, which the gateway hands to the engine's JSON face
unread) and the answer carries the new one. There is no hidden information in a
tournament, so there is no sealed mode: whoever keeps the standings holds the
state. Who plays next, the limit, eliminations and tie-breaks are the engine's
answer; the gateway only validates shapes and forwards.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import current_app

from api_gateway.engine import Engine
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, ENGINE
from api_gateway.http.routes import Operation, register
from api_gateway.http.schemas import (
    NewTournamentSchema,
    RecordRoundSchema,
    StandingsAnswerSchema,
    TournamentAnswerSchema,
    TournamentCarrierSchema,
)

Json = dict[str, Any]
TOURNAMENTS = "domino_tournaments"

tournaments_blp = Blueprint(
    "tournaments", __name__, url_prefix="/v1/tournaments",
    description="The Bykovo micro-tournament (4-7 participants, four play each round). Send `state`, get the "
                "new `state`: record each round's points, read the standings and who plays next.")


class Tournaments:
    """The tournament calls; one instance per app, shared by the worker's threads."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, body: Mapping[str, Any]) -> bytes:
        return self.engine.call("CreateTournament", body).answer

    def record_round(self, body: Mapping[str, Any]) -> bytes:
        return self.engine.call("RecordTournamentRound", body).answer

    def standings(self, body: Mapping[str, Any]) -> bytes:
        return self.engine.call("TournamentStandings", body).answer


def tournaments() -> Tournaments:
    found: Tournaments = current_app.extensions[TOURNAMENTS]
    return found


_REFUSED = (*BODY, "malformed", "too-large", *ENGINE)

#: The POST operations of /v1/tournaments, registered as `api_gateway.http.routes` registers the matches'.
OPERATIONS: tuple[Operation, ...] = (
    Operation(tournaments_blp, "", "NewTournament", "createTournament",
              NewTournamentSchema(), "new_tournament", TournamentAnswerSchema, Tournaments.create, _REFUSED,
              """Start a micro-tournament: the limit, who sits out round 1 (the best of `rating`, else by lot).

              400: not 4-7 participants, a name twice, a rating naming someone else or too few.
              """, status=201, service=tournaments),
    Operation(tournaments_blp, "/rounds", "RecordRound", "recordTournamentRound",
              RecordRoundSchema(), "record_round", TournamentAnswerSchema, Tournaments.record_round,
              (*_REFUSED, "illegal-action"),
              """Record the round `next_players` played: their points in seat order and the winning seat.

              The new state and events (`tournament_round`, `eliminated`, `tournament_over`). 400: not 4 points,
              points out of 0..200, the winner's points not 0, a state that does not add up; 409: the
              tournament is over.
              """, service=tournaments),
    Operation(tournaments_blp, "/standings", "Standings", "getTournamentStandings",
              TournamentCarrierSchema(), "standings", StandingsAnswerSchema, Tournaments.standings, _REFUSED,
              """Everyone ranked (ties by dynamics, then lot), the next round's four players, whether it is over.""",
              service=tournaments),
)

for _operation in OPERATIONS:
    register(_operation)
