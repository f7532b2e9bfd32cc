"""The gateway's side of the gRPC engine: the JSON face, one lazily made channel per process, typed failures.

The gateway calls `domino.v1.JsonEngine` (the engine's calls in the JSON of
docs/rest.md): it sends a request's arguments as JSON and, in sealed mode, the
state's bytes from the token, and gets the answer's JSON (and the new state's
bytes) back, so it never reads a state. The channel is the contract's
`domino.v1.channel.EngineChannel` (made on first use in each process, retries on
UNAVAILABLE, round-robin over every address of the target); every call has a
deadline, its latency is observed, and a status other than OK becomes one of the
exceptions below through the contract's one table (`domino.v1.errors`).
`api_gateway.http.problems` maps those to HTTP. A worker's calls of the same moment
go as one `JsonEngine/Batch` (`api_gateway.engine_batches`; docs/grpc.md "Batches"),
each answered and counted as its own call. Readiness (`/readyz`) is the engine's
health as one Check answered it at most a second ago (`Readiness`), not a call per probe.
"""
from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import gevent
import grpc
import orjson
from domino.v1 import engine_pb2 as pb
from domino.v1.channel import JSON_ENGINE, EngineChannel
from domino.v1.errors import Limit, Refusal, limit_of, refusal_of, size_of, status_code
from gevent import monkey

from api_gateway import metrics
from api_gateway.engine_batches import Batches, BatchFailed

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

#: Calls sent on their own, never in a batch: they may take long (a replay, a record) and would hold up the
#: other answers of their batch, or they need a bot worker, which a batch does not wait for (Suggest, Hints).
ALONE = frozenset({"Replay", "ImportRecord", "ReplayRecord", "ExportRecord", "Suggest", "Hints"})

log = logging.getLogger(__name__)


class _Refused(Exception):
    """A call of a batch answered with a status other than OK."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


def _settle() -> None:
    """In a gevent worker (the gateway's), let its other requests run until each has reached its own engine
    call or waits on something else: the worker's loop idle. Elsewhere (a test's threads) nothing."""
    if monkey.is_module_patched("threading"):
        gevent.idle()


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
        # A worker's calls waiting at the same moment go as one `JsonEngine/Batch` (`api_gateway.engine_batches`),
        # a process's own (made after a fork, as the channel is), until the engine answers that it has no batches
        # (an engine from before them): calls one by one from then on.
        self._batching = True
        self._batches: tuple[int, Batches] | None = None
        # Readiness asks on the calls' own channel (no second connection to keep alive), within its own deadline.
        self._readiness = Readiness(self._channel, min(timeout, PROBE_TIMEOUT))

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
        try:
            answer = self._answer(method, request, start + timeout)
        except grpc.RpcError as err:
            status: grpc.StatusCode = err.code()
            details: str = err.details() or ""
        except (BatchFailed, _Refused) as stopped:
            status, details = stopped.code, stopped.details
        except TimeoutError:
            status, details = grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"
        else:
            metrics.observe_engine_call(method, "OK", time.perf_counter() - start)
            return answer
        metrics.observe_engine_call(method, status.name, time.perf_counter() - start)
        raise problem_for_status(status, details, method)

    def _answer(self, method: str, request: pb.JsonCall, deadline: float) -> pb.JsonAnswer:
        """The call's answer: in a batch with the worker's other calls of the moment, or on its own (`ALONE`,
        deferred by the engine, or an engine without batches); a status other than OK raised."""
        if self._batching and method not in ALONE:
            try:
                item = self._batcher().call(method, request, deadline - time.perf_counter())
            except BatchFailed as failed:
                if failed.code != grpc.StatusCode.UNIMPLEMENTED:
                    raise
                self._batching = False
                log.warning("the engine at %s has no JsonEngine/Batch (an older engine): calls go one by one",
                            self.target)
            else:
                if not item.deferred:
                    if item.code:
                        raise _Refused(status_code(item.code), item.details)
                    return item.answer
        reply: pb.JsonAnswer = getattr(self._channel.json, method)(request, timeout=deadline - time.perf_counter())
        return reply

    def _batcher(self) -> Batches:
        """This process's batches (a forked child makes its own: a lock taken in the parent stays taken)."""
        pid = os.getpid()
        if self._batches is None or self._batches[0] != pid:
            self._batches = (pid, Batches(self._send_batch, _settle, sizes=metrics.observe_engine_batch))
        return self._batches[1]

    def _send_batch(self, batch: pb.JsonBatch, timeout: float) -> pb.JsonBatchAnswer:
        answer: pb.JsonBatchAnswer = self._channel.json.Batch(batch, timeout=timeout)
        return answer

    def ready(self) -> tuple[bool, str]:
        """(True, "SERVING") when the engine's health service says it serves the JSON face: its answer of
        at most a second ago (`Readiness`), not a call per probe."""
        status = self._readiness.status()
        return status == "SERVING", status

    def close(self) -> None:
        self._channel.close()


#: How long a probe's answer stands: `/readyz` asks the engine at most this often in each process.
READY_FOR = 1.0


class Readiness:
    """The engine's health for the JSON face: one `grpc.health.v1.Health/Check`, its answer kept `ttl` seconds.

    A Check per `/readyz` cost a gevent worker ~250 µs and the engine ~325 µs, more than the whole
    `/healthz` (docs/performance.md, issue 40): probes within `ttl` of the last answer read it, and
    the one that finds it older asks again while the others wait for its answer (one Check in flight
    a process). An idle gateway asks nothing: a watch stream held open for the same purpose cost
    each idle worker a wake-up every 0.1 s (grpcio polls a stream's messages under gevent),
    about 0.6% of a core for two workers. A probe waits at most `timeout` (the Check's
    deadline: "DEADLINE_EXCEEDED" past it), and an engine that goes shows within `ttl` of it.
    """

    def __init__(self, channel: EngineChannel, timeout: float, ttl: float = READY_FOR,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._channel = channel
        self._timeout = timeout
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._status = ""
        self._asked = -math.inf

    def status(self) -> str:
        """The engine's answer of at most `ttl` ago ("SERVING", "NOT_SERVING" ...), or why there is none
        ("UNAVAILABLE", "DEADLINE_EXCEEDED" ...)."""
        if self._clock() - self._asked < self._ttl:
            return self._status
        with self._lock:  # a probe arriving meanwhile waits here and reads this answer
            if self._clock() - self._asked >= self._ttl:
                self._status = self._check()
                self._asked = self._clock()
            return self._status

    def _check(self) -> str:
        """One Check: the engine's status, or the call's failure; observed as `Engine._call` observes its calls."""
        start = time.perf_counter()
        code = "OK"
        try:
            return self._channel.health(self._timeout, JSON_ENGINE)
        except grpc.RpcError as err:
            status: grpc.StatusCode | None = err.code()
            code = status.name if status is not None else "UNKNOWN"
            return code
        except ValueError as exc:  # grpcio refuses a target it cannot parse
            code = "INVALID_ARGUMENT"
            return f"{code}: {exc}"
        finally:
            metrics.observe_engine_call("HealthCheck", code, time.perf_counter() - start)
