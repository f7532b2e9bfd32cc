"""The gateway's side of the gRPC engine: the JSON face, one lazily made channel per process, typed failures.

The gateway calls `domino.v1.JsonEngine` (the engine's calls in the JSON of
docs/rest.md): it sends a request's arguments as JSON and, in sealed mode, the
state's bytes from the token, and gets the answer's JSON (and the new state's
bytes) back, so it never reads a state. The channel is the contract's
`domino.v1.channel.EngineChannel` (made on first use in each process, retries on
UNAVAILABLE, round-robin over every address of the target); every call has a
deadline, its latency is observed, and a status other than OK becomes one of the
exceptions below through the contract's one table (`domino.v1.errors`).
`api_gateway.http.problems` maps those to HTTP. Readiness (`/readyz`) is the engine's
health as one Health/Watch stream per process last pushed it (`Readiness`), not a call
per probe.
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

import grpc
import orjson
from domino.v1 import engine_pb2 as pb
from domino.v1.channel import JSON_ENGINE, EngineChannel, HealthWatch
from domino.v1.errors import Limit, Refusal, limit_of, refusal_of, size_of
from grpc_health.v1 import health_pb2

from api_gateway import metrics

__all__ = [
    "Engine",
    "EngineBusy",
    "EngineDeadline",
    "EngineFailed",
    "EngineIllegal",
    "EngineMalformed",
    "EngineMisdeal",
    "EngineProblem",
    "EngineTooLarge",
    "EngineUnavailable",
]

PROBE_TIMEOUT = 1.0

# The engine's messages name the field to blame first, in one of two forms (docs/grpc.md):
# "state.round.hands[2].tiles[0]: tile id 31 ...", "players must be an integer ..." -> its path.
_FIELD = re.compile(r"^([A-Za-z_]\w*(?:\[\d+\]|\.[A-Za-z_]\w*)*)(?:: | must )")


class EngineProblem(Exception):
    """The engine refused or failed a call; `details` is what it said."""

    def __init__(self, details: str, method: str = "") -> None:
        super().__init__(details)
        self.details = details
        self.method = method

    @property
    def field(self) -> str | None:
        """The field the details name first, when they start with one ("state.round.to_move: ...",
        "options must be an object ...")."""
        m = _FIELD.match(self.details)
        return m.group(1) if m else None


class EngineMalformed(EngineProblem):
    """INVALID_ARGUMENT: the engine could not understand the input."""


class EngineIllegal(EngineProblem):
    """FAILED_PRECONDITION: well formed, but illegal in this state."""


class EngineMisdeal(EngineIllegal):
    """FAILED_PRECONDITION with "misdeal:" details: an explicit deal the variant refuses."""


class EngineUnavailable(EngineProblem):
    """UNAVAILABLE after the retries (or RESOURCE_EXHAUSTED for another reason): try again later."""


class EngineBusy(EngineProblem):
    """RESOURCE_EXHAUSTED "busy:": every bot slot of the engine is thinking; try again shortly."""


class EngineTooLarge(EngineProblem):
    """RESOURCE_EXHAUSTED over a gRPC message limit: the same call fails again (never a 503)."""

    def __init__(self, details: str, method: str = "") -> None:
        super().__init__(details, method)
        size = size_of(details)
        self.what = size.what if size is not None else "message"
        self.size = size.size if size is not None else None
        self.limit = size.limit if size is not None else None


class EngineDeadline(EngineProblem):
    """DEADLINE_EXCEEDED: no answer within the gateway's deadline."""


class EngineFailed(EngineProblem):
    """Any other status (INTERNAL, UNKNOWN, UNIMPLEMENTED ...): the engine failed."""

    def __init__(self, details: str, method: str = "", code: str = "UNKNOWN") -> None:
        super().__init__(details, method)
        self.code = code


_REFUSED: dict[Refusal, type[EngineProblem]] = {
    Refusal.MALFORMED: EngineMalformed, Refusal.ILLEGAL: EngineIllegal, Refusal.MISDEAL: EngineMisdeal,
}


def problem_for_status(code: grpc.StatusCode, details: str, method: str) -> EngineProblem:
    """The typed exception for a gRPC status other than OK."""
    refusal = refusal_of(code, details)
    if refusal is not None:
        return _REFUSED[refusal](details, method)
    limit = limit_of(code, details)
    if limit is Limit.BUSY:
        return EngineBusy(details, method)
    if limit is Limit.TOO_LARGE:
        return EngineTooLarge(details, method)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
        return EngineUnavailable(details, method)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return EngineDeadline(details, method)
    return EngineFailed(details, method, code.name)


#: The first pause before asking a busy engine again; each next one is twice as long.
BUSY_PAUSE = 0.1


