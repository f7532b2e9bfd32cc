"""clients.engine_client: the Python client (JSON face) against the real engine, and its retry and deadline policy."""
from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1.channel import ENGINE, JSON_ENGINE, EngineChannel, service_config
from grpc_health.v1 import health_pb2, health_pb2_grpc

from api_gateway.engine import READY_FOR, Engine, Readiness
from clients.engine_client import EngineClient, EngineError
from engine_service.health import NOT_SERVING, SERVING, HealthServicer
from engine_service.rules import (
    PRESETS,
    IllegalActionError,
    MalformedError,
    Match,
    MisdealError,
    variants,
)

pytestmark = pytest.mark.service


def test_a_whole_match_through_the_client_equals_the_library(client: EngineClient) -> None:
    """A seeded 3-player Kozel match to its end through the client (JSON face): every answer is the library's."""
    rng = random.Random(3)
    answer = client.new_match("kozel", 3, seed=3)
    match, events = Match.new("kozel", 3, seed=3)
    assert (answer.state, answer.events) == (match.to_dict(), events)
    state = answer.state
    calls = 0
    while not match.match_over and calls < 600:
        calls += 1
        if match.round is None or match.round.over:
            answer, events = client.start_round(state), match.start_round()
        else:
            seat, actions = client.legal_actions(state)
            assert (seat, actions) == (match.to_move, match.legal_actions())
            action = rng.choice(actions)
            answer, events = client.apply(state, action, seat), match.apply(action, seat)
        assert (answer.state, answer.events) == (match.to_dict(), events)
        state = answer.state
    assert match.match_over and state["losers"]
    assert client.view(state, 0) == match.view(0)


def test_client_replay_settle_timeout_and_variants(client: EngineClient) -> None:
    """The client's other calls answer as the rules do; the listing types option defaults."""
    served = [v for v in variants() if v["name"] in PRESETS or v["name"] == "kingdomino"]  # every game served
    typed = {"bool": lambda text: text == "true", "int": int, "enum": str}
    assert client.list_variants() == [  # the JSON face types each option's default as the option is
        {**v, "options": [{**o, "default": typed[o["type"]](o["default"])} for o in v["options"]]} for v in served]
    kozel = next(v for v in client.list_variants() if v["name"] == "kozel")
    assert {o["name"]: o["default"] for o in kozel["options"]}["target"] == 101
    start = client.new_match("kozel", 2, seed=1).state
    _, actions = client.legal_actions(start)
    result = client.replay(start, [actions[0], "bogus"])
    assert (result.ok, result.applied, result.failed_index, result.error_kind) == (False, 1, 1, "malformed")
    settled = client.settle(client.new_match("kozel", 2, no_deal=True).state, "blocked",
                            [["6-6"], ["0-1"]], last_placer=0)
    assert settled.state["ledger"]["history"][0]["ending"] == "fish"
    ended = client.timeout(client.new_match("kozel", 3, setup={"written": [30, 32, 13]}, no_deal=True).state, 1)
    assert ended.state["match_over"] and ended.state["rating"] == [1, 0, 2]
    assert client.health() == "SERVING"


