"""Computer opponents over gRPC (issue 15): typed Suggest and NewMatch bots; JsonEngine Suggest and Hints."""
from __future__ import annotations

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service.edge import wire
from engine_service.rules import Kingdomino, Match

pytestmark = pytest.mark.service


def test_typed_suggest_is_a_legal_reproducible_move(stub: engine_pb2_grpc.EngineStub) -> None:
    created = stub.NewMatch(pb.NewMatchRequest(variant="block", players=2, seed=8), timeout=10)
    match = wire.decode_state(created.state.SerializeToString())
    answers = set()
    for _ in range(2):
        reply = stub.Suggest(pb.SuggestRequest(state=created.state, level="expert", seed=4), timeout=10)
        assert reply.seat == match.to_move and reply.action in match.legal_actions()
        answers.add(reply.action)
    assert len(answers) == 1
    with pytest.raises(grpc.RpcError) as info:
        stub.Suggest(pb.SuggestRequest(state=created.state, level="genius"), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_typed_new_match_with_bots_stops_at_the_human_turn(stub: engine_pb2_grpc.EngineStub) -> None:
    bots = [pb.BotSeat(seat=1, level="greedy"), pb.BotSeat(seat=2, level="random"), pb.BotSeat(seat=3, level="expert")]
    reply = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=21, bots=bots), timeout=20)
    match = wire.decode_state(reply.state.SerializeToString())
    assert match.bots == {1: "greedy", 2: "random", 3: "expert"}
    assert match.round is not None and (match.round.to_move == 0 or match.round.over)


def _call(method: object, args: dict[str, object], state: bytes = b"") -> dict[str, object]:
    reply = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=20)  # type: ignore[operator]
    answer: dict[str, object] = orjson.loads(reply.answer)
    return answer


def test_json_face_suggest_and_hints_for_both_kinds_of_game(json_stub: engine_pb2_grpc.JsonEngineStub) -> None:
    match, _ = Match.new("osel", 3, seed=6)
    answer = _call(json_stub.Suggest, {"state": match.to_dict(), "level": "greedy"})
    assert answer["seat"] == match.to_move and answer["action"] in match.legal_actions()
    game, _ = Kingdomino.new(2, seed=6)
    answer = _call(json_stub.Suggest, {"state": game.to_dict(), "level": "expert", "budget_ms": 300})
    assert answer["seat"] == game.to_move and answer["action"] in game.legal_actions()
    hints = _call(json_stub.Hints, {"state": match.to_dict(), "seat": 1})["hints"]
    assert isinstance(hints, dict) and hints["seat"] == 1
    sealed = wire.encode_state(match)
    other = (match.to_move + 1) % 3
    with pytest.raises(grpc.RpcError) as info:
        _call(json_stub.Suggest, {"level": "random", "view_as": other}, sealed)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    mine = _call(json_stub.Suggest, {"level": "random", "view_as": match.to_move}, sealed)
    assert mine["action"] in match.legal_actions()