class Engine:
    """Calls `domino.v1.JsonEngine`; one instance per app, safe across fork.

    An engine that answers busy (every bot slot thinking: `EngineBusy`) is asked again after
    0.1 s, 0.2 s, 0.4 s ... for at most `busy_wait` seconds, within the call's deadline: a
    person asking for a hint at a busy moment gets it a little later instead of a refusal, and a
    client that asks again as soon as it is refused is slowed to one request per `busy_wait`
    (a waiting request is a greenlet asleep; the engine's refusals cost it a parse each).
    """

    def __init__(self, target: str, timeout: float, attempts: int = 4, busy_wait: float = 1.0) -> None:
        self.target = target
        self.timeout = timeout
        self.busy_wait = busy_wait
        self._channel = EngineChannel(target, max_attempts=attempts)
        # Readiness is watched on its own channel; a probe waits at most this long for the first answer.
        self._probe = EngineChannel(target, max_attempts=2)
        self._readiness = Readiness(self._probe, min(timeout, PROBE_TIMEOUT))

    def call(self, method: str, args: Mapping[str, Any], state: bytes = b"") -> pb.JsonAnswer:
        """`method` (e.g. "Apply") with `args` (and a sealed `state`) within the deadline.

        Raises an `EngineProblem`: the engine's refusal, or its failure. Arguments JSON
        cannot carry (an integer beyond 64 bits) are refused here as malformed.
        """
        try:
            encoded = orjson.dumps(args)
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise EngineMalformed(f"request: {exc} (integers are limited to 64 bits)", method) from None
        request = pb.JsonCall(args=encoded, state=state)
        waited, pause = 0.0, BUSY_PAUSE
        while True:
            try:
                return self._call(method, request, self.timeout - waited)
            except EngineBusy:
                if waited + pause > min(self.busy_wait, self.timeout / 2):  # leave the last try its time
                    raise
            time.sleep(pause)  # cooperative under the gateway's gevent worker
            waited += pause
            pause *= 2

    def _call(self, method: str, request: pb.JsonCall, timeout: float) -> pb.JsonAnswer:
        """One call of `method` (the channel retries UNAVAILABLE itself), its latency observed."""
        start = time.perf_counter()
        code = "OK"
        try:
            reply: pb.JsonAnswer = getattr(self._channel.json, method)(request, timeout=timeout)
            return reply
        except grpc.RpcError as err:
            status: grpc.StatusCode = err.code()
            details: str = err.details() or ""
            code = status.name
            raise problem_for_status(status, details, method) from None
        finally:
            metrics.observe_engine_call(method, code, time.perf_counter() - start)

    def ready(self) -> tuple[bool, str]:
        """(True, "SERVING") when the engine's health service says it serves the JSON face: the status
        its Health/Watch stream last pushed (`Readiness`), not a call of its own."""
        status = self._readiness.status()
        return status == "SERVING", status

    def close(self) -> None:
        self._readiness.close()
        self._channel.close()
        self._probe.close()


#: The pause before a broken health watch is opened again (the channel reconnects within ~0.5 s).
WATCH_PAUSE = 0.1


class Readiness:
    """The engine's health for the JSON face, kept by one `grpc.health.v1.Health/Watch` stream per process.

    `/readyz` used to make a Health/Check call each time: a gRPC round trip from a gevent worker
    (~250 us of the gateway's CPU and ~300 us of the engine's on this machine, docs/performance.md,
    issue 40) to say what the engine had not changed. The engine pushes each change of the status on
    the stream instead, and a probe reads the last one. The stream breaks as soon as the engine
    goes (its connection closes, or keepalive finds it frozen within ~1.5 s: `domino.v1.channel`),
    and the status is then the stream's failure ("UNAVAILABLE"), so a probe says not ready as
    early as a Check would have; the stream is opened again every `WATCH_PAUSE` until the engine
    answers. Made on first use in each process (a watcher thread, a greenlet under the gevent
    worker, does not cross a fork); a probe before the first answer waits for it at most `timeout`
    ("DEADLINE_EXCEEDED" past it). The engine's side of a watch holds no call worker
    (`engine_service.health`: non-blocking Watch).
    """

    def __init__(self, channel: EngineChannel, timeout: float) -> None:
        self._channel = channel
        self._timeout = timeout
        self._lock = threading.Lock()
        self._pid = -1
        self._status: str | None = None
        self._known = threading.Event()
        self._closed = threading.Event()
        self._call: HealthWatch | None = None

    def status(self) -> str:
        """The last status the engine pushed ("SERVING", "NOT_SERVING" ...), or why there is none
        ("UNAVAILABLE" while the stream is broken, "DEADLINE_EXCEEDED" before a first answer)."""
        if self._pid != os.getpid():
            self._start()
        if not self._known.wait(self._timeout):
            return "DEADLINE_EXCEEDED"
        return self._status or "UNKNOWN"

    def _start(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._status, self._known, self._closed, self._call = None, threading.Event(), threading.Event(), None
            threading.Thread(target=self._watch, name="engine-health-watch", daemon=True).start()

    def _set(self, status: str) -> None:
        self._status = status
        self._known.set()

    def _watch(self) -> None:
        """Watch until closed: each pushed status kept, a broken stream's code kept and the stream reopened."""
        request = health_pb2.HealthCheckRequest(service=JSON_ENGINE)
        closed = self._closed
        while not closed.is_set():
            start = time.perf_counter()
            code = "OK"
            try:
                call = self._channel.health_watch(request)
                self._call = call
                for reply in call:
                    self._set(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
                code = "UNAVAILABLE"  # the engine ended the stream: it is going
            except grpc.RpcError as err:
                status = err.code()
                code = status.name if status is not None else "UNKNOWN"
            except ValueError as exc:  # grpcio refuses a target it cannot parse: it never will
                self._set(f"INVALID_ARGUMENT: {exc}")
                metrics.observe_engine_call("HealthWatch", "INVALID_ARGUMENT", time.perf_counter() - start)
                return
            if closed.is_set():
                return
            self._set(code)
            metrics.observe_engine_call("HealthWatch", code, time.perf_counter() - start)
            closed.wait(WATCH_PAUSE)

    def close(self) -> None:
        """End this process's watch (its thread leaves at the stream's cancellation)."""
        self._closed.set()
        call = self._call
        if call is not None and self._pid == os.getpid():
            call.cancel()
