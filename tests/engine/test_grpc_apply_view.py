"""Apply with `view_as` (typed face): the new state's view for that seat in the same call, exactly what View
answers, and what the JSON face shows that seat."""
from __future__ import annotations

import random

import grpc
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from clients.engine_client import EngineClient
from engine_service.edge import wire

pytestmark = pytest.mark.service

CASES = [("kozel", 2, 11), ("kozel", 4, 42), ("osel", 3, 5), ("threes-fives", 2, 9), ("block", 4, 3),
         ("bykovo", 4, 8)]


def _play_round(stub: engine_pb2_grpc.EngineStub, variant: str, players: int, seed: int) -> list[str]:
    """Play one round with random legal actions; at every step Apply's view for every seat == View's."""
    rng = random.Random(seed)
    state = stub.NewMatch(pb.NewMatchRequest(variant=variant, players=players, seed=seed), timeout=5).state
    kinds: list[str] = []
    steps = 0
    while True:
        legal = stub.LegalActions(pb.StateRequest(state=state), timeout=5)
        if not legal.actions:
            break
        action = rng.choice(list(legal.actions))
        plain = stub.Apply(pb.ApplyRequest(state=state, action=action, seat=legal.seat), timeout=5)
        assert not plain.HasField("view")  # no view_as: no view, the answer as before
        for viewer in range(players):
            both = stub.Apply(pb.ApplyRequest(state=state, action=action, seat=legal.seat, view_as=viewer),
                              timeout=5)
            assert both.state == plain.state and list(both.events) == list(plain.events)
            assert both.HasField("view")
            view = stub.View(pb.ViewRequest(state=both.state, seat=viewer), timeout=5)
            assert both.view == view, (variant, steps, viewer)
        kinds.extend(e.WhichOneof("kind") or "" for e in plain.events)
        state = plain.state
        steps += 1
    assert steps > 3
    return kinds


@pytest.mark.parametrize(("variant", "players", "seed"), CASES)
def test_apply_view_as_equals_view_of_the_new_state(stub: engine_pb2_grpc.EngineStub, variant: str,
                                                     players: int, seed: int) -> None:
    """Along a whole random round, Apply with each `view_as` answers the plain Apply's state and events plus
    exactly View's answer for that seat."""
    _play_round(stub, variant, players, seed)


def test_apply_view_as_through_a_draw(stub: engine_pb2_grpc.EngineStub) -> None:
    """The round played above for 2-player Kozel includes draws and ends: views are right across both."""
    kinds = _play_round(stub, "kozel", 2, 11)
    assert "drew" in kinds and "round_ended" in kinds


def test_a_view_as_that_is_not_a_seat_is_invalid_argument(stub: engine_pb2_grpc.EngineStub) -> None:
    """A view_as beyond the seats is refused as the caller's error, naming view_as."""
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=42), timeout=5).state
    action = stub.LegalActions(pb.StateRequest(state=state), timeout=5).actions[0]
    for bad in (4, 99):
        with pytest.raises(grpc.RpcError) as err:
            stub.Apply(pb.ApplyRequest(state=state, action=action, view_as=bad), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (err.value.details() or "").startswith("view_as: ")


def test_the_typed_view_is_the_json_faces_view(stub: engine_pb2_grpc.EngineStub, client: EngineClient) -> None:
    """Both faces show a seat the same thing: Apply's `view_as` and View, read back by the oracle, equal the
    JSON face's View of the same state, seat by seat, along a round with draws."""
    rng = random.Random(11)
    answer = client.new_match("kozel", 2, seed=11)
    state, typed = answer.state, stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, seed=11),
                                               timeout=5).state
    drew = False
    while True:
        seat, actions = client.legal_actions(state)
        if not actions:
            break
        action = rng.choice(actions)
        drew |= action == "draw"
        state = client.apply(state, action, seat).state
        viewer = rng.randrange(2)
        reply = stub.Apply(pb.ApplyRequest(state=typed, action=action, seat=seat, view_as=viewer), timeout=5)
        typed = reply.state
        assert wire.decode_state(typed.SerializeToString()).to_dict() == state
        assert po.view_dict(reply.view) == client.view(state, viewer)
        other = stub.View(pb.ViewRequest(state=typed, seat=1 - viewer), timeout=5)
        assert po.view_dict(other) == client.view(state, 1 - viewer)
    assert drew
