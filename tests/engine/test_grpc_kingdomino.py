"""Kingdomino over gRPC (issue 14): the typed Engine's Kingdomino calls and the JSON face, on a real engine.

The typed calls play the very game the library plays (states, events and views
compared with `engine_service.rules.Kingdomino`'s), the view hides the pile's
order, every bad input of tests/variants/test_kingdomino_bad_input.py is refused
with its status (INVALID_ARGUMENT / FAILED_PRECONDITION) and the rules' reason,
Dynasty plays to its total, and the JSON face carries the same games
transparently and sealed (the sealed bytes are the engine's KingdominoState).
"""
from __future__ import annotations

import random
import re
from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from variants.test_kingdomino_bad_input import CASES, DEAL

from engine_service.edge import game_state, kingdomino_codec
from engine_service.rules import IllegalActionError, Kingdomino, MalformedError

pytestmark = pytest.mark.service

Json = dict[str, Any]
CODES = {MalformedError: grpc.StatusCode.INVALID_ARGUMENT, IllegalActionError: grpc.StatusCode.FAILED_PRECONDITION}


def _deal(deal: Json = DEAL) -> pb.KingdominoDeal:
    return pb.KingdominoDeal(tiles=deal["tiles"], kings=deal["kings"])


def _as_dict(state: pb.KingdominoState) -> Json:
    return kingdomino_codec.state_to_dict(state)


def _events(events: Any) -> list[str]:
    return [e.WhichOneof("kind") for e in events]


def test_a_seeded_game_played_through_the_typed_calls_is_the_library_game(stub: Any) -> None:
    rng = random.Random(5)
    for players, options in ((2, {}), (3, {"harmony": "true"}), (4, {"middle_kingdom": "true"}),
                             (2, {"mighty_duel": "true"})):
        answer = stub.NewKingdomino(pb.NewKingdominoRequest(players=players, seed=11, options=options))
        game, events = Kingdomino.new(players, options={k: v == "true" for k, v in options.items()}, seed=11)
        assert _as_dict(answer.state) == game.to_dict()
        assert _events(answer.events) == [e["type"] for e in events] == ["game_started", "row_laid"]
        state, moves = answer.state, 0
        while not game.game_over:
            legal = stub.KingdominoLegalActions(pb.KingdominoStateRequest(state=state))
            assert (legal.player, list(legal.actions)) == (game.to_move, game.legal_actions())
            action = rng.choice(game.legal_actions())
            answer = stub.KingdominoApply(pb.KingdominoApplyRequest(state=state, action=action,
                                                                    player=game.to_move))
            assert _events(answer.events) == [e["type"] for e in game.apply(action)]
            state, moves = answer.state, moves + 1
        assert _as_dict(state) == game.to_dict()
        legal = stub.KingdominoLegalActions(pb.KingdominoStateRequest(state=state))
        assert not legal.HasField("player") and list(legal.actions) == []
        end = answer.events[-1].game_over
        assert (list(end.scores), list(end.winners), end.decided_by) == (
            game.scores(), game.winners(), game.ranking()[1])
        assert moves == 2 * game.cfg.tiles


def test_events_carry_picks_placements_discards_rows_and_the_end_with_its_tie_break(stub: Any) -> None:
    game, _ = Kingdomino.new(2, deal=DEAL)
    actions = []
    while not game.game_over:
        legal = game.legal_actions()
        action = next((a for a in legal if a.startswith("discard")), legal[-1])
        actions.append(action)
        game.apply(action)
    start = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, deal=[_deal()]))
    assert not start.events[0].game_started.HasField("seed")
    assert list(start.events[0].game_started.kings) == DEAL["kings"]
    assert list(start.events[1].row_laid.tiles) == [1, 3, 9, 48]
    done = stub.KingdominoReplay(pb.KingdominoReplayRequest(state=start.state, actions=actions))
    assert done.ok and done.applied == len(actions) and done.failed_index == -1
    kinds = _events(done.events)
    assert {"tile_picked", "tile_placed", "row_laid", "game_over"} <= set(kinds)
    placed = next(e.tile_placed for e in done.events if e.HasField("tile_placed"))
    assert placed.direction in "NESW" and (placed.x, placed.y) != (0, 0)
    if "tile_discarded" in kinds:
        assert next(e.tile_discarded for e in done.events if e.HasField("tile_discarded")).tile >= 1
    end = done.events[-1].game_over
    assert end.decided_by in ("score", "largest_region", "crowns", "shared")
    assert (list(end.largest_region), list(end.crowns)) == (game.largest_region(), game.crowns())


