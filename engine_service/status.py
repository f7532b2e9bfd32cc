"""Where the engine's exceptions become gRPC status codes.

`StatusInterceptor` wraps every unary method of `domino.v1.Engine` and
`domino.v1.JsonEngine`: it parses the request itself (so undecodable bytes are
INVALID_ARGUMENT, not grpcio's generic INTERNAL) and turns whatever the handler
raises into a status, through the contract's one table (`domino.v1.errors`):

=====================================  ==========================================
raised                                 refusal -> status (details)
=====================================  ==========================================
`MalformedError`, protobuf DecodeError MALFORMED -> INVALID_ARGUMENT (naming the field)
`MisdealError`                         MISDEAL -> FAILED_PRECONDITION ("misdeal: ...")
`IllegalActionError`                   ILLEGAL -> FAILED_PRECONDITION (the rules' message)
a `CallStopped` (`admission`)          its own: RESOURCE_EXHAUSTED "busy: ...", DEADLINE_EXCEEDED
anything else                          INTERNAL ("internal error"; logged with its traceback)
=====================================  ==========================================

The gateway and the Python client map statuses back with the same table.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeAlias

import grpc
from domino.v1.channel import ENGINE, JSON_ENGINE
from domino.v1.errors import Refusal, status_of
from google.protobuf.message import DecodeError

from engine_service.rules import IllegalActionError, MisdealError, RulesError

log = logging.getLogger("engine_service.status")

PREFIXES = (f"/{ENGINE}/", f"/{JSON_ENGINE}/")
INTERNAL_DETAILS = "internal error"


class CallStopped(Exception):
    """The engine stopped a call itself, not for anything wrong in it (`engine_service.admission`:
    no bot slot free, the deadline passed); `status` is the code and details it ends with."""

    def status(self) -> tuple[grpc.StatusCode, str]:
        raise NotImplementedError


def refusal_for(exc: RulesError) -> Refusal:
    """Which refusal a rules exception is."""
    if isinstance(exc, MisdealError):
        return Refusal.MISDEAL
    if isinstance(exc, IllegalActionError):
        return Refusal.ILLEGAL
    return Refusal.MALFORMED


def status_for(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and details for an exception raised while serving a call."""
    if isinstance(exc, RulesError):
        return status_of(refusal_for(exc), str(exc))
    if isinstance(exc, CallStopped):
        return exc.status()
    if isinstance(exc, DecodeError):
        return status_of(Refusal.MALFORMED, "request is not a valid protobuf message of its type")
    return grpc.StatusCode.INTERNAL, INTERNAL_DETAILS


Behavior = Callable[[Any, grpc.ServicerContext], Any]
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # generic only in the stubs


def _guard(method: str, behavior: Behavior, deserialize: Callable[[bytes], Any] | None) -> Behavior:
    """`behavior` with its request parsed inside, and every exception turned into a status."""

    def guarded(raw: Any, context: grpc.ServicerContext) -> Any:
        try:
            request = deserialize(raw) if deserialize is not None else raw
            return behavior(request, context)
        except Exception as exc:
            already = context.code()  # type: ignore[attr-defined]  # grpcio >= 1.38, not in the stubs
            if already is not None and already != grpc.StatusCode.OK:
                raise  # the handler aborted with a status of its own
            code, details = status_for(exc)
            if code == grpc.StatusCode.INTERNAL:
                log.exception("unexpected error in %s", method)
            context.abort(code, details)

    return guarded


class UnaryInterceptor(grpc.ServerInterceptor):
    """Base of the engine's interceptors: wraps each unary method's handler once, not per call.

    A subclass says which methods it `applies_to` and how to `wrap` a handler
    (given its unary `behavior`); streaming methods (health Watch, reflection)
    always pass through.
    """

    def __init__(self) -> None:
        # method -> (the handler we wrapped, its wrapped version)
        self._cache: dict[str, tuple[Handler, Handler]] = {}

    def applies_to(self, method: str) -> bool:
        return True

    def wrap(self, method: str, handler: Handler, behavior: Behavior) -> Handler:
        raise NotImplementedError

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or handler.unary_unary is None or not self.applies_to(method):
            return handler
        behavior: Behavior = handler.unary_unary
        cached = self._cache.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self.wrap(method, handler, behavior)
        self._cache[method] = (handler, wrapped)
        return wrapped


class StatusInterceptor(UnaryInterceptor):
    """Maps exceptions to statuses for both engine services' unary methods (health and reflection untouched)."""

    def __init__(self, prefixes: tuple[str, ...] = PREFIXES) -> None:
        super().__init__()
        self._prefixes = prefixes

    def applies_to(self, method: str) -> bool:
        return method.startswith(self._prefixes)

    def wrap(self, method: str, handler: Handler, behavior: Behavior) -> Handler:
        wrapped: Handler = grpc.unary_unary_rpc_method_handler(
            _guard(method, behavior, handler.request_deserializer),
            request_deserializer=None,
            response_serializer=handler.response_serializer,
        )
        return wrapped
