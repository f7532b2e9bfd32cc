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

from flask import Response, current_app
from flask.views import MethodView

from api_gateway.engine import Engine
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, ENGINE, EXAMPLES, operation
from api_gateway.http.routes import answer
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


@tournaments_blp.route("")
class NewTournament(MethodView):
    @tournaments_blp.arguments(NewTournamentSchema(), examples=EXAMPLES["new_tournament"])
    @tournaments_blp.response(201, TournamentAnswerSchema)
    @operation(tournaments_blp, "createTournament", *_REFUSED)
    def post(self, body: Json) -> Response:
        """Start a micro-tournament: the limit, who sits out round 1 (the best of `rating`, else by lot).

        400: not 4-7 participants, a name twice, a rating naming someone else or too few.
        """
        return answer(tournaments().create(body), 201)


@tournaments_blp.route("/rounds")
class RecordRound(MethodView):
    @tournaments_blp.arguments(RecordRoundSchema(), examples=EXAMPLES["record_round"])
    @tournaments_blp.response(200, TournamentAnswerSchema)
    @operation(tournaments_blp, "recordTournamentRound", *_REFUSED, "illegal-action")
    def post(self, body: Json) -> Response:
        """Record the round `next_players` played: their points in seat order and the winning seat.

        The new state and events (`tournament_round`, `eliminated`, `tournament_over`). 400: not 4 points,
        points out of 0..200, the winner's points not 0, a state that does not add up; 409: the
        tournament is over.
        """
        return answer(tournaments().record_round(body))


@tournaments_blp.route("/standings")
class Standings(MethodView):
    @tournaments_blp.arguments(TournamentCarrierSchema(), examples=EXAMPLES["standings"])
    @tournaments_blp.response(200, StandingsAnswerSchema)
    @operation(tournaments_blp, "getTournamentStandings", *_REFUSED)
    def post(self, body: Json) -> Response:
        """Everyone ranked (ties by dynamics, then lot), the next round's four players, whether it is over."""
        return answer(tournaments().standings(body))