def test_refusals_come_back_as_the_rules_exceptions(client: EngineClient) -> None:
    """INVALID_ARGUMENT, FAILED_PRECONDITION and misdeals come back as the rules' exceptions, other statuses
    as EngineError."""
    state = client.new_match("kozel", 4, seed=42).state
    with pytest.raises(MalformedError, match="not an action"):
        client.apply(state, "1-1@X")
    with pytest.raises(IllegalActionError, match="does not hold") as info:
        client.apply(state, "6-6")
    assert not isinstance(info.value, MisdealError)
    five_doubles = {"hands": [
        ["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "0-2"], ["0-3", "0-4", "0-5", "0-6", "1-2", "1-3", "1-4"],
        ["1-5", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4"], ["3-5", "3-6", "4-5", "4-6", "5-5", "5-6", "6-6"]]}
    with pytest.raises(MisdealError, match="^misdeal:"):
        client.new_match("kozel", 4, deal=five_doubles)
    # the engine reads the arguments: the rules refuse them, naming what is wrong
    with pytest.raises(MalformedError, match="seed"):
        client.new_match("kozel", 4, seed=-1)
    with pytest.raises(MalformedError, match=r"state\.round\.hands must list 4 hands"):
        client.legal_actions({**state, "round": {**state["round"], "hands": [["x"]]}})
    with pytest.raises(MalformedError, match="not a tile: 'x'"):
        client.legal_actions({**state, "round": {**state["round"], "hands": [["x"], [], [], []]}})
    # what JSON cannot carry is malformed before anything is sent
    with pytest.raises(MalformedError, match="NewMatch"):
        client.new_match("kozel", 4, seed=2**70)
    with pytest.raises(EngineError) as big:
        client.apply(state, "x" * 300_000)
    assert big.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_service_config_retries_only_unavailable_on_both_services() -> None:
    """The shared channel retries UNAVAILABLE only, for both services, balancing round-robin."""
    config = json.loads(service_config(max_attempts=5))
    policy = config["methodConfig"][0]["retryPolicy"]
    assert (ENGINE, JSON_ENGINE) == ("domino.v1.Engine", "domino.v1.JsonEngine")
    assert config["methodConfig"][0]["name"] == [{"service": ENGINE}, {"service": JSON_ENGINE}]
    assert policy["retryableStatusCodes"] == ["UNAVAILABLE"] and policy["maxAttempts"] == 5
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]


def test_one_attempt_is_no_retry_policy_and_the_channel_still_answers(engine: Any) -> None:
    """GATEWAY_ENGINE_ATTEMPTS=1 (no retry): gRPC refuses a retry policy of fewer than 2 attempts (every call
    failed), so the config names none, and calls go through."""
    assert "retryPolicy" not in json.loads(service_config(max_attempts=1))["methodConfig"][0]
    with EngineClient(engine.address, timeout=10, max_attempts=1) as once:
        assert once.new_match("kozel", 2, seed=4).state


def test_the_client_speaks_to_the_json_face_and_exposes_the_typed_stub(client: EngineClient) -> None:
    """`client.stub` is the typed service on the same channel: the same match, in both forms."""
    from engine_service.edge import wire

    answer = client.new_match("kozel", 2, seed=4)
    typed = client.stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, seed=4), timeout=5)
    assert wire.decode_state(typed.state.SerializeToString()).to_dict() == answer.state
    assert client.health(JSON_ENGINE) == "SERVING"


# ---------------------------------------------------------------- retry and deadline, against a scripted server


class Scripted:
    """A real gRPC server whose JSON-face ListVariants answers from a script of status codes (then OK)."""

    def __init__(self, script: list[grpc.StatusCode], delay: float = 0.0) -> None:
        self.script = list(script)
        self.delay = delay
        self.attempts = 0
        handler = grpc.unary_unary_rpc_method_handler(
            self._list, request_deserializer=pb.JsonCall.FromString,
            response_serializer=pb.JsonAnswer.SerializeToString)
        self.server = grpc.server(futures.ThreadPoolExecutor(2), options=[("grpc.so_reuseport", 0)])
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(JSON_ENGINE, {"ListVariants": handler})])
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def _list(self, request: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        self.attempts += 1
        time.sleep(self.delay)
        if self.script:
            context.abort(self.script.pop(0), "scripted")
        return pb.JsonAnswer(answer=orjson.dumps({"variants": [{"name": "kozel", "family": "K"}]}))


@pytest.fixture
def scripted() -> Iterator[Callable[..., Scripted]]:
    made: list[Scripted] = []

    def make(*args: Any, **kwargs: Any) -> Scripted:
        made.append(Scripted(*args, **kwargs))
        return made[-1]

    yield make
    for s in made:
        s.server.stop(0)


def test_unavailable_is_retried_until_it_answers(scripted: Callable[..., Scripted]) -> None:
    """Two UNAVAILABLE answers, then OK: the client sees OK after three attempts."""
    server = scripted([grpc.StatusCode.UNAVAILABLE] * 2)
    with EngineClient(f"127.0.0.1:{server.port}", timeout=5) as c:
        assert [v["name"] for v in c.list_variants()] == ["kozel"]
    assert server.attempts == 3


def test_retries_stop_at_max_attempts(scripted: Callable[..., Scripted]) -> None:
    """An engine that stays UNAVAILABLE is tried max_attempts times, then EngineError."""
    server = scripted([grpc.StatusCode.UNAVAILABLE] * 10)
    with EngineClient(f"127.0.0.1:{server.port}", timeout=5, max_attempts=3) as c, \
            pytest.raises(EngineError) as info:
        c.list_variants()
    assert info.value.code == grpc.StatusCode.UNAVAILABLE and server.attempts == 3


def test_other_statuses_are_not_retried(scripted: Callable[..., Scripted]) -> None:
    """INTERNAL is not retried (it would fail again): one attempt."""
    server = scripted([grpc.StatusCode.INTERNAL])
    with EngineClient(f"127.0.0.1:{server.port}", timeout=5) as c, pytest.raises(EngineError) as info:
        c.list_variants()
    assert info.value.code == grpc.StatusCode.INTERNAL and server.attempts == 1


def test_every_call_has_a_deadline(scripted: Callable[..., Scripted]) -> None:
    """A slow engine is cut off at the client's timeout with DEADLINE_EXCEEDED."""
    server = scripted([], delay=1.0)
    with EngineClient(f"127.0.0.1:{server.port}", timeout=0.2) as c:
        started = time.monotonic()
        with pytest.raises(EngineError) as info:
            c.list_variants()
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 0.9


def test_no_server_is_an_engine_error() -> None:
    """Nobody listening: EngineError (UNAVAILABLE or DEADLINE_EXCEEDED), not a hang."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with EngineClient(f"127.0.0.1:{port}", timeout=2, max_attempts=2) as c, pytest.raises(EngineError) as info:
        c.list_variants()
    assert info.value.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class CountedHealth(HealthServicer):
    """The engine's health service, counting the Checks it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.set(JSON_ENGINE, SERVING)
        self.checks = 0
        self.delay = 0.0  # how long a Check takes to answer

    def Check(self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext) -> Any:
        self.checks += 1
        time.sleep(self.delay)
        return super().Check(request, context)


def _health_server(port: int = 0) -> tuple[grpc.Server, CountedHealth, int]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health = CountedHealth()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    return server, health, bound


def test_the_gateways_readiness_is_one_check_a_second_however_many_probes(wait_until: Callable[..., bool]) -> None:
    """`Readiness` answers from one Check kept `ttl` (the clock injected): probes within it ask nothing more,
    the first after it asks again, and probes arriving while that Check is answered wait for it (one in flight)."""
    server, health, port = _health_server()
    now = [100.0]
    channel = EngineChannel(f"127.0.0.1:{port}")
    readiness = Readiness(channel, timeout=2.0, ttl=READY_FOR, clock=lambda: now[0])
    try:
        assert readiness.status() == "SERVING" and health.checks == 1
        for _ in range(50):
            now[0] += READY_FOR / 100
            assert readiness.status() == "SERVING"
        assert health.checks == 1
        health.set(JSON_ENGINE, NOT_SERVING)
        assert readiness.status() == "SERVING"   # within the second: the answer kept
        now[0] += READY_FOR / 2
        # UNAVAILABLE: the channel's own health checking sends nothing to an engine that is not serving
        assert readiness.status() in ("NOT_SERVING", "UNAVAILABLE")

        def asked_again() -> str:
            now[0] += READY_FOR
            return readiness.status()
        health.set(JSON_ENGINE, SERVING)
        assert wait_until(lambda: asked_again() == "SERVING", 5.0)
        checks, health.delay = health.checks, 0.3
        now[0] += READY_FOR
        with futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: readiness.status(), range(8)))
        assert answers == ["SERVING"] * 8 and health.checks == checks + 1
    finally:
        channel.close()
        server.stop(0)


