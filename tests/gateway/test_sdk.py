"""The Python SDK (clients/sdk) against a real gateway and engine: both modes, every error as its class,
503 retried with Retry-After honoured, timeouts, the typed gRPC wrapper."""
from __future__ import annotations

import socket
import time
from collections.abc import Callable

import grpc
import pytest
from domino.v1 import engine_pb2 as pb

from api_gateway.http.problems import PROBLEM_TYPES
from clients.sdk import (
    AnswerTimeout,
    Bot,
    EngineClient,
    IllegalAction,
    Malformed,
    ProblemError,
    RestClient,
    StaleToken,
    TransportError,
    TypedEngine,
    Unreachable,
    ValidationFailed,
    errors,
)

from .conftest import EngineProc, FakeEngine, Gateway, free_port

pytestmark = pytest.mark.service


def test_every_problem_type_of_the_gateway_has_its_own_class() -> None:
    assert set(errors.PROBLEM_CLASSES) == set(PROBLEM_TYPES)
    for name, cls in errors.PROBLEM_CLASSES.items():
        status = PROBLEM_TYPES[name].status
        assert issubclass(cls, errors.ServerProblem if status >= 500 else errors.ClientProblem), name
    assert errors.problem_class(418, "/v1/problems/newer-type") is errors.ClientProblem
    assert errors.problem_class(404, "about:blank") is errors.NotFound