def test_the_view_hides_the_pile_order_and_the_seed(stub: Any) -> None:
    assert "pile" not in pb.KingdominoView.DESCRIPTOR.fields_by_name
    assert "seed" not in pb.KingdominoView.DESCRIPTOR.fields_by_name
    answer = stub.NewKingdomino(pb.NewKingdominoRequest(players=4, seed=3))
    game = Kingdomino.from_dict(_as_dict(answer.state))
    for player in range(4):
        view = stub.KingdominoView(pb.KingdominoViewRequest(state=answer.state, player=player))
        assert view.player == player and view.pile_size == len(game.pile) == 44
        assert list(view.legal) == (game.legal_actions() if game.to_move == player else [])
        assert [t.tile for t in view.next] == game.next_tiles
    public = stub.KingdominoView(pb.KingdominoViewRequest(state=answer.state))
    assert not public.HasField("player") and list(public.legal) == []
    applied = stub.KingdominoApply(pb.KingdominoApplyRequest(state=answer.state, action=game.legal_actions()[0],
                                                             view_as=1))
    assert applied.view.player == 1 and applied.view.pile_size == 44


@pytest.mark.parametrize("what,moment,action,player,error,reason",
                         [c for c in CASES if isinstance(c[2], str) and (c[3] is None or type(c[3]) is int)],
                         ids=[c[0] for c in CASES if isinstance(c[2], str) and (c[3] is None or type(c[3]) is int)])
def test_bad_input_is_refused_with_its_status_and_reason(stub: Any, what: str, moment: list[str], action: str,
                                                         player: int | None, error: type, reason: str) -> None:
    state = stub.KingdominoReplay(pb.KingdominoReplayRequest(
        state=stub.NewKingdomino(pb.NewKingdominoRequest(players=2, deal=[_deal()])).state, actions=moment)).state
    request = pb.KingdominoApplyRequest(state=state, action=action)
    if player is not None:
        request.player = player
    with pytest.raises(grpc.RpcError) as refused:
        stub.KingdominoApply(request)
    assert refused.value.code() == CODES[error]
    assert re.search(reason, refused.value.details())
    # Nothing changed: the same state still takes the turn's legal actions.
    legal = stub.KingdominoLegalActions(pb.KingdominoStateRequest(state=state))
    assert list(legal.actions) == Kingdomino.from_dict(_as_dict(state)).legal_actions() != []


def test_a_replay_stops_at_the_first_refusal_and_says_why(stub: Any) -> None:
    start = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, deal=[_deal()]))
    done = stub.KingdominoReplay(pb.KingdominoReplayRequest(state=start.state,
                                                            actions=["pick 1", "pick 1", "pick 9"]))
    assert (done.ok, done.applied, done.failed_index, done.error_kind) == (False, 1, 1, "illegal")
    assert "tile 1 is already taken by player 0" in done.reason
    assert [t.king for t in done.state.next if t.HasField("king")] == [0]


