"""The `domino.v1.Engine` servicer: decode -> rules -> encode, nothing else.

Every call carries the whole match state (or, for the Bykovo
micro-tournament, the whole tournament state: `engine_service.edge.tournament_codec`),
so the servicer keeps nothing between calls and any replica answers any call. There is no rules logic and
no status handling here: what a call does is `engine_service.calls` (shared with
the JSON face, `engine_service.edge.json_face`), a state's bytes are
`engine_service.edge.wire`'s, and refusals are the rules' exceptions, which
`engine_service.status` turns into status codes. The only exception is
`Replay`, whose refusal is part of its answer.

A matching game (MatchState) and Kingdomino (KingdominoState) have their own RPCs
(`Apply`, `KingdominoApply` ...: docs/grpc.md "Kingdomino" says why both names stay);
each operation is written once (`_apply`, `_replay` ...) and given the kind's messages
and codecs from one table (`_Kind`: `MATCH`, `KINGDOMINO`). The calls on a GameState
(`SeatBot`, `Hints`, the records') find the kind in the state.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc
from google.protobuf.message import Message

from engine_service import calls, records
from engine_service.calls import EncodingError
from engine_service.edge import codec, game_state, hints_codec, kingdomino_codec, tournament_codec, wire
from engine_service.rules import PRESETS, Game, Kingdomino, MalformedError, Match, Tournament, variants
from engine_service.rules.games import GAMES

Event = dict[str, Any]
M = TypeVar("M", bound=Message)


def _encoded(what: str, encode: Callable[[], M]) -> M:
    """`encode()`, a failure of it turned into EncodingError naming `what` (the answer, the view ...):
    it is our own output that could not be written, not the caller's input."""
    try:
        return encode()
    except (ValueError, KeyError, TypeError) as exc:
        raise EncodingError(f"cannot encode the {what}: {exc}") from exc


def _required(request: Any) -> Any:
    """The request's `state` field, which every call on a game or a tournament needs."""
    if not request.HasField("state"):
        raise MalformedError("state: required (pass back the state of the previous answer)")
    return request.state


# ------------------------------------------------------------ a matching game's messages


def _load_match(state: pb.MatchState) -> Match:
    return wire.decode_state(state.SerializeToString())


def _match_answer(match: Match, events: list[Event]) -> pb.MatchResponse:
    """The new state (written by `wire` straight into the response's field 1) and the events."""
    try:
        state = wire.encode_state(match)
        response = pb.MatchResponse.FromString(wire.state_field(state))
        response.events.extend(codec.events_to_proto(events))
    except (ValueError, KeyError) as exc:  # our output, not the caller's input
        raise EncodingError(f"cannot encode the answer: {exc}") from exc
    if match.shed:  # a round ended: its log entries left the state (docs/records.md)
        response.record_lines.extend(match.shed)
    return response


def _match_view(match: Match, seat: int | None) -> pb.SeatView:
    """What `seat` may see of `match`; not a seat -> the rules' MalformedError ("seat must be ...")."""
    if seat is None or not 0 <= seat < match.players:
        match.view(seat)  # the rules refuse it, naming the seat
    assert seat is not None
    return codec.seat_view_to_proto(match, seat)


def _start_match(request: pb.NewMatchRequest) -> tuple[Match, list[Event]]:
    return calls.new_match(
        request.variant,
        request.players,
        options=codec.options_from_proto(request.variant, request.options),
        seed=request.seed if request.HasField("seed") else None,
        deal=codec.deal_from_proto(request.deal) if request.HasField("deal") else None,
        setup=codec.setup_from_proto(request),
        no_deal=request.no_deal,
        bots=[{"seat": b.seat, "level": b.level} for b in request.bots] or None,
    )


# ------------------------------------------------------------ Kingdomino's messages


def _kingdomino_answer(game: Kingdomino, events: list[Event]) -> pb.KingdominoResponse:
    return _encoded("answer", lambda: pb.KingdominoResponse(state=kingdomino_codec.state_to_proto(game),
                                                            events=kingdomino_codec.events_to_proto(events)))


def _kingdomino_view(game: Kingdomino, player: int | None) -> pb.KingdominoView:
    """What `player` (None: the public) may see; not a player -> the rules' MalformedError."""
    view = game.view_for(player)
    return _encoded("view", lambda: kingdomino_codec.view_to_proto(view))


def _start_kingdomino(request: pb.NewKingdominoRequest) -> tuple[Kingdomino, list[Event]]:
    return calls.new_kingdomino(
        request.players, options=kingdomino_codec.options_from_request(request.options),
        seed=request.seed if request.HasField("seed") else None,
        deal=kingdomino_codec.deal_from_proto(request.deal))


# ------------------------------------------------------------ one table of the kinds