def test_the_gateways_readiness_follows_the_engine(wait_until: Callable[..., bool]) -> None:
    """`Engine.ready()`: NOT_SERVING, a stopped engine and a restarted one show within a bound, and an idle
    gateway asks nothing (no Check without a probe)."""
    server, health, port = _health_server()
    engine = Engine(f"127.0.0.1:{port}", timeout=2.0)
    try:
        assert engine.ready() == (True, "SERVING")
        checks = health.checks
        time.sleep(READY_FOR + 0.2)
        assert health.checks == checks   # idle: no Check (the channel's own health watch is its own business)
        health.set(JSON_ENGINE, NOT_SERVING)
        assert wait_until(lambda: not engine.ready()[0], 5.0)
        health.set(JSON_ENGINE, SERVING)
        assert wait_until(lambda: engine.ready() == (True, "SERVING"), 5.0)
        server.stop(0).wait()
        assert wait_until(lambda: engine.ready()[1] in ("UNAVAILABLE", "DEADLINE_EXCEEDED"), 5.0)
        server, health, _ = _health_server(port)
        assert wait_until(lambda: engine.ready() == (True, "SERVING"), 10.0)
    finally:
        engine.close()
        server.stop(0)


def test_readiness_with_no_engine_is_not_ready_within_the_probe_deadline() -> None:
    """Nobody listening: the first probe answers not ready (its Check's failure) within the probe timeout."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = Engine(f"127.0.0.1:{port}", timeout=2.0)
    try:
        started = time.monotonic()
        ready, status = engine.ready()
        assert not ready and status in ("UNAVAILABLE", "DEADLINE_EXCEEDED")
        assert time.monotonic() - started < 1.9  # PROBE_TIMEOUT (1 s) and no more
    finally:
        engine.close()
