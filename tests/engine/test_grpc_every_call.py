"""The typed face's calls on a game of either kind (SeatBot, Hints, ExportRecord, ImportRecord, ReplayRecord):
each answers what the JSON face answers for the same call, over a real engine."""
from __future__ import annotations

from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service import records
from engine_service.edge import game_state, kingdomino_codec, wire
from engine_service.rules import Game, Kingdomino, Match

pytestmark = pytest.mark.service

Json = dict[str, Any]


def _json(method: Any, args: Json, state: bytes = b"") -> Json:
    reply = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=30)
    answer: Json = orjson.loads(reply.answer)
    return answer


def _sealed(game: Game) -> pb.GameState:
    return pb.GameState.FromString(game_state.encode(game))


def _played(variant: str, players: int, seed: int, moves: int) -> Match:
    """A match `moves` actions in (the first legal action each time), its log whole."""
    match, _ = Match.new(variant, players, seed=seed)
    for _ in range(moves):
        if match.round is None or match.round.over:
            break
        match.apply(match.legal_actions()[0])
    return match


def _kingdomino(seed: int, moves: int) -> Kingdomino:
    game, _ = Kingdomino.new(2, seed=seed)
    for _ in range(moves):
        game.apply(game.legal_actions()[0])
    return game


def _state_of(answer: pb.GameResponse) -> Json:
    """The JSON state of a typed GameResponse, whichever kind it holds."""
    if answer.WhichOneof("kind") == "kingdomino":
        return kingdomino_codec.state_from_proto(answer.kingdomino.state).to_dict()
    return wire.decode_state(answer.match.state.SerializeToString()).to_dict()


def _game_of(state: pb.GameState) -> Json:
    return game_state.decode(state.SerializeToString()).to_dict()