@dataclass(frozen=True)
class _Kind:
    """One game kind on the typed face: its messages and codecs, which the operations below take as data,
    so that each operation (legal actions, apply, replay, view, timeout) is written once for every kind.

    `field` names the kind in `GameState.kind`, `GameResponse.kind` and `HintsResponse.kind`; `seat` is
    the requests' name for a seat (Kingdomino says player); `view_prefix` is prefixed to a View refusal
    when the rules' message does not already name the field (Kingdomino's "player must be ..." does not
    say which field of the request held it; a matching game's "seat must be ..." does).
    """

    field: str
    seat: str
    load: Callable[[Any], Game]
    answer: Callable[[Any, list[Event]], Message]
    view: Callable[[Any, int | None], Message]
    start: Callable[[Any], tuple[Game, list[Event]]]
    legal: Callable[..., Message]      # the legal actions' response message
    replayed: Callable[..., Message]   # Replay's response message
    view_prefix: str | None


MATCH = _Kind("match", "seat", _load_match, _match_answer, _match_view, _start_match,
              pb.LegalActionsResponse, pb.ReplayResponse, None)
KINGDOMINO = _Kind("kingdomino", "player", kingdomino_codec.state_from_proto, _kingdomino_answer, _kingdomino_view,
                   _start_kingdomino, pb.KingdominoLegalResponse, pb.KingdominoReplayResponse, "player")
_BY_CLASS: dict[type, _Kind] = {Match: MATCH, Kingdomino: KINGDOMINO}


def _prefixed(where: str | None, view: Callable[[], Message]) -> Message:
    """`view()`, its MalformedError prefixed with the request's field `where` (None: as it is)."""
    try:
        return view()
    except MalformedError as exc:
        if where is None:
            raise
        raise MalformedError(f"{where}: {exc}") from None


def _optional(request: Any, name: str) -> Any:
    """An optional field's value, None when unset."""
    return getattr(request, name) if request.HasField(name) else None


# The operations, each written once and given the kind of game its RPC serves.

def _new(kind: _Kind, request: Any) -> Message:
    return kind.answer(*kind.start(request))


def _legal_actions(kind: _Kind, request: Any) -> Message:
    game = kind.load(_required(request))
    answer = kind.legal(actions=game.legal_actions())
    if game.to_move is not None:  # a matching game names the seat always; Kingdomino none once over
        setattr(answer, kind.seat, game.to_move)
    return answer


def _apply(kind: _Kind, request: Any) -> Message:
    game = kind.load(_required(request))
    response = kind.answer(game, calls.apply(game, request.action, _optional(request, kind.seat)))
    if request.HasField("view_as"):
        response.view.CopyFrom(_prefixed("view_as", lambda: kind.view(game, request.view_as)))  # type: ignore[attr-defined]
    return response


def _replay(kind: _Kind, request: Any) -> Message:
    game = kind.load(_required(request))
    done = calls.replay(game, request.actions, _optional(request, kind.seat))
    answer = kind.answer(game, done.events)
    fields = kind.replayed.DESCRIPTOR.fields_by_name  # type: ignore[attr-defined]
    carried = {name: getattr(answer, name) for name in answer.DESCRIPTOR.fields_by_name
               if name != "view" and name in fields}  # state, events and (a matching game) record_lines
    return kind.replayed(applied=done.applied, ok=done.ok, failed_index=-1 if done.ok else done.applied,
                         reason=done.reason, error_kind=done.error_kind, **carried)


def _view(kind: _Kind, request: Any) -> Message:
    game = kind.load(_required(request))
    # Kingdomino's player may be absent (the public view); a matching game's seat is always given.
    given = request.DESCRIPTOR.fields_by_name[kind.seat].has_presence
    viewer = _optional(request, kind.seat) if given else getattr(request, kind.seat)
    return _prefixed(kind.view_prefix, lambda: kind.view(game, viewer))


def _timeout(kind: _Kind, request: Any) -> Message:
    game = kind.load(_required(request))
    return kind.answer(game, calls.timeout(game, getattr(request, kind.seat)))


Operation = Callable[[_Kind, Any], Message]


