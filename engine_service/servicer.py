"""The `domino.v1.Engine` servicer: decode -> rules -> encode, nothing else.

Every call carries the whole match state (or, for the Bykovo
micro-tournament, the whole tournament state: `engine_service.edge.tournament_codec`),
so the servicer keeps nothing between calls and any replica answers any call. There is no rules logic and
no status handling here: what a call does is `engine_service.calls` (shared with
the JSON face, `engine_service.edge.json_face`), a state's bytes are
`engine_service.edge.wire`'s, and refusals are the rules' exceptions, which
`engine_service.status` turns into status codes. The only exception is
`Replay`, whose refusal is part of its answer.
"""
from __future__ import annotations

import secrets
from typing import Any

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc

from engine_service import calls, records
from engine_service.calls import EncodingError
from engine_service.edge import codec, game_state, hints_codec, kingdomino_codec, tournament_codec, wire
from engine_service.rules import PRESETS, Game, Kingdomino, MalformedError, Match, Tournament, variants
from engine_service.rules.games import GAMES

Event = dict[str, Any]


def _load(request: Any) -> Match:
    """The match a request carries in its `state` field."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return wire.decode_state(request.state.SerializeToString())


def _answer(match: Match, events: list[Event]) -> pb.MatchResponse:
    """The new state (written by `wire` straight into the response's field 1) and the events."""
    try:
        state = wire.encode_state(match)
        response = pb.MatchResponse.FromString(b"\x0a" + _length(len(state)) + state)
        response.events.extend(codec.events_to_proto(events))
    except (ValueError, KeyError) as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc
    if match.shed:  # a round ended: its log entries left the state (docs/records.md)
        response.record_lines.extend(match.shed)
    return response


def _length(n: int) -> bytes:
    out = bytearray()
    while n > 127:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


def _view(match: Match, seat: int) -> pb.SeatView:
    """What `seat` may see of `match` (View, and Apply's `view_as`); not a seat -> MalformedError."""
    if not 0 <= seat < match.players:
        match.view(seat)  # the rules refuse it, naming the seat
    return codec.seat_view_to_proto(match, seat)


def _load_tournament(request: Any) -> Tournament:
    """The tournament a request carries in its `state` field."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return tournament_codec.load(request.state)


def _tournament_answer(tournament: Tournament, events: list[Event]) -> pb.TournamentResponse:
    try:
        return pb.TournamentResponse(state=tournament_codec.dump(tournament),
                                     events=tournament_codec.events_to_proto(events))
    except (ValueError, KeyError, TypeError) as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc


def _load_kingdomino(request: Any) -> Kingdomino:
    """The Kingdomino game a request carries in its `state` field."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return kingdomino_codec.state_from_proto(request.state)


def _kingdomino_answer(game: Kingdomino, events: list[Event]) -> pb.KingdominoResponse:
    try:
        return pb.KingdominoResponse(state=kingdomino_codec.state_to_proto(game),
                                     events=kingdomino_codec.events_to_proto(events))
    except (ValueError, KeyError, TypeError) as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc


def _kingdomino_view(game: Kingdomino, player: int | None, where: str) -> pb.KingdominoView:
    """What `player` (None: the public) may see; not a player -> MalformedError naming `where`."""
    try:
        view = game.view_for(player)
    except MalformedError as exc:
        raise MalformedError(f"{where}: {exc}") from None
    try:
        return kingdomino_codec.view_to_proto(view)
    except (ValueError, KeyError, TypeError) as exc:
        raise EncodingError(f"cannot encode the view: {exc}") from exc


def _load_game(request: Any) -> Game:
    """The game of either kind a request carries in its `state` field (a GameState: its `kind` says
    which), read as the JSON face reads sealed bytes (`engine_service.edge.game_state`)."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return game_state.decode(request.state.SerializeToString())


def _kind(game: Game) -> str:
    """The field of `GameState.kind` (and of `GameResponse.kind`, `HintsResponse.kind`) that holds `game`."""
    return "kingdomino" if isinstance(game, Kingdomino) else "match"


def _game_answer(game: Game, events: list[Event]) -> pb.GameResponse:
    """A changed game's answer in its own kind's message."""
    if isinstance(game, Kingdomino):
        return pb.GameResponse(kingdomino=_kingdomino_answer(game, events))
    assert isinstance(game, Match)
    return pb.GameResponse(match=_answer(game, events))


def _game_state(game: Game) -> pb.GameState:
    try:
        return pb.GameState.FromString(game_state.encode(game))
    except (ValueError, KeyError, TypeError) as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc


class EngineServicer(pb_grpc.EngineServicer):
    """Stateless: one instance serves every call on every thread."""

    def __init__(self) -> None:
        # The matching presets (MatchState) and the games with a class of their own (`rules.games.GAMES`:
        # Kingdomino, KingdominoState, its own calls).
        self._variants = codec.variants_to_proto([v for v in variants() if v["name"] in PRESETS or v["name"] in GAMES])

    def ListVariants(self, request: pb.ListVariantsRequest, context: grpc.ServicerContext) -> pb.ListVariantsResponse:
        return self._variants

    def NewMatch(self, request: pb.NewMatchRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match, events = calls.new_match(
            request.variant,
            request.players,
            options=codec.options_from_proto(request.variant, request.options),
            seed=request.seed if request.HasField("seed") else None,
            deal=codec.deal_from_proto(request.deal) if request.HasField("deal") else None,
            setup=codec.setup_from_proto(request),
            no_deal=request.no_deal,
            bots=[{"seat": b.seat, "level": b.level} for b in request.bots] or None,
        )
        return _answer(match, events)

    def StartRound(self, request: pb.StartRoundRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        deal = codec.deal_from_proto(request.deal) if request.HasField("deal") else None
        return _answer(match, calls.start_round(match, deal))

    def LegalActions(self, request: pb.StateRequest, context: grpc.ServicerContext) -> pb.LegalActionsResponse:
        match = _load(request)
        return pb.LegalActionsResponse(seat=match.to_move, actions=match.legal_actions())

    def Apply(self, request: pb.ApplyRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        events = calls.apply(match, request.action, request.seat if request.HasField("seat") else None)
        response = _answer(match, events)
        if request.HasField("view_as"):
            try:
                response.view.CopyFrom(_view(match, request.view_as))
            except MalformedError as exc:
                raise MalformedError(f"view_as: {exc}") from exc
        return response

    def Replay(self, request: pb.ReplayRequest, context: grpc.ServicerContext) -> pb.ReplayResponse:
        match = _load(request)
        done = calls.replay(match, request.actions)
        answer = _answer(match, done.events)
        return pb.ReplayResponse(state=answer.state, events=answer.events, applied=done.applied, ok=done.ok,
                                 failed_index=-1 if done.ok else done.applied, reason=done.reason,
                                 error_kind=done.error_kind, record_lines=answer.record_lines)

    def Settle(self, request: pb.SettleRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        ending = codec.ending_from_proto(request.ending, "ending")
        if ending not in ("out", "blocked"):
            raise MalformedError(f"ending: ENDING_OUT or ENDING_BLOCKED, not {pb.Ending.Name(request.ending)}")
        events = calls.settle(match, ending, codec.hands_from_proto(request.hands, "hands"),
                              request.last_placer if request.HasField("last_placer") else None)
        return _answer(match, events)

    def View(self, request: pb.ViewRequest, context: grpc.ServicerContext) -> pb.SeatView:
        return _view(_load(request), request.seat)

    def Timeout(self, request: pb.TimeoutRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load(request)
        return _answer(match, calls.timeout(match, request.seat))

    def Suggest(self, request: pb.SuggestRequest, context: grpc.ServicerContext) -> pb.SuggestResponse:
        match = _load(request)
        seat, action = calls.suggest(match, request.level,
                                     request.budget_ms if request.HasField("budget_ms") else None,
                                     request.seed if request.HasField("seed") else None)
        return pb.SuggestResponse(seat=seat, action=action)

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
        except (ValueError, KeyError, TypeError) as exc:
            raise EncodingError(f"cannot encode the standings: {exc}") from exc

    # ------------------------------------------------------------ Kingdomino (KD)

    def NewKingdomino(self, request: pb.NewKingdominoRequest,
                      context: grpc.ServicerContext) -> pb.KingdominoResponse:
        game, events = calls.new_kingdomino(
            request.players, options=kingdomino_codec.options_from_request(request.options),
            seed=request.seed if request.HasField("seed") else None,
            deal=kingdomino_codec.deal_from_proto(request.deal))
        return _kingdomino_answer(game, events)

    def KingdominoLegalActions(self, request: pb.KingdominoStateRequest,
                               context: grpc.ServicerContext) -> pb.KingdominoLegalResponse:
        game = _load_kingdomino(request)
        answer = pb.KingdominoLegalResponse(actions=game.legal_actions())
        if game.to_move is not None:
            answer.player = game.to_move
        return answer

    def KingdominoApply(self, request: pb.KingdominoApplyRequest,
                        context: grpc.ServicerContext) -> pb.KingdominoResponse:
        game = _load_kingdomino(request)
        events = calls.apply(game, request.action, request.player if request.HasField("player") else None)
        response = _kingdomino_answer(game, events)
        if request.HasField("view_as"):
            response.view.CopyFrom(_kingdomino_view(game, request.view_as, "view_as"))
        return response

    def KingdominoReplay(self, request: pb.KingdominoReplayRequest,
                         context: grpc.ServicerContext) -> pb.KingdominoReplayResponse:
        game = _load_kingdomino(request)
        done = calls.replay(game, request.actions)
        answer = _kingdomino_answer(game, done.events)
        return pb.KingdominoReplayResponse(state=answer.state, events=answer.events, applied=done.applied,
                                           ok=done.ok, failed_index=-1 if done.ok else done.applied,
                                           reason=done.reason, error_kind=done.error_kind)

    def KingdominoView(self, request: pb.KingdominoViewRequest,
                       context: grpc.ServicerContext) -> pb.KingdominoView:
        game = _load_kingdomino(request)
        return _kingdomino_view(game, request.player if request.HasField("player") else None, "player")

    def KingdominoTimeout(self, request: pb.KingdominoTimeoutRequest,
                          context: grpc.ServicerContext) -> pb.KingdominoResponse:
        game = _load_kingdomino(request)
        return _kingdomino_answer(game, calls.timeout(game, request.player))

    # ------------------------------------------------------------ either kind of game (a GameState)

    def SeatBot(self, request: pb.SeatBotRequest, context: grpc.ServicerContext) -> pb.GameResponse:
        game = _load_game(request)
        level = request.level if request.HasField("level") else None
        return _game_answer(game, calls.seat_bot(game, request.seat, level))

    def Hints(self, request: pb.HintsRequest, context: grpc.ServicerContext) -> pb.HintsResponse:
        game = _load_game(request)
        hints = calls.hints(game, request.seat, request.budget_ms if request.HasField("budget_ms") else None,
                            request.seed if request.HasField("seed") else None)
        try:
            return hints_codec.hints_to_proto(_kind(game), hints)
        except (ValueError, KeyError, TypeError) as exc:
            raise EncodingError(f"cannot encode the hints: {exc}") from exc

    def ExportRecord(self, request: pb.ExportRecordRequest,
                     context: grpc.ServicerContext) -> pb.ExportRecordResponse:
        game = _load_game(request)
        names: list[str | None] = [name or None for name in request.names]
        record = records.export(game, request.view or "full", names or None, list(request.prior) or None)
        return pb.ExportRecordResponse(text=records.to_text(record))

    def ImportRecord(self, request: pb.ImportRecordRequest,
                     context: grpc.ServicerContext) -> pb.ImportRecordResponse:
        record = records.from_text(request.text)
        game = calls.import_record(record)
        answer = pb.ImportRecordResponse(text=records.to_text(record), moves=len(record.moves))
        if game is not None:
            answer.state.CopyFrom(_game_state(game))
            answer.record_lines.extend(game.shed)
        return answer

    def ReplayRecord(self, request: pb.ReplayRecordRequest,
                     context: grpc.ServicerContext) -> pb.ReplayRecordResponse:
        record = records.from_text(request.text)
        upto = request.upto if request.HasField("upto") else None
        game = records.replay(record, upto)
        return pb.ReplayRecordResponse(state=_game_state(game), move=upto or len(record.moves),
                                       moves=len(record.moves), record_lines=game.shed)