def test_seat_bot_answers_the_state_the_json_face_answers(stub: engine_pb2_grpc.EngineStub,
                                                          json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    for game in (_played("kozel", 4, 5, 3), _kingdomino(5, 2)):
        seat = game.turn
        assert seat is not None
        typed = stub.SeatBot(pb.SeatBotRequest(state=_sealed(game), seat=seat, level="greedy"), timeout=30)
        plain = _json(json_stub.SeatBot, {"state": game.to_dict(), "seat": seat, "level": "greedy"})
        assert typed.WhichOneof("kind") == ("kingdomino" if isinstance(game, Kingdomino) else "match")
        assert _state_of(typed) == plain["state"] and plain["events"]  # the bot moved for the seat
        events = typed.kingdomino.events if isinstance(game, Kingdomino) else typed.match.events
        assert len(events) == len(plain["events"])
        back = stub.SeatBot(pb.SeatBotRequest(state=_sealed(game), seat=seat), timeout=30)  # a person again
        again = _json(json_stub.SeatBot, {"state": game.to_dict(), "seat": seat, "level": None})
        assert _state_of(back) == again["state"] and not again["events"]


def _match_hints(hints: pb.MatchHints) -> Json:
    return {"seat": hints.seat, "worlds": hints.worlds, "history_used": hints.history_used,
            "proven_missing": [list(n.numbers) for n in hints.proven_missing],
            "whereabouts": {t: {"hands": list(w.hands), "boneyard": w.boneyard} for t, w in hints.whereabouts.items()},
            "values": dict(hints.values), "relaxed": hints.relaxed}


def test_hints_for_a_seat_equal_the_json_faces(stub: engine_pb2_grpc.EngineStub,
                                               json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    match = _played("block", 2, 8, 3)
    for seat in range(2):  # the seat to move (values) and the other (none)
        typed = stub.Hints(pb.HintsRequest(state=_sealed(match), seat=seat, seed=3), timeout=30)
        plain = _json(json_stub.Hints, {"state": match.to_dict(), "seat": seat, "seed": 3})["hints"]
        assert typed.WhichOneof("kind") == "match" and _match_hints(typed.match) == plain
    assert plain["whereabouts"] and any(h["values"] for h in [_json(json_stub.Hints, {
        "state": match.to_dict(), "seat": match.to_move, "seed": 3})["hints"]])
    game = _kingdomino(4, 1)
    typed = stub.Hints(pb.HintsRequest(state=_sealed(game), seat=game.to_move, seed=2), timeout=60)
    plain = _json(json_stub.Hints, {"state": game.to_dict(), "seat": game.to_move, "seed": 2})["hints"]
    assert typed.WhichOneof("kind") == "kingdomino" and plain["values"]
    assert {"player": typed.kingdomino.player, "pile": {str(t): p for t, p in typed.kingdomino.pile.items()},
            "values": dict(typed.kingdomino.values)} == plain


def test_hints_refusals_are_the_json_faces(stub: engine_pb2_grpc.EngineStub,
                                           json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    match, _ = Match.new("kozel", 4, seed=1, no_deal=True)
    codes = []
    for call in (lambda: stub.Hints(pb.HintsRequest(state=_sealed(match), seat=0), timeout=10),
                 lambda: _json(json_stub.Hints, {"state": match.to_dict(), "seat": 0}),
                 lambda: stub.Hints(pb.HintsRequest(state=_sealed(_played("kozel", 4, 1, 0)), seat=9), timeout=10),
                 lambda: _json(json_stub.Hints, {"state": _played("kozel", 4, 1, 0).to_dict(), "seat": 9}),
                 lambda: stub.Hints(pb.HintsRequest(), timeout=10)):
        with pytest.raises(grpc.RpcError) as info:
            call()
        codes.append((info.value.code(), info.value.details()))
    assert codes[0] == codes[1] and codes[0][0] == grpc.StatusCode.FAILED_PRECONDITION
    assert codes[2] == codes[3] and codes[2][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert codes[4] == (grpc.StatusCode.INVALID_ARGUMENT, "state: required (pass back the state of the previous "
                                                          "answer)")


def test_export_record_text_equals_the_json_faces(stub: engine_pb2_grpc.EngineStub,
                                                  json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    for game in (_played("kozel", 4, 7, 9), _kingdomino(7, 5)):
        names = ["Ann", None] + ["Cid"] * (game.players - 2)
        for view in ("full", "spectator", "seat 1"):
            typed = stub.ExportRecord(pb.ExportRecordRequest(state=_sealed(game), view=view,
                                                             names=[n or "" for n in names]), timeout=30)
            plain = _json(json_stub.ExportRecord, {"state": game.to_dict(), "view": view, "names": names})
            assert typed.text == plain["text"] and records.from_text(typed.text) == records.from_json(plain["record"])
        default = stub.ExportRecord(pb.ExportRecordRequest(state=_sealed(game)), timeout=30)
        assert default.text == _json(json_stub.ExportRecord, {"state": game.to_dict()})["text"]


def test_import_and_replay_record_equal_the_json_faces(stub: engine_pb2_grpc.EngineStub,
                                                       json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    for game in (_played("osel", 3, 2, 12), _kingdomino(2, 6)):
        for view in ("full", "seat 0"):
            text = records.to_text(records.export(game, view))
            typed = stub.ImportRecord(pb.ImportRecordRequest(text=text), timeout=30)
            plain = _json(json_stub.ImportRecord, {"text": text})
            assert (typed.text, typed.moves, list(typed.record_lines)) == (
                plain["text"], plain["moves"], plain.get("record_lines", []))
            assert (_game_of(typed.state) if typed.HasField("state") else None) == plain["state"]
        text = records.to_text(records.export(game, "full"))
        for upto in (1, 3, None):
            request = pb.ReplayRecordRequest(text=text) if upto is None else pb.ReplayRecordRequest(text=text, upto=upto)
            typed_replay = stub.ReplayRecord(request, timeout=30)
            plain = _json(json_stub.ReplayRecord, {"text": text} if upto is None else {"text": text, "upto": upto})
            assert (_game_of(typed_replay.state), typed_replay.move, typed_replay.moves,
                    list(typed_replay.record_lines)) == (plain["state"], plain["move"], plain["moves"],
                                                         plain.get("record_lines", []))
    with pytest.raises(grpc.RpcError) as info:
        stub.ImportRecord(pb.ImportRecordRequest(text="not a record"), timeout=10)
    with pytest.raises(grpc.RpcError) as other:
        _json(json_stub.ImportRecord, {"text": "not a record"})
    assert (info.value.code(), info.value.details()) == (other.value.code(), other.value.details())
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_replay_for_one_seat_equals_the_json_faces(stub: engine_pb2_grpc.EngineStub,
                                                   json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    """Replay's `seat` (each action must be that seat's), on both kinds of game: found missing from the typed
    requests by tests/test_contract.py."""
    match = _played("block", 2, 3, 0)
    mover = match.to_move
    trial = match.copy()
    actions = [trial.legal_actions()[0]]
    trial.apply(actions[0])
    actions.append(trial.legal_actions()[0])  # the other seat's: refused when replaying for `mover`
    state = pb.MatchState.FromString(wire.encode_state(match))
    typed = stub.Replay(pb.ReplayRequest(state=state, actions=actions, seat=mover), timeout=30)
    plain = _json(json_stub.Replay, {"state": match.to_dict(), "actions": actions, "seat": mover})
    assert (typed.ok, typed.applied, typed.failed_index, typed.reason, typed.error_kind) == (
        plain["ok"], plain["applied"], plain["failed_index"], plain["reason"], plain["error_kind"])
    assert not typed.ok and typed.applied == 1 and typed.error_kind == "illegal"
    game = _kingdomino(3, 0)
    first = game.legal_actions()[0]
    other = (game.to_move + 1) % game.players
    replayed = stub.KingdominoReplay(pb.KingdominoReplayRequest(state=kingdomino_codec.state_to_proto(game),
                                                                actions=[first], player=other), timeout=30)
    plain = _json(json_stub.Replay, {"state": game.to_dict(), "actions": [first], "seat": other})
    assert (replayed.ok, replayed.applied, replayed.reason) == (plain["ok"], plain["applied"], plain["reason"])
    assert not replayed.ok
