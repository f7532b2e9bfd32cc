"""Prometheus metrics of a fresh engine process: exposed on their own port and counting exactly."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc
import orjson
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc
from google.protobuf.internal.encoder import _VarintBytes
from prometheus_client.parser import text_string_to_metric_families

from engine_service.edge import codec, wire

pytestmark = pytest.mark.service


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(all_samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return all_samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_calls_codes_latency_and_the_game(engine_factory: Callable[..., Any]) -> None:
    """Calls by method and code, latency, actions, illegal actions, finished rounds and matches count exactly;
    unknown variant names never become labels."""
    server = engine_factory()
    with grpc.insecure_channel(server.address) as ch:
        stub = engine_pb2_grpc.EngineStub(ch)
        state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=42), timeout=5).state
        match = wire.decode_state(state.SerializeToString())
        actions = []
        for _ in range(3):
            actions.append(match.legal_actions()[0])
            match.apply(actions[-1])
        for action in actions:
            state = stub.Apply(pb.ApplyRequest(state=state, action=action), timeout=5).state
        with pytest.raises(grpc.RpcError):  # illegal: the seat to move cannot lead again
            stub.Apply(pb.ApplyRequest(state=state, action=actions[0]), timeout=5)
        with pytest.raises(grpc.RpcError):  # malformed: not counted as illegal
            stub.Apply(pb.ApplyRequest(state=state, action="nonsense"), timeout=5)
        # seed 42: 1-1, 1-4@E, 4-5@E were played; the next seat does not hold 6-6
        assert actions == ["1-1", "1-4@E", "4-5@E"]
        replay = stub.Replay(pb.ReplayRequest(state=state, actions=["5-5@E", "6-6@E"]), timeout=5)
        assert (replay.applied, replay.error_kind) == (1, "illegal")

        # a settled round (out) and a match ended by a timeout, in a 3-player match
        fresh = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=3, no_deal=True), timeout=5).state
        settled = stub.Settle(pb.SettleRequest(state=fresh, ending=pb.ENDING_OUT, hands=po.hand_msgs(
            [[], ["6-6"], ["5-5"]])), timeout=5).state
        stub.Timeout(pb.TimeoutRequest(state=settled, seat=0), timeout=5)
        # an unknown variant name must not become a label
        with pytest.raises(grpc.RpcError):
            stub.LegalActions(pb.StateRequest(state=pb.MatchState(variant="x" * 40, players=4)), timeout=5)

    s = samples(server.metrics())
    engine = {"grpc_service": "domino.v1.Engine"}
    assert value(s, "grpc_server_handled_total", **engine, grpc_method="Apply", grpc_code="OK") == 3
    assert value(s, "grpc_server_handled_total", **engine, grpc_method="Apply",
                 grpc_code="FAILED_PRECONDITION") == 1
    assert value(s, "grpc_server_handled_total", **engine, grpc_method="Apply", grpc_code="INVALID_ARGUMENT") == 1
    assert value(s, "grpc_server_handled_total", **engine, grpc_method="NewMatch", grpc_code="OK") == 2
    assert value(s, "grpc_server_handled_total", **engine, grpc_method="LegalActions",
                 grpc_code="INVALID_ARGUMENT") == 1
    assert value(s, "grpc_server_handling_seconds_count", **engine, grpc_method="Apply") == 5
    assert value(s, "grpc_server_handling_seconds_bucket", **engine, grpc_method="Apply", le="+Inf") == 5
    assert value(s, "grpc_server_handling_seconds_sum", **engine, grpc_method="Apply") > 0
    assert ("domino_engine_in_flight_calls", frozenset()) in s

    assert value(s, "domino_engine_actions_applied_total", variant="kozel", kind="play") == 4
    assert value(s, "domino_engine_actions_applied_total", variant="kozel", kind="pass") == 0
    assert value(s, "domino_engine_illegal_actions_total", variant="kozel") == 2
    assert value(s, "domino_engine_rounds_finished_total", variant="kozel", ending="out") == 1
    assert value(s, "domino_engine_matches_finished_total", variant="kozel") == 1
    assert not any("xxxx" in str(labels) for _, labels in s)


def test_domain_counters_follow_a_whole_match(engine_factory: Callable[..., Any]) -> None:
    """A seeded 2-player Kozel match played to its end through the service, counted by the library."""
    server = engine_factory("--no-log-calls")
    rng = random.Random(5)
    kinds: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    with grpc.insecure_channel(server.address) as ch:
        stub = engine_pb2_grpc.EngineStub(ch)
        state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, seed=5), timeout=5).state
        while not state.match_over:
            if state.round.over:
                state = stub.StartRound(pb.StartRoundRequest(state=state), timeout=5).state
                continue
            legal = stub.LegalActions(pb.StateRequest(state=state), timeout=5).actions
            action = rng.choice(list(legal))
            reply = stub.Apply(pb.ApplyRequest(state=state, action=action), timeout=5)
            kinds["draw" if action == "draw" else "pass" if action == "pass" else "play"] += 1
            endings.update(codec.ending_from_proto(e.round_ended.record.ending, "e") or ""
                           for e in reply.events if e.HasField("round_ended"))
            state = reply.state
    s = samples(server.metrics())
    assert kinds["draw"] > 0 and kinds["play"] > 0 and sum(endings.values()) >= 2
    for kind in ("play", "draw", "pass"):
        assert value(s, "domino_engine_actions_applied_total", variant="kozel", kind=kind) == kinds[kind]
    for ending, n in endings.items():
        assert value(s, "domino_engine_rounds_finished_total", variant="kozel", ending=ending) == n
    assert value(s, "domino_engine_matches_finished_total", variant="kozel") == 1
    assert not [line for line in server.logs() if line["msg"] == "call"]


def test_the_json_face_is_counted_under_its_own_service_and_in_the_same_domain_counters(
        engine_factory: Callable[..., Any]) -> None:
    """Both faces share what a call counts: the same actions through the JSON face count the same."""
    server = engine_factory("--no-log-calls")
    with grpc.insecure_channel(server.address) as ch:
        json = engine_pb2_grpc.JsonEngineStub(ch)

        def call(method: Any, args: dict[str, Any], state: bytes = b"") -> pb.JsonAnswer:
            answer: pb.JsonAnswer = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=5)
            return answer

        state = orjson.loads(call(json.NewMatch, {"variant": "kozel", "players": 4, "seed": 42}).answer)["state"]
        for action in ["1-1", "1-4@E"]:
            state = orjson.loads(call(json.Apply, {"state": state, "action": action}).answer)["state"]
        sealed = call(json.NewMatch, {"variant": "kozel", "players": 4, "seed": 42, "view_as": "host"}).state
        sealed = call(json.Apply, {"action": "1-1", "view_as": 3}, sealed).state  # seed 42: seat 3 leads 1-1
        with pytest.raises(grpc.RpcError):  # illegal: seat 1 does not hold 6-6
            call(json.Apply, {"state": state, "action": "6-6@E"})
        with pytest.raises(grpc.RpcError):
            call(json.Apply, {"state": state, "action": "nonsense"})
        replay = orjson.loads(call(json.Replay, {"state": state, "actions": ["4-5@E", "6-6@E"]}).answer)
        assert (replay["applied"], replay["error_kind"]) == (1, "illegal")
    s = samples(server.metrics())
    face = {"grpc_service": "domino.v1.JsonEngine"}
    assert value(s, "grpc_server_handled_total", **face, grpc_method="Apply", grpc_code="OK") == 3
    assert value(s, "grpc_server_handled_total", **face, grpc_method="Apply", grpc_code="FAILED_PRECONDITION") == 1
    assert value(s, "grpc_server_handled_total", **face, grpc_method="Apply", grpc_code="INVALID_ARGUMENT") == 1
    assert value(s, "grpc_server_handled_total", **face, grpc_method="NewMatch", grpc_code="OK") == 2
    assert value(s, "grpc_server_handled_total", **face, grpc_method="Replay", grpc_code="OK") == 1
    assert value(s, "grpc_server_handling_seconds_count", **face, grpc_method="Apply") == 5
    assert value(s, "grpc_server_handled_total", grpc_service="domino.v1.Engine", grpc_method="Apply",
                 grpc_code="OK") == 0
    assert value(s, "domino_engine_actions_applied_total", variant="kozel", kind="play") == 4
    assert value(s, "domino_engine_illegal_actions_total", variant="kozel") == 2


def test_states_in_another_encoding_are_counted_as_fallbacks(engine_factory: Callable[..., Any]) -> None:
    """The engine's own states never take the fallback; a peer's other encoding does, once per state read."""
    server = engine_factory("--no-log-calls")
    with grpc.insecure_channel(server.address) as ch:
        stub = engine_pb2_grpc.EngineStub(ch)
        json = engine_pb2_grpc.JsonEngineStub(ch)
        state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=42), timeout=5).state
        for _ in range(3):
            action = stub.LegalActions(pb.StateRequest(state=state), timeout=5).actions[0]
            state = stub.Apply(pb.ApplyRequest(state=state, action=action), timeout=5).state
        sealed = json.NewMatch(pb.JsonCall(args=orjson.dumps({"variant": "kozel", "players": 4, "seed": 42,
                                                              "view_as": "host"})), timeout=5).state
        json.View(pb.JsonCall(args=b'{"view_as": 0}', state=sealed), timeout=5)
        clean = samples(server.metrics())
        # the same state with an unknown field (protobuf keeps it and sends it on), and with a list not packed
        state.ledger.MergeFromString(b"\xa0\x06\x01")
        stub.LegalActions(pb.StateRequest(state=state), timeout=5)
        inner = pb.GameState.FromString(sealed).match.SerializeToString(deterministic=True) + b"\x50\x00"  # losers [0]
        other = b"\x82\x01" + _VarintBytes(len(inner)) + inner  # a GameState's `match` (field 16) holding it
        json.View(pb.JsonCall(args=b'{"view_as": 0}', state=other), timeout=5)
    s = samples(server.metrics())
    total = "domino_engine_state_decode_fallbacks_total"
    assert not [k for k in clean if k[0] == total and clean[k]]
    counted = {dict(labels)["reason"]: v for (name, labels), v in s.items() if name == total}
    assert sum(counted.values()) == 2, counted
