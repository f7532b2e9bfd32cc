"""Every sealed call asks the engine once (its JSON face, with `view_as`), and answers what the rules say.

The engine here is the real JSON-face servicer behind the real status
interceptor, in process, with a count of the calls it gets; the gateway is a
real gunicorn process in sealed mode. The answers are checked against the rules
library playing alongside and against what /view answers for the new token:
the mover's view, the events redacted for the mover, nothing else.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from domino.v1 import engine_pb2_grpc

from engine_service.edge.json_face import JsonEngineServicer
from engine_service.rules import Match
from engine_service.status import StatusInterceptor

from .conftest import TOKEN_KEYS, Gateway
from .test_gateway_sealed import assert_only_public

pytestmark = pytest.mark.service


class CountingServicer(JsonEngineServicer):
    """The real engine's JSON face, counting calls per method."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, name: str) -> None:
        with self._lock:
            self.calls[name] = self.calls.get(name, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.calls)


def _counted(name: str) -> Callable[..., Any]:
    def method(self: CountingServicer, request: Any, context: grpc.ServicerContext) -> Any:
        self.count(name)
        return getattr(JsonEngineServicer, name)(self, request, context)
    return method


for _name in ("NewMatch", "LegalActions", "Apply", "Replay", "View", "Timeout", "StartRound", "Settle"):
    setattr(CountingServicer, _name, _counted(_name))


@pytest.fixture
def counting_engine() -> Iterator[tuple[CountingServicer, str]]:
    servicer = CountingServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), interceptors=[StatusInterceptor()],
                         options=[("grpc.so_reuseport", 0)])
    engine_pb2_grpc.add_JsonEngineServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(0)


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)
            if after.get(k, 0) != before.get(k, 0)}


def test_a_sealed_apply_is_one_engine_call_and_the_same_answer(
        counting_engine: tuple[CountingServicer, str], start_gateway: Callable[..., Gateway]) -> None:
    servicer, address = counting_engine
    gateway = start_gateway(address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS})
    created = gateway.post("/v1/matches", {"variant": "kozel", "players": 2, "seed": 11, "mode": "sealed"})
    assert created.status == 201, created.json
    reference, _ = Match.new("kozel", 2, seed=11)
    token, keys = created.json["token"], created.json["seat_keys"]
    moves = draws = 0
    while not reference.to_dict()["round"]["over"]:
        mover = reference.to_move
        action = reference.legal_actions()[-1]
        before = servicer.snapshot()
        r = gateway.post("/v1/matches/apply", {"token": token, "seat_key": keys[mover], "action": action})
        assert r.status == 200, r.json
        assert _delta(servicer.snapshot(), before) == {"Apply": 1}
        answer = r.json
        assert set(answer) == {"token", "match_id", "seq", "view", "scores", "events"}
        assert answer["seq"] == moves + 1 and answer["match_id"] == created.json["match_id"]
        events = reference.apply(action)
        assert answer["events"] == events  # the mover sees its own draws
        draws += sum(e["type"] == "drew" for e in events)
        assert answer["view"] == reference.view(mover)
        # The view the two-call path gave: the new token's state seen by the mover through View.
        shown = gateway.post("/v1/matches/view", {"token": answer["token"], "seat_key": keys[mover]})
        assert shown.status == 200 and shown.json == {"view": answer["view"], "scores": answer["scores"]}
        assert_only_public(answer, reference, mover)
        # The other seat still sees the mover's draws as hidden tiles, and never its hand.
        other = gateway.post("/v1/matches/view", {"token": answer["token"], "seat_key": keys[1 - mover]}).json["view"]
        assert other["hand"] == reference.view(1 - mover)["hand"]
        assert_only_public(other, reference, 1 - mover)
        token = answer["token"]
        moves += 1
    assert moves > 10 and draws > 0


def test_a_refused_sealed_apply_is_still_one_call_and_the_same_problem(
        counting_engine: tuple[CountingServicer, str], start_gateway: Callable[..., Gateway]) -> None:
    servicer, address = counting_engine
    gateway = start_gateway(address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS})
    created = gateway.post("/v1/matches", {"variant": "kozel", "players": 2, "seed": 11, "mode": "sealed"}).json
    reference, _ = Match.new("kozel", 2, seed=11)
    waiting = 1 - reference.to_move
    before = servicer.snapshot()
    refused = gateway.post("/v1/matches/apply",
                           {"token": created["token"], "seat_key": created["seat_keys"][waiting], "action": "draw"})
    assert refused.status == 409 and "turn" in refused.json["detail"]
    assert _delta(servicer.snapshot(), before) == {"Apply": 1}
    host = gateway.post("/v1/matches/apply",
                        {"token": created["token"], "seat_key": created["host_key"], "action": "draw"})
    assert host.status == 403


def test_a_sealed_replay_is_one_engine_call_of_the_seat_s_own_actions(
        counting_engine: tuple[CountingServicer, str], start_gateway: Callable[..., Gateway]) -> None:
    servicer, address = counting_engine
    gateway = start_gateway(address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS})
    created = gateway.post("/v1/matches", {"variant": "kozel", "players": 2, "seed": 11, "mode": "sealed"}).json
    reference, _ = Match.new("kozel", 2, seed=11)
    mover = reference.to_move
    mine = []
    while reference.to_move == mover and len(mine) < 5:  # the mover's own moves in a row (draws)
        action = "draw" if "draw" in reference.legal_actions() else reference.legal_actions()[0]
        mine.append(action)
        reference.apply(action)
    before = servicer.snapshot()
    # The mover's actions, then one more as if it were still its turn (refused unless it still is).
    r = gateway.post("/v1/matches/replay", {"token": created["token"], "seat_key": created["seat_keys"][mover],
                                            "actions": [*mine, "pass"]})
    assert r.status == 200, r.json
    assert _delta(servicer.snapshot(), before) == {"Replay": 1}
    assert r.json["applied"] == len(mine) and r.json["view"] == reference.view(mover)
    assert r.json["seq"] == 1  # one new version for the whole replay
