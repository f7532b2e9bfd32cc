"""engine_service.status.status_for: the one exception -> status table."""
from __future__ import annotations

import grpc
import pytest
from google.protobuf.message import DecodeError

from engine_service.rules import IllegalActionError, MalformedError, MisdealError
from engine_service.status import INTERNAL_DETAILS, MAX_DETAILS, status_for


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
    assert status_for(exc) == (code, details)


def test_long_details_are_clipped() -> None:
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