def test_a_bad_state_or_request_is_invalid_argument_naming_the_field(stub: Any) -> None:
    state = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, deal=[_deal()])).state
    tampered = pb.KingdominoState()
    tampered.CopyFrom(state)
    tampered.kingdoms[0].actions.append("place 1 3,3 N")
    for call, request, where in (
            ("KingdominoApply", pb.KingdominoApplyRequest(state=tampered, action="pick 1"), "state.kingdoms[0][0]"),
            ("KingdominoLegalActions", pb.KingdominoStateRequest(), "state: required"),
            ("NewKingdomino", pb.NewKingdominoRequest(players=5), "2-4 players"),
            ("NewKingdomino", pb.NewKingdominoRequest(players=2, options={"dynasty": "maybe"}), "dynasty"),
            ("NewKingdomino", pb.NewKingdominoRequest(players=2, seed=1, deal=[_deal()]), "seed or a deal"),
            ("KingdominoView", pb.KingdominoViewRequest(state=state, player=2), "player"),
            ("KingdominoTimeout", pb.KingdominoTimeoutRequest(state=state, player=9), "player")):
        with pytest.raises(grpc.RpcError) as refused:
            getattr(stub, call)(request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, call
        assert where in refused.value.details(), (call, refused.value.details())


def test_a_timeout_ends_the_game_and_the_others_win(stub: Any) -> None:
    state = stub.KingdominoReplay(pb.KingdominoReplayRequest(
        state=stub.NewKingdomino(pb.NewKingdominoRequest(players=3, seed=8)).state,
        actions=Kingdomino.new(3, seed=8)[0].legal_actions()[:1])).state
    answer = stub.KingdominoTimeout(pb.KingdominoTimeoutRequest(state=state, player=2))
    assert _events(answer.events) == ["timed_out", "game_over"]
    assert answer.events[1].game_over.decided_by == "timeout" and 2 not in answer.events[1].game_over.winners
    assert answer.state.timed_out == 2
    view = stub.KingdominoView(pb.KingdominoViewRequest(state=answer.state, player=0))
    assert view.game_over and view.timed_out == 2 and not view.HasField("to_move")
    with pytest.raises(grpc.RpcError) as refused:
        stub.KingdominoTimeout(pb.KingdominoTimeoutRequest(state=answer.state, player=0))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "over" in refused.value.details()


def test_a_dynasty_plays_three_games_to_a_total(stub: Any) -> None:
    game, _ = Kingdomino.new(2, options={"dynasty": True}, seed=5)
    actions = []
    while not game.game_over:
        actions.append(game.legal_actions()[-1])
        game.apply(actions[-1])
    start = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, seed=5, options={"dynasty": "true"}))
    assert start.state.HasField("dynasty") and start.events[0].game_started.game == 1
    done = stub.KingdominoReplay(pb.KingdominoReplayRequest(state=start.state, actions=actions))
    assert done.ok and _as_dict(done.state) == game.to_dict()
    kinds = _events(done.events)
    assert kinds.count("game_over") == 3 and kinds.count("game_started") == 2 and kinds[-1] == "dynasty_over"
    end = done.events[-1].dynasty_over
    assert [list(g.scores) for g in end.games] == game.game_scores()
    assert (list(end.scores), list(end.winners)) == (game.totals()["scores"], game.winners())
    view = stub.KingdominoView(pb.KingdominoViewRequest(state=done.state, player=1))
    assert (view.dynasty.game, view.dynasty.of, len(view.dynasty.games)) == (3, 3, 2)
    assert list(view.dynasty.totals.scores) == game.totals()["scores"] and view.game_over


def test_an_explicit_dynasty_deal_is_three_deals(stub: Any) -> None:
    answer = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, options={"dynasty": "true"},
                                                        deal=[_deal(), _deal(), _deal()]))
    assert len(answer.state.dynasty.deals) == 2 and not answer.state.HasField("seed")
    with pytest.raises(grpc.RpcError) as refused:
        stub.NewKingdomino(pb.NewKingdominoRequest(players=2, options={"dynasty": "true"}, deal=[_deal()]))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "dynasty" in refused.value.details()


def test_list_variants_lists_kingdomino_on_both_faces(stub: Any, json_stub: Any) -> None:
    typed = {v.name for v in stub.ListVariants(pb.ListVariantsRequest()).variants}
    listed = {v["name"] for v in orjson.loads(json_stub.ListVariants(pb.JsonCall()).answer)["variants"]}
    assert "kingdomino" in typed and typed == listed


# ---------------------------------------------------------------- the JSON face