def test_a_transparent_match_is_played_to_the_end_of_a_round(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    match = api.create("kozel", 4, seed=42)
    assert match.events[0]["type"] == "round_dealt" and match.scores == [0, 0, 0, 0]
    moves = 0
    while True:
        legal = match.legal()
        view = match.seat_view(legal.seat) if legal.seat is not None else match.view
        if view["round_over"]:
            break
        match.apply(legal.actions[0], seat=legal.seat)
        moves += 1
    assert moves > 4 and match.round_over and match.view["ending"] in ("out", "fish")
    assert match.answer["scores"] == match.scores


def test_a_sealed_match_with_every_key_is_played_hot_seat(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    match = api.create_sealed("all-fives", 2)
    assert match.view["seat"] is None and match.view["hand"] == []   # the host's view after create
    first_token = match.token
    while not match.round_over:
        seat = match.to_move
        actions = match.legal_actions()
        match.apply(actions[0])
        assert match.view["seat"] == seat and isinstance(match.view["hand"], list)
    assert match.seq > 1 and match.scores == match.view["ledger"]["scores"]
    with pytest.raises(StaleToken) as stale:
        api.legal({"token": first_token, "seat_key": match.key(0)})
    assert stale.value.status == 409 and stale.value.latest == match.seq
    match.next_round(seat=0)
    assert match.view["round_number"] == 2 and not match.round_over


def test_a_seat_holder_sees_only_its_own_hand_and_is_refused_out_of_turn(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    match = api.create_sealed("kozel", 4, seat=1)
    match.forget_other_keys()
    assert match.view["seat"] == 1 and len(match.view["hand"]) == 7
    with pytest.raises(LookupError):
        match.key(0)
    if match.to_move != 1:
        with pytest.raises(IllegalAction) as refused:
            match.apply(match.view["hand"][0])
        assert refused.value.status == 409 and "turn" in refused.value.detail


def test_each_error_answer_raises_its_class(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    match = api.create("kozel", 4, seed=42)
    with pytest.raises(IllegalAction) as illegal:
        match.apply("6-6")
    assert illegal.value.action == "6-6" and illegal.value.problem["instance"] == "/v1/matches/apply"
    with pytest.raises(Malformed):
        match.apply("not a tile")
    with pytest.raises(errors.UnknownVariant):
        api.variant("tiddlywinks")
    with pytest.raises(ValidationFailed) as invalid:
        api.post("/v1/matches", {"variant": "kozel", "players": "4"})
    assert "players" in invalid.value.errors.get("json", invalid.value.errors) or invalid.value.field
    with pytest.raises(errors.WrongSeatKey):
        api.legal({"token": api.create_sealed("kozel", 4).token,
                   "seat_key": api.create_sealed("kozel", 4).seat_keys[0]})
    with pytest.raises(errors.InvalidToken):
        api.legal({"token": "v1.broken", "seat_key": "0.x"})
    with pytest.raises(errors.NotFound):
        api.request("GET", "/v1/nothing-here")


def test_a_503_is_retried_after_the_retry_after_it_names(fake_engine: Callable[[], FakeEngine],
                                                         start_gateway: Callable[..., Gateway]) -> None:
    engine = fake_engine()
    failing = {"left": 0}

    def legal(request: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        if failing["left"] > 0:
            failing["left"] -= 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "starting up")
        return pb.JsonAnswer(answer=b'{"seat": 0, "actions": ["1-1"]}')

    engine.servicer.handlers["LegalActions"] = legal
    gw = start_gateway(engine.address, env={"GATEWAY_ENGINE_ATTEMPTS": "2", "GATEWAY_RETRY_AFTER": "1"})
    failing["left"] = 2          # both of the gateway's attempts of the first request: a 503
    api = RestClient(gw.url, retries=3, backoff=0.01)
    started = time.monotonic()
    assert api.legal({"state": {}}).actions == ["1-1"]
    assert time.monotonic() - started >= 0.9          # waited the Retry-After of the 503
    assert failing["left"] == 0
    failing["left"] = 1000
    with pytest.raises(errors.EngineUnavailable) as down:
        RestClient(gw.url, retries=0).legal({"state": {}})
    assert down.value.status == 503 and down.value.retry_after == 1.0


def test_engine_busy_is_retried_then_raised(fake_engine: Callable[[], FakeEngine],
                                           start_gateway: Callable[..., Gateway]) -> None:
    """429 engine-busy (every bot of the engine deciding) is worth asking again, as a 503 is."""
    engine = fake_engine()
    busy = {"left": 1}

    def hints(request: pb.JsonCall, context: grpc.ServicerContext) -> pb.JsonAnswer:
        if busy["left"] > 0:
            busy["left"] -= 1
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy: every bot is deciding")
        return pb.JsonAnswer(answer=b'{"hints": {"seat": 0}}')

    engine.servicer.handlers["Hints"] = hints
    gw = start_gateway(engine.address, env={"GATEWAY_BUSY_WAIT": "0", "GATEWAY_RETRY_AFTER": "0"})
    api = RestClient(gw.url, retries=2, backoff=0.01)
    assert api.request("POST", "/v1/matches/hints", {"state": {}, "seat": 0}) == {"hints": {"seat": 0}}
    busy["left"] = 1000
    with pytest.raises(errors.EngineBusy) as refused:
        api.request("POST", "/v1/matches/hints", {"state": {}, "seat": 0})
    assert refused.value.status == 429 and engine.servicer.calls.count("Hints") == 2 + 3


def test_no_server_and_a_silent_server_are_transport_errors_within_the_timeout() -> None:
    api = RestClient(f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.01)
    with pytest.raises(Unreachable) as refused:
        api.variants()
    assert isinstance(refused.value, TransportError) and not refused.value.maybe_applied
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        with pytest.raises(AnswerTimeout) as late:     # sent, never answered: not sent again
            RestClient(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.5).variants()
        assert time.monotonic() - started < 5 and late.value.maybe_applied


def test_the_grpc_faces_json_and_typed(engine_proc: EngineProc) -> None:
    with EngineClient(engine_proc.address) as client:
        answer = client.new_match("kozel", 4, seed=42)
        seat, actions = client.legal_actions(answer.state)
        typed = TypedEngine(client)
        variants = typed.list_variants(pb.ListVariantsRequest())
        assert "kozel" in [v.name for v in variants.variants]
        made = typed.new_match(pb.NewMatchRequest(variant="kozel", players=4, seed=42))
        legal = typed.legal_actions(pb.StateRequest(state=made.state))
        assert (legal.seat, list(legal.actions)) == (seat, actions)
        from engine_service.rules.errors import IllegalActionError
        with pytest.raises(IllegalActionError):
            typed.apply(pb.ApplyRequest(state=made.state, action="6-6"))


def test_the_typed_client_has_every_typed_call(engine_proc: EngineProc) -> None:
    """One method per RPC of `domino.v1.Engine` (its snake_case name), the newer calls on a GameState too."""
    import re

    from engine_service.edge import game_state
    from engine_service.rules import Match

    names = {re.sub(r"(?<!^)(?=[A-Z])", "_", m.name).lower() for m in pb.DESCRIPTOR.services_by_name["Engine"].methods}
    assert names <= set(vars(TypedEngine)), names - set(vars(TypedEngine))
    match, _ = Match.new("block", 2, seed=4)
    state = pb.GameState.FromString(game_state.encode(match))
    with EngineClient(engine_proc.address) as client:
        typed = TypedEngine(client)
        hints = typed.hints(pb.HintsRequest(state=state, seat=match.to_move, seed=1))
        assert set(hints.match.values) == set(match.legal_actions())
        text = typed.export_record(pb.ExportRecordRequest(state=state)).text
        assert typed.import_record(pb.ImportRecordRequest(text=text)).state == state
        assert typed.replay_record(pb.ReplayRecordRequest(text=text, upto=1)).move == 1
        moved = typed.seat_bot(pb.SeatBotRequest(state=state, seat=match.to_move, level="random"))
        assert moved.match.events
        from engine_service.rules.errors import MalformedError
        with pytest.raises(MalformedError):
            typed.hints(pb.HintsRequest(state=state, seat=5))


def test_bots_are_sent_as_the_gateway_reads_them() -> None:
    assert Bot(2, "greedy").to_json() == {"seat": 2, "level": "greedy"}
    assert issubclass(StaleToken, ProblemError)
