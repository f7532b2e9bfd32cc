"""The error model: the contract's table (domino.v1.errors) and the engine's exception -> status mapping."""
from __future__ import annotations

import random

import grpc
import pytest
from domino.v1.errors import MAX_DETAILS, MISDEAL_PREFIX, Refusal, refusal_of, status_of
from google.protobuf.message import DecodeError

from engine_service.rules import IllegalActionError, MalformedError, MisdealError
from engine_service.status import INTERNAL_DETAILS, refusal_for, status_for


@pytest.mark.parametrize("exc,code,details", [
    (MalformedError("state.round: bad"), grpc.StatusCode.INVALID_ARGUMENT, "state.round: bad"),
    (IllegalActionError("'6-6@E': no"), grpc.StatusCode.FAILED_PRECONDITION, "'6-6@E': no"),
    (MisdealError("misdeal: again"), grpc.StatusCode.FAILED_PRECONDITION, "misdeal: again"),
    (MisdealError("five doubles"), grpc.StatusCode.FAILED_PRECONDITION, "misdeal: five doubles"),
    (DecodeError("truncated"), grpc.StatusCode.INVALID_ARGUMENT,
     "request is not a valid protobuf message of its type"),
    (KeyError("secret internals"), grpc.StatusCode.INTERNAL, INTERNAL_DETAILS),
    (ZeroDivisionError(), grpc.StatusCode.INTERNAL, INTERNAL_DETAILS),
])
def test_mapping(exc: Exception, code: grpc.StatusCode, details: str) -> None:
    """Each kind of exception gets its status code and details; anything unexpected is INTERNAL with fixed
    details."""
    assert status_for(exc) == (code, details)


@pytest.mark.parametrize(("exc", "refusal"), [
    (MalformedError("x"), Refusal.MALFORMED), (IllegalActionError("x"), Refusal.ILLEGAL),
    (MisdealError("x"), Refusal.MISDEAL),
])
def test_the_rules_exceptions_go_through_the_contracts_table(exc: Exception, refusal: Refusal) -> None:
    """status_for is the table's status_of for the refusal each rules exception is, and maps back to it."""
    assert refusal_for(exc) is refusal  # type: ignore[arg-type]
    assert status_for(exc) == status_of(refusal, str(exc))
    assert refusal_of(*status_for(exc)) is refusal


def _messages(rng: random.Random) -> list[str]:
    alphabet = "abc :'-@!0123456789é\n"
    return ["", "x", "misdeal: again", "misdeal", "state.round.hands[2]: tile id 31 is not a tile",
            "y" * (MAX_DETAILS - 1), "z" * MAX_DETAILS, "w" * (MAX_DETAILS + 1), "v" * 100_000,
            *("".join(rng.choice(alphabet) for _ in range(rng.randrange(700))) for _ in range(200))]


@pytest.mark.parametrize("refusal", list(Refusal))
def test_the_table_round_trips(refusal: Refusal) -> None:
    """Every refusal, whatever its message, comes back as itself from its status (the gateway and the client
    read statuses back with refusal_of); misdeal details start "misdeal:" and details fit MAX_DETAILS."""
    for message in _messages(random.Random(refusal.value)):
        code, details = status_of(refusal, message)
        assert refusal_of(code, details) is refusal, message
        assert code != grpc.StatusCode.INTERNAL and len(details) <= MAX_DETAILS
        assert details  # a refusal always says something
        if len(message) <= MAX_DETAILS and refusal is not Refusal.MISDEAL and message \
                and not message.startswith(MISDEAL_PREFIX):
            assert details == message
        if len(message) > MAX_DETAILS:
            assert details.endswith("...") and len(details) == MAX_DETAILS
        if refusal is Refusal.MISDEAL:
            assert details.startswith(MISDEAL_PREFIX)
            if len(message) <= MAX_DETAILS - len(MISDEAL_PREFIX) - 1:
                assert message in details
    for code in grpc.StatusCode:
        if code not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
            assert refusal_of(code, "misdeal: x") is None  # a failure of the service, not a refusal


def test_an_illegal_refusal_that_quotes_misdeal_stays_illegal() -> None:
    """An ILLEGAL message that happens to start with misdeal: must not come back as MISDEAL."""
    assert refusal_of(*status_of(Refusal.ILLEGAL, "misdeal: not now")) is Refusal.ILLEGAL


def test_long_details_are_clipped() -> None:
    """A refusal quoting huge input is clipped to MAX_DETAILS, ending with an ellipsis."""
    code, details = status_for(MalformedError("not an action: " + "x" * 100_000))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert len(details) == MAX_DETAILS and details.endswith("...")


@pytest.mark.service
def test_an_unexpected_exception_is_internal_logged_and_the_server_lives_on(
        caplog: pytest.LogCaptureFixture) -> None:
    """The real interceptors on a real (in-process) server around a handler that fails like a bug would."""
    from concurrent import futures

    from domino.v1 import engine_pb2 as pb

    from engine_service.metrics import ObservingInterceptor
    from engine_service.status import StatusInterceptor

    calls = []

    def list_variants(request: pb.ListVariantsRequest, context: grpc.ServicerContext) -> pb.ListVariantsResponse:
        calls.append(request)
        if len(calls) == 1:
            raise KeyError("secret internals")
        if len(calls) == 2:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "a status of the handler's own")
        return pb.ListVariantsResponse()

    handler = grpc.unary_unary_rpc_method_handler(
        list_variants, request_deserializer=pb.ListVariantsRequest.FromString,
        response_serializer=pb.ListVariantsResponse.SerializeToString)
    server = grpc.server(futures.ThreadPoolExecutor(2), options=[("grpc.so_reuseport", 0)],
                         interceptors=[ObservingInterceptor(log_calls=False), StatusInterceptor()])
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("domino.v1.Engine", {"ListVariants": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = ch.unary_unary("/domino.v1.Engine/ListVariants",
                                  request_serializer=pb.ListVariantsRequest.SerializeToString,
                                  response_deserializer=pb.ListVariantsResponse.FromString)
            with caplog.at_level("ERROR", logger="engine_service.status"), pytest.raises(grpc.RpcError) as info:
                call(pb.ListVariantsRequest(), timeout=5)
            assert (info.value.code(), info.value.details()) == (grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
            assert "secret internals" not in info.value.details()
            assert any("secret internals" in (r.exc_text or "") or r.exc_info for r in caplog.records)
            with pytest.raises(grpc.RpcError) as info:
                call(pb.ListVariantsRequest(), timeout=5)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert call(pb.ListVariantsRequest(), timeout=5) == pb.ListVariantsResponse()
    finally:
        server.stop(0)
