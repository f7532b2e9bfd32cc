"""What the engine tells operators: Prometheus metrics and one JSON log line per call.

Call metrics use the names of go-grpc-prometheus so stock dashboards work:

- ``grpc_server_handled_total{grpc_service, grpc_method, grpc_code}``: calls by method and status.
- ``grpc_server_handling_seconds{grpc_service, grpc_method}``: latency histogram.
- ``domino_engine_in_flight_calls``: calls being served now.

Domain counters (``variant`` is a preset name, or ``other`` for names the
engine does not know, so hostile input cannot grow the label set):

- ``domino_engine_actions_applied_total{variant, kind}``: kind play, draw or pass.
- ``domino_engine_illegal_actions_total{variant}``: actions refused as illegal.
- ``domino_engine_rounds_finished_total{variant, ending}``: ending out, fish, blocked, sortir.
- ``domino_engine_matches_finished_total{variant}``.
- ``domino_engine_state_decode_fallbacks_total{reason}``: states that came in another valid
  encoding than the canonical one (a field repeated, a list not packed, an unknown field,
  a wrong wire type) and were rewritten by protobuf before being read
  (`engine_service.edge.wire`); `reason` is what the fast reader stopped at. States this engine
  writes never take it, so a rising count means a peer writes states another way.

Calls refused by grpcio before they reach a handler (RESOURCE_EXHAUSTED for an
oversized message, UNIMPLEMENTED for an unknown method) are not counted here.
Streaming calls (health Watch, reflection) are passed through unmeasured.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import grpc
import orjson
from prometheus_client import Counter, Gauge, Histogram

from engine_service.edge.codec import ENDINGS
from engine_service.rules import variants
from engine_service.status import Behavior, Handler, UnaryInterceptor

CALLS = Counter(
    "grpc_server_handled_total", "gRPC calls completed, by method and status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
LATENCY = Histogram(
    "grpc_server_handling_seconds", "Time to serve a gRPC call, in seconds.",
    ["grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
IN_FLIGHT = Gauge("domino_engine_in_flight_calls", "gRPC calls being served now.")
ACTIONS = Counter(
    "domino_engine_actions_applied_total", "Actions applied, by variant and kind (play, draw, pass).",
    ["variant", "kind"],
)
ILLEGAL = Counter(
    "domino_engine_illegal_actions_total", "Actions refused as illegal, by variant.", ["variant"],
)
ROUNDS = Counter(
    "domino_engine_rounds_finished_total", "Rounds finished (played out or settled), by variant and ending.",
    ["variant", "ending"],
)
MATCHES = Counter(
    "domino_engine_matches_finished_total", "Matches finished, by variant.", ["variant"],
)

STATE_FALLBACKS = Counter(
    "domino_engine_state_decode_fallbacks_total",
    "States read only after protobuf rewrote them into the canonical encoding, by what the reader stopped at.",
    ["reason"],
)

_KNOWN_VARIANTS: frozenset[str] = frozenset(v["name"] for v in variants())

call_log = logging.getLogger("engine_service.calls")


def variant_label(variant: str) -> str:
    """A bounded label value: the preset name, or "other"."""
    return variant if variant in _KNOWN_VARIANTS else "other"


def action_kind(action: str) -> str:
    return action if action in ("draw", "pass") else "play"


#: (variant label, kind) -> ACTIONS' child: `labels()` checks and locks on every call, and the label
#: set is bounded (the presets and "other", times play/draw/pass).
_ACTION_CHILDREN: dict[tuple[str, str], Any] = {}


def _action_child(label: str, kind: str) -> Any:
    child = _ACTION_CHILDREN.get((label, kind))
    if child is None:
        child = _ACTION_CHILDREN[(label, kind)] = ACTIONS.labels(label, kind)
    return child


def record_actions(variant: str, actions: Iterable[str]) -> None:
    """Count actions that were applied."""
    label = variant_label(variant)
    for action in actions:
        _action_child(label, action_kind(action)).inc()


def record_illegal(variant: str) -> None:
    ILLEGAL.labels(variant_label(variant)).inc()


def record_state_fallback(reason: str) -> None:
    """A state was rewritten into the canonical encoding before it could be read (`reason`: fixed phrases)."""
    STATE_FALLBACKS.labels(reason).inc()


def record_events(variant: str, events: Iterable[dict[str, Any]]) -> None:
    """Count the rounds and matches that these events finished."""
    label = variant_label(variant)
    for event in events:
        kind = event.get("type")
        if kind == "round_ended":
            ending = event["record"].get("ending")
            ROUNDS.labels(label, ending if ending in ENDINGS else "other").inc()
        elif kind == "match_ended" or kind == "dynasty_over" or (kind == "game_over" and "game" not in event):
            MATCHES.labels(label).inc()  # Kingdomino: a game, or a dynasty once its last game ends


# ---------------------------------------------------------------- per-call observation


class Observed:
    """One method's record of its calls: each counted by its status, timed, and (`log_calls`) logged as a
    JSON line. Its metric children are made once, by status as they come: `labels()` looks a child up
    under a lock on every call."""

    __slots__ = ("_full", "_handled", "_latency", "_log_calls", "_name", "_service")

    def __init__(self, service: str, name: str, log_calls: bool) -> None:
        self._service, self._name, self._full = service, name, f"/{service}/{name}"
        self._latency = LATENCY.labels(service, name)
        self._handled: dict[str, Any] = {}
        self._log_calls = log_calls

    def record(self, code: str, elapsed: float, peer: str) -> None:
        """A call of the method ended with status `code` after `elapsed` seconds; `peer` called it."""
        counter = self._handled.get(code)
        if counter is None:
            counter = self._handled[code] = CALLS.labels(self._service, self._name, code)
        counter.inc()
        self._latency.observe(elapsed)
        if self._log_calls and call_log.isEnabledFor(logging.INFO):
            call_log.info("call", extra={"fields": {
                "method": self._full, "code": code, "duration_ms": round(elapsed * 1000, 3), "peer": peer,
            }})


def _observe(service: str, name: str, behavior: Behavior, log_calls: bool) -> Behavior:
    observed_calls = Observed(service, name, log_calls)

    def observed(request: Any, context: grpc.ServicerContext) -> Any:
        start = time.perf_counter()
        IN_FLIGHT.inc()
        failed = False
        try:
            return behavior(request, context)
        except BaseException:
            failed = True
            raise
        finally:
            elapsed = time.perf_counter() - start
            IN_FLIGHT.dec()
            status = context.code()  # type: ignore[attr-defined]  # grpcio >= 1.38, not in the stubs
            observed_calls.record(status.name if status is not None else ("UNKNOWN" if failed else "OK"), elapsed,
                                  context.peer())

    return observed


class ObservingInterceptor(UnaryInterceptor):
    """Counts, times and logs every unary call; the outermost interceptor."""

    def __init__(self, log_calls: bool = True) -> None:
        super().__init__()
        self._log_calls = log_calls

    def wrap(self, method: str, handler: Handler, behavior: Behavior) -> Handler:
        service, _, name = method.lstrip("/").rpartition("/")
        wrapped: Handler = grpc.unary_unary_rpc_method_handler(
            _observe(service, name, behavior, self._log_calls),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        return wrapped


# ---------------------------------------------------------------- structured logs


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, any `extra={"fields": {...}}`, exc."""

    def __init__(self) -> None:
        super().__init__()
        self._second: tuple[int, str] = (-1, "")  # one tuple, read and replaced whole by any thread

    def _ts(self, created: float) -> str:
        """`created` as ISO 8601 to the millisecond in UTC (`2026-12-07T10:00:00.123+00:00`): the seconds' part
        made once a second, not per line (a datetime per line was a third of the per-call line's cost)."""
        fraction, whole = math.modf(created)
        micro = round(fraction * 1e6)  # as `datetime.fromtimestamp` rounds, carrying into the next second
        if micro >= 1_000_000:
            whole, micro = whole + 1, micro - 1_000_000
        second, stamp = self._second
        if second != int(whole):
            second = int(whole)
            stamp = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = (second, stamp)
        return f"{stamp}.{micro // 1000:03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self._ts(record.created),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()
