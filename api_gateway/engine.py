"""The gateway's side of the gRPC engine: one lazily made channel per process, typed failures.

The channel comes from `clients.engine_client.EngineClient`, which creates it
on first use in each process (so a gunicorn worker never inherits one across
fork) with the service config that retries UNAVAILABLE and balances round-robin
over every address of the target. The gateway calls the generated stub with
protobuf messages (a sealed state never needs decoding to JSON) and a deadline
on every call, observes each call's latency, and turns gRPC statuses into the
exceptions below. `api_gateway.problems` maps those to HTTP in one place.
"""
from __future__ import annotations

import re
import time
from typing import Any

import grpc

from api_gateway import metrics
from clients.engine_client import EngineClient, EngineError
from engine_service.rules.errors import RulesError
from engine_service.status import MISDEAL_PREFIX

__all__ = [
    "Engine",
    "EngineDeadline",
    "EngineFailed",
    "EngineIllegal",
    "EngineMalformed",
    "EngineMisdeal",
    "EngineProblem",
    "EngineUnavailable",
]

# "state.round.hands[2].tiles[0]: tile id 31 ..." -> the codec's and rules' field path.
PROBE_TIMEOUT = 1.0

_FIELD = re.compile(r"^([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_]\w*)*): ")


class EngineProblem(Exception):
    """The engine refused or failed a call; `details` is what it said."""

    def __init__(self, details: str, method: str = "") -> None:
        super().__init__(details)
        self.details = details
        self.method = method

    @property
    def field(self) -> str | None:
        """The field the details name first, when they start with one ("state.round.to_move: ...")."""
        m = _FIELD.match(self.details)
        return m.group(1) if m else None


class EngineMalformed(EngineProblem):
    """INVALID_ARGUMENT: the engine could not understand the input."""


class EngineIllegal(EngineProblem):
    """FAILED_PRECONDITION: well formed, but illegal in this state."""


class EngineMisdeal(EngineIllegal):
    """FAILED_PRECONDITION with "misdeal:" details: an explicit deal the variant refuses."""


class EngineUnavailable(EngineProblem):
    """UNAVAILABLE after the retries (or RESOURCE_EXHAUSTED): try again later."""


class EngineDeadline(EngineProblem):
    """DEADLINE_EXCEEDED: no answer within the gateway's deadline."""


class EngineFailed(EngineProblem):
    """Any other status (INTERNAL, UNKNOWN, UNIMPLEMENTED ...): the engine failed."""

    def __init__(self, details: str, method: str = "", code: str = "UNKNOWN") -> None:
        super().__init__(details, method)
        self.code = code


def problem_for_status(code: grpc.StatusCode, details: str, method: str) -> EngineProblem:
    """The typed exception for a gRPC status other than OK."""
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return EngineMalformed(details, method)
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        if details.startswith(MISDEAL_PREFIX):
            return EngineMisdeal(details, method)
        return EngineIllegal(details, method)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
        return EngineUnavailable(details, method)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return EngineDeadline(details, method)
    return EngineFailed(details, method, code.name)


class Engine:
    """Calls `domino.v1.Engine` with protobuf messages; one instance per app, safe across fork."""

    def __init__(self, target: str, timeout: float, attempts: int = 4) -> None:
        self.target = target
        self.timeout = timeout
        self._client = EngineClient(target, timeout=timeout, max_attempts=attempts)
        # Readiness gets its own short deadline (a probe must answer before the kubelet gives up).
        # (The retry policy covers domino.v1.Engine only, not the health service.)
        self._probe = EngineClient(target, timeout=min(timeout, PROBE_TIMEOUT), max_attempts=2)

    def call(self, method: str, request: Any) -> Any:
        """`method` (e.g. "Apply") with `request`, within the deadline; raises an `EngineProblem`."""
        start = time.perf_counter()
        code = "OK"
        try:
            return getattr(self._client.stub, method)(request, timeout=self.timeout)
        except grpc.RpcError as err:
            status: grpc.StatusCode = err.code()
            details: str = err.details() or ""
            code = status.name
            raise problem_for_status(status, details, method) from None
        finally:
            metrics.observe_engine_call(method, code, time.perf_counter() - start)

    def ready(self) -> tuple[bool, str]:
        """(True, "SERVING") when the engine's health service says it serves domino.v1.Engine."""
        start = time.perf_counter()
        try:
            status = self._probe.health()
        except EngineError as exc:
            metrics.observe_engine_call("HealthCheck", exc.code.name, time.perf_counter() - start)
            return False, exc.code.name
        except RulesError as exc:  # the client maps INVALID_ARGUMENT (e.g. a bad target) to the rules' errors
            metrics.observe_engine_call("HealthCheck", "INVALID_ARGUMENT", time.perf_counter() - start)
            return False, f"INVALID_ARGUMENT: {exc}"
        metrics.observe_engine_call("HealthCheck", "OK", time.perf_counter() - start)
        return status == "SERVING", status

    def close(self) -> None:
        self._client.close()
        self._probe.close()
