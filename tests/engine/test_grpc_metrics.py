"""Prometheus metrics of a fresh engine process: exposed on their own port and counting exactly."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from engine_service import codec
from engine_service.rules import Match

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
    server = engine_factory()
    with grpc.insecure_channel(server.address) as ch:
        stub = engine_pb2_grpc.EngineStub(ch)
        state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=42), timeout=5).state
        match = Match.from_dict(codec.state_from_proto(state))
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
        settled = stub.Settle(pb.SettleRequest(state=fresh, ending=pb.ENDING_OUT, hands=codec.hands_to_proto(
            [[], ["6-6"], ["5-5"]], "hands")), timeout=5).state
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