def _rpc(operation: Operation, kind: _Kind) -> Callable[[Any, Any, grpc.ServicerContext], Any]:
    """A servicer method: `operation` for games of `kind`."""

    def method(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        return operation(kind, request)

    method.__doc__ = f"{operation.__name__.strip('_')} on a {kind.field} state"
    return method


# ------------------------------------------------------------ the Bykovo tournament


def _load_tournament(request: Any) -> Tournament:
    """The tournament a request carries in its `state` field."""
    return tournament_codec.load(_required(request))


def _tournament_answer(tournament: Tournament, events: list[Event]) -> pb.TournamentResponse:
    return _encoded("answer", lambda: pb.TournamentResponse(state=tournament_codec.dump(tournament),
                                                            events=tournament_codec.events_to_proto(events)))


# ------------------------------------------------------------ a game of either kind (a GameState)


def _load_game(request: Any) -> tuple[_Kind, Game]:
    """The game of either kind a request carries in its `state` field (a GameState: its `kind` says
    which), read as the JSON face reads sealed bytes (`engine_service.edge.game_state`), and its kind."""
    game = game_state.decode(_required(request).SerializeToString())
    return _BY_CLASS[type(game)], game


def _game_answer(kind: _Kind, game: Game, events: list[Event]) -> pb.GameResponse:
    """A changed game's answer in its own kind's message."""
    answer: dict[str, Any] = {kind.field: kind.answer(game, events)}
    return pb.GameResponse(**answer)


def _game_state(game: Game) -> pb.GameState:
    return _encoded("answer", lambda: pb.GameState.FromString(game_state.encode(game)))


class EngineServicer(pb_grpc.EngineServicer):
    """Stateless: one instance serves every call on every thread."""

    def __init__(self) -> None:
        # The matching presets (MatchState) and the games with a class of their own (`rules.games.GAMES`:
        # Kingdomino, KingdominoState, its own calls).
        self._variants = codec.variants_to_proto([v for v in variants() if v["name"] in PRESETS or v["name"] in GAMES])

    def ListVariants(self, request: pb.ListVariantsRequest, context: grpc.ServicerContext) -> pb.ListVariantsResponse:
        return self._variants

    # ------------------------------------------------------------ one kind of game: the operations by kind
    # Each row is one operation served for a matching game (MatchState) and for Kingdomino (KingdominoState):
    # the RPC names stay two for wire compatibility (docs/grpc.md "Kingdomino"), the code is one.

    NewMatch, NewKingdomino = _rpc(_new, MATCH), _rpc(_new, KINGDOMINO)
    LegalActions, KingdominoLegalActions = _rpc(_legal_actions, MATCH), _rpc(_legal_actions, KINGDOMINO)
    Apply, KingdominoApply = _rpc(_apply, MATCH), _rpc(_apply, KINGDOMINO)
    Replay, KingdominoReplay = _rpc(_replay, MATCH), _rpc(_replay, KINGDOMINO)
    View, KingdominoView = _rpc(_view, MATCH), _rpc(_view, KINGDOMINO)
    Timeout, KingdominoTimeout = _rpc(_timeout, MATCH), _rpc(_timeout, KINGDOMINO)

    # ------------------------------------------------------------ a matching game's rounds

    def StartRound(self, request: pb.StartRoundRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load_match(_required(request))
        deal = codec.deal_from_proto(request.deal) if request.HasField("deal") else None
        return _match_answer(match, calls.start_round(match, deal))

    def Settle(self, request: pb.SettleRequest, context: grpc.ServicerContext) -> pb.MatchResponse:
        match = _load_match(_required(request))
        ending = codec.ending_from_proto(request.ending, "ending")
        if ending not in ("out", "blocked"):
            raise MalformedError(f"ending: ENDING_OUT or ENDING_BLOCKED, not {pb.Ending.Name(request.ending)}")
        events = calls.settle(match, ending, codec.hands_from_proto(request.hands, "hands"),
                              request.last_placer if request.HasField("last_placer") else None)
        return _match_answer(match, events)

    def Suggest(self, request: pb.SuggestRequest, context: grpc.ServicerContext) -> pb.SuggestResponse:
        match = _load_match(_required(request))
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
        return _encoded("standings", lambda: pb.TournamentStandingsResponse(
            standings=tournament_codec.standings_to_proto(tournament.standings()),
            next_players=[] if tournament.over else tournament.next_players(),
            over=tournament.over))

    # ------------------------------------------------------------ either kind of game (a GameState)

    def SeatBot(self, request: pb.SeatBotRequest, context: grpc.ServicerContext) -> pb.GameResponse:
        kind, game = _load_game(request)
        return _game_answer(kind, game, calls.seat_bot(game, request.seat, _optional(request, "level")))

    def EndMatch(self, request: pb.EndMatchRequest, context: grpc.ServicerContext) -> pb.GameResponse:
        kind, game = _load_game(request)
        return _game_answer(kind, game, calls.end_match(game, request.seat, request.how))

    def Hints(self, request: pb.HintsRequest, context: grpc.ServicerContext) -> pb.HintsResponse:
        kind, game = _load_game(request)
        hints = calls.hints(game, request.seat, _optional(request, "budget_ms"), _optional(request, "seed"))
        return _encoded("hints", lambda: hints_codec.hints_to_proto(kind.field, hints))

    def ExportRecord(self, request: pb.ExportRecordRequest,
                     context: grpc.ServicerContext) -> pb.ExportRecordResponse:
        _, game = _load_game(request)
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