def _json(json_stub: Any, method: str, args: Json, state: bytes = b"") -> tuple[Json, bytes]:
    reply = getattr(json_stub, method)(pb.JsonCall(args=orjson.dumps(args), state=state))
    return orjson.loads(reply.answer), reply.state


def test_the_json_face_plays_the_same_game_as_the_typed_one(json_stub: Any, stub: Any) -> None:
    answer, _ = _json(json_stub, "NewMatch", {"variant": "kingdomino", "players": 2, "seed": 4})
    typed = stub.NewKingdomino(pb.NewKingdominoRequest(players=2, seed=4))
    state, typed_state = answer["state"], typed.state
    assert state == _as_dict(typed_state)
    for _ in range(30):
        legal, _ = _json(json_stub, "LegalActions", {"state": state})
        answer, _ = _json(json_stub, "Apply", {"state": state, "action": legal["actions"][0], "seat": legal["seat"]})
        typed_state = stub.KingdominoApply(pb.KingdominoApplyRequest(state=typed_state,
                                                                     action=legal["actions"][0])).state
        state = answer["state"]
        assert state == _as_dict(typed_state)
    view, _ = _json(json_stub, "View", {"state": state, "seat": 1})
    assert "pile" not in view["view"] and view["view"]["pile_size"] == len(state["pile"])
    timed, _ = _json(json_stub, "Timeout", {"state": state, "seat": 0})
    assert [e["type"] for e in timed["events"]] == ["timed_out", "game_over"]


def test_sealed_json_calls_carry_the_engines_own_bytes_and_show_only_the_viewer(json_stub: Any) -> None:
    answer, sealed = _json(json_stub, "NewMatch", {"variant": "kingdomino", "players": 2, "seed": 4,
                                                   "view_as": "host"})
    wrapped = pb.GameState.FromString(sealed)          # the engine's own encoding, opaque to the carrier
    assert wrapped.WhichOneof("kind") == "kingdomino"    # the state says its kind
    message = wrapped.kingdomino
    assert message.seed == 4 and len(message.pile) == 20
    assert game_state.encode(game_state.decode(sealed)) == sealed == wrapped.SerializeToString(deterministic=True)
    assert kingdomino_codec.encode_state(kingdomino_codec.state_from_proto(message)) == \
        message.SerializeToString(deterministic=True)
    assert answer["events"][0]["seed"] is None and "state" not in answer
    assert answer["view"]["player"] is None and "pile" not in answer["view"] and answer["view"]["legal"] == []
    mover = answer["view"]["to_move"]
    other = 1 - mover
    legal, _ = _json(json_stub, "LegalActions", {"view_as": other}, sealed)
    assert legal == {"seat": mover, "actions": []}
    legal, _ = _json(json_stub, "LegalActions", {"view_as": mover}, sealed)
    assert legal["actions"]
    applied, after = _json(json_stub, "Apply", {"action": legal["actions"][0], "seat": mover, "view_as": mover},
                           sealed)
    assert applied["view"]["player"] == mover and after and after != sealed
    with pytest.raises(grpc.RpcError) as refused:
        _json(json_stub, "Apply", {"action": legal["actions"][1], "seat": mover, "view_as": mover}, after)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    view, _ = _json(json_stub, "View", {"view_as": other}, after)
    assert view["view"]["player"] == other and "pile" not in view["view"]


def test_rounds_do_not_apply_to_kingdomino(json_stub: Any) -> None:
    answer, _ = _json(json_stub, "NewMatch", {"variant": "kingdomino", "players": 2, "seed": 4})
    for method, args in (("StartRound", {"state": answer["state"]}),
                         ("Settle", {"state": answer["state"], "ending": "out", "hands": []}),
                         ("NewMatch", {"variant": "kingdomino", "players": 2, "no_deal": True}),
                         ("NewMatch", {"variant": "kingdomino", "players": 2, "setup": {}})):
        with pytest.raises(grpc.RpcError) as refused:
            _json(json_stub, method, args)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, method
        assert "kingdomino has no" in refused.value.details()
