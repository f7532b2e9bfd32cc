"""Apply with `view_as`: the new state's view for that seat in the same call, exactly what View answers."""
from __future__ import annotations

import random
from typing import Any

import grpc
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from clients.engine_client import EngineClient
from engine_service import codec
from engine_service.rules import MalformedError

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
    _play_round(stub, variant, players, seed)


def test_apply_view_as_through_a_draw(stub: engine_pb2_grpc.EngineStub) -> None:
    kinds = _play_round(stub, "kozel", 2, 11)
    assert "drew" in kinds and "round_ended" in kinds


def test_a_view_as_that_is_not_a_seat_is_invalid_argument(stub: engine_pb2_grpc.EngineStub) -> None:
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=42), timeout=5).state
    action = stub.LegalActions(pb.StateRequest(state=state), timeout=5).actions[0]
    for bad in (4, 99):
        with pytest.raises(grpc.RpcError) as err:
            stub.Apply(pb.ApplyRequest(state=state, action=action, view_as=bad), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (err.value.details() or "").startswith("view_as: ")


def test_the_client_returns_the_view_and_keeps_the_old_answer(engine: Any) -> None:
    with EngineClient(engine.address) as client:
        answer = client.new_match("kozel", 2, seed=11)
        seat, actions = client.legal_actions(answer.state)
        plain = client.apply(answer.state, actions[0], seat)
        assert plain.view is None
        viewed = client.apply(answer.state, actions[0], seat, view_as=seat)
        assert (viewed.state, viewed.events) == (plain.state, plain.events)
        assert viewed.view == client.view(plain.state, seat)
        assert viewed.view == codec.view_from_proto(codec.view_to_proto(viewed.view))
        with pytest.raises(MalformedError, match="view_as"):
            client.apply(answer.state, actions[0], seat, view_as=2)
