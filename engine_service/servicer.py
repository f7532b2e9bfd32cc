"""The `domino.v1.Engine` servicer: decode -> rules -> encode, nothing else.

Every call carries the whole match state (or, for the Bykovo
micro-tournament, the whole tournament state: `engine_service.tournament_codec`),
so the servicer keeps nothing between calls and any replica answers any call. There is no rules logic and
no status handling here: refusals are the rules' exceptions, which
`engine_service.status` turns into status codes in one place. The only
exception is `Replay`, whose refusal is part of its answer.
"""
from __future__ import annotations

import secrets
from typing import Any

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc

from engine_service import codec, metrics, tournament_codec, wire
from engine_service.rules import (
    PRESETS,
    IllegalActionError,
    MalformedError,
    Match,
    RulesError,
    Tournament,
    variants,
)

Event = dict[str, Any]


class EncodingError(RuntimeError):
    """The rules produced something the codec cannot encode: a bug, answered INTERNAL."""


def _load(request: Any) -> Match:
    """The match a request carries in its `state` field."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return wire.match_from_proto(request.state)  # = Match.from_dict(codec.state_from_proto(...))


def _answer(match: Match, events: list[Event]) -> pb.MatchResponse:
    try:
        response = pb.MatchResponse.FromString(wire.state_field(match))
        response.events.extend(codec.events_to_proto(events))
    except MalformedError as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc
    return response


def _view(match: Match, seat: int) -> pb.SeatView:
    """What `seat` may see of `match` (View, and Apply's `view_as`); not a seat -> MalformedError."""
    if not 0 <= seat < match.players:
        match.view(seat)  # the rules refuse it, naming the seat
    try:
        return codec.seat_view_to_proto(match, seat)
    except MalformedError as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the view: {exc}") from exc


def _load_tournament(request: Any) -> Tournament:
    """The tournament a request carries in its `state` field."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return tournament_codec.load(request.state)


def _tournament_answer(tournament: Tournament, events: list[Event]) -> pb.TournamentResponse:
    try:
        return pb.TournamentResponse(state=tournament_codec.dump(tournament),
                                     events=tournament_codec.events_to_proto(events))
    except MalformedError as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc


class EngineServicer(pb_grpc.EngineServicer):
    """Stateless: one instance serves every call on every thread."""

    def __init__(self) -> None:
        # Only what MatchState carries: Kingdomino is played through the library for now.
        self._variants = codec.variants_to_proto([v for v in variants() if v["name"] in PRESETS])

    def ListVariants(self, request: pb.ListVariantsRequest, context: grpc.ServicerContext) -> pb.ListVariantsResponse:
        return self._variants

    def NewMatch(self, request: pb.NewMatchRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        has_deal = request.HasField("deal")
        if has_deal and request.no_deal:
            raise MalformedError("deal and no_deal: give one or the other")
        match, events = Match.new(
            request.variant,
            request.players,
            options=codec.options_from_proto(request.variant, request.options),
            seed=request.seed if request.HasField("seed") else None,
            deal=codec.deal_from_proto(request.deal) if has_deal else None,
            setup=codec.setup_from_proto(request),
            no_deal=request.no_deal,
        )
        return _answer(match, events)

    def StartRound(self, request: pb.StartRoundRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        deal = codec.deal_from_proto(request.deal) if request.HasField("deal") else None
        return _answer(match, match.start_round(deal))

    def LegalActions(self, request: pb.StateRequest, context: grpc.ServicerContext) -> pb.LegalActionsResponse:
        match = _load(request)
        return pb.LegalActionsResponse(seat=match.to_move, actions=match.legal_actions())

    def Apply(self, request: pb.ApplyRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        try:
            events = match.apply(request.action, request.seat if request.HasField("seat") else None)
        except IllegalActionError:
            metrics.record_illegal(match.variant)
            raise
        # Before the metrics: a view_as that is not a seat refuses the whole call (INVALID_ARGUMENT).
        view = None
        if request.HasField("view_as"):
            try:
                view = _view(match, request.view_as)
            except MalformedError as exc:
                raise MalformedError(f"view_as: {exc}") from exc
        metrics.record_actions(match.variant, (request.action,))
        metrics.record_events(match.variant, events)
        response = _answer(match, events)
        if view is not None:
            response.view.CopyFrom(view)
        return response

    def Replay(self, request: pb.ReplayRequest, context: grpc.ServicerContext) -> pb.ReplayResponse:
        match = _load(request)
        events: list[Event] = []
        refused: RulesError | None = None
        applied = 0
        for action in request.actions:
            try:
                events.extend(match.apply(action))
            except RulesError as exc:  # the match is left as it was before this action
                refused = exc
                break
            applied += 1
        metrics.record_actions(match.variant, request.actions[:applied])
        metrics.record_events(match.variant, events)
        answer = _answer(match, events)
        response = pb.ReplayResponse(
            state=answer.state, events=answer.events, applied=applied, ok=refused is None,
            failed_index=-1 if refused is None else applied)
        if refused is not None:
            response.reason = str(refused)
            if isinstance(refused, IllegalActionError):
                response.error_kind = "illegal"
                metrics.record_illegal(match.variant)
            else:
                response.error_kind = "malformed"
        return response

    def Settle(self, request: pb.SettleRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        ending = codec.ending_from_proto(request.ending, "ending")
        if ending not in ("out", "blocked"):
            raise MalformedError(f"ending: ENDING_OUT or ENDING_BLOCKED, not {pb.Ending.Name(request.ending)}")
        events = match.settle(
            ending, codec.hands_from_proto(request.hands, "hands"),
            request.last_placer if request.HasField("last_placer") else None)
        metrics.record_events(match.variant, events)
        return _answer(match, events)

    def View(self, request: pb.ViewRequest, context: grpc.ServicerContext) -> pb.SeatView:
        return _view(_load(request), request.seat)

    def Timeout(self, request: pb.TimeoutRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        events = match.timeout(request.seat)
        metrics.record_events(match.variant, events)
        return _answer(match, events)

    # ------------------------------------------------------------ Bykovo micro-tournament (B)

    def CreateTournament(self, request: pb.CreateTournamentRequest,
                         context: grpc.ServicerContext) -> pb.TournamentResponse:
        seed = request.seed if request.HasField("seed") else secrets.randbits(63)
        tournament = Tournament.create(list(request.participants), seed, list(request.rating) or None)
        return _tournament_answer(tournament, [])

    def RecordTournamentRound(self, request: pb.RecordTournamentRoundRequest,
                              context: grpc.ServicerContext) -> pb.TournamentResponse:
        tournament = _load_tournament(request)
        if not request.HasField("winner"):
            raise MalformedError("winner: required (the seat 0..3 that won the round)")
        events = tournament.record_round(list(request.points), request.winner)
        return _tournament_answer(tournament, events)

    def TournamentStandings(self, request: pb.TournamentStateRequest,
                            context: grpc.ServicerContext) -> pb.TournamentStandingsResponse:
        tournament = _load_tournament(request)
        try:
            return pb.TournamentStandingsResponse(
                standings=tournament_codec.standings_to_proto(tournament.standings()),
                next_players=[] if tournament.over else tournament.next_players(),
                over=tournament.over)
        except MalformedError as exc:
            raise EncodingError(f"cannot encode the standings: {exc}") from exc
