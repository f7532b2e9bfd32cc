"""A small typed Python client for the domino engine (`domino.v1.Engine` over gRPC).

States, deals, events and views are the rules' JSON dicts (see
`engine_service.codec`), so a caller can store a state as JSON and pass it back.
Every call has a deadline; calls answered UNAVAILABLE (engine restarting, pod
replaced) are retried by gRPC itself with backoff, which is safe because every
engine call is a pure function of its request. The channel is created on first
use in each process, so a client built before a fork (gunicorn) still works.

Refusals come back as the rules' own exceptions, like the library raises them:

- INVALID_ARGUMENT -> `MalformedError`
- FAILED_PRECONDITION -> `IllegalActionError` (`MisdealError` when the details start "misdeal:")
- any other status -> `EngineError` (with `.code` and `.details`)

>>> with EngineClient("127.0.0.1:50051") as engine:          # doctest: +SKIP
...     answer = engine.new_match("kozel", 4, seed=42)
...     seat, actions = engine.legal_actions(answer.state)
...     answer = engine.apply(answer.state, actions[0])
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Self

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engine_service import codec, tournament_codec
from engine_service.rules import IllegalActionError, MalformedError, MisdealError
from engine_service.status import MISDEAL_PREFIX

__all__ = ["Answer", "EngineClient", "EngineError", "ReplayResult", "Standings", "service_config"]

Json = dict[str, Any]
DEFAULT_TIMEOUT = 5.0
SERVICE = "domino.v1.Engine"


class EngineError(RuntimeError):
    """The engine could not answer (unavailable, deadline, internal error ...), not a rules refusal."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(frozen=True, slots=True)
class Answer:
    """The new state and what happened (the engine's MatchResponse); `view`: Apply's `view_as` seat's view."""

    state: Json
    events: list[Json] = field(default_factory=list)
    view: Json | None = None


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """How far a replay got: `state` is after the last applied action (before the refused one)."""

    state: Json
    events: list[Json]
    applied: int
    ok: bool
    failed_index: int
    reason: str
    error_kind: str   # "malformed", "illegal", or "" when ok


@dataclass(frozen=True, slots=True)
class Standings:
    """A tournament's standings (best first), the next round's four players, whether it is over."""

    standings: list[Json]
    next_players: list[int]
    over: bool


def service_config(max_attempts: int = 4, initial_backoff: float = 0.1, max_backoff: float = 2.0) -> str:
    """gRPC service config: retry on UNAVAILABLE, round-robin over every address the name resolves to."""
    return json.dumps({
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [{
            "name": [{"service": SERVICE}],
            "retryPolicy": {
                "maxAttempts": max_attempts,
                "initialBackoff": f"{initial_backoff}s",
                "maxBackoff": f"{max_backoff}s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }],
    })


def _raise(err: grpc.RpcError) -> NoReturn:
    code: grpc.StatusCode = err.code()
    details: str = err.details() or ""
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        raise MalformedError(details) from None
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        if details.startswith(MISDEAL_PREFIX):
            raise MisdealError(details) from None
        raise IllegalActionError(details) from None
    raise EngineError(code, details) from None


class EngineClient:
    """A connection to one engine target ("host:port", or "dns:///name:port" for every replica)."""

    def __init__(self, target: str, *, timeout: float = DEFAULT_TIMEOUT, max_attempts: int = 4,
                 max_message_bytes: int = 4 * 1024 * 1024) -> None:
        self.target = target
        self._timeout = timeout
        self._options = [
            ("grpc.enable_retries", 1),
            ("grpc.service_config", service_config(max_attempts)),
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
        self._lock = threading.Lock()
        self._pid = -1
        self._channel: grpc.Channel | None = None
        self._stub: pb_grpc.EngineStub | None = None
        self._health: health_pb2_grpc.HealthStub | None = None

    # ------------------------------------------------------------ connection

    @property
    def stub(self) -> pb_grpc.EngineStub:
        """The generated stub (protobuf in, protobuf out), on this process's channel."""
        if self._stub is None or self._pid != os.getpid():
            with self._lock:
                if self._stub is None or self._pid != os.getpid():
                    self._channel = grpc.insecure_channel(self.target, options=self._options)
                    self._health = health_pb2_grpc.HealthStub(self._channel)
                    self._stub = pb_grpc.EngineStub(self._channel)
                    self._pid = os.getpid()
        return self._stub

    def close(self) -> None:
        with self._lock:
            if self._channel is not None and self._pid == os.getpid():
                self._channel.close()
            self._channel = None
            self._stub = None
            self._health = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, build: Callable[[], Any]) -> Any:
        """Build the request (bad arguments -> MalformedError), call `method` with the deadline."""
        try:
            request = build()
        except MalformedError:
            raise
        except (ValueError, TypeError) as exc:  # protobuf refusing a value (range, type)
            raise MalformedError(f"{method} request: {exc}") from None
        try:
            return getattr(self.stub, method)(request, timeout=self._timeout)
        except grpc.RpcError as err:
            _raise(err)

    def health(self, service: str = SERVICE) -> str:
        """The health status name of `service` ("SERVING", "NOT_SERVING", ...)."""
        self.stub  # noqa: B018 - creates this process's channel and health stub
        assert self._health is not None
        try:
            check = self._health.Check  # type: ignore[attr-defined]  # set in the stub's __init__
            reply = check(health_pb2.HealthCheckRequest(service=service), timeout=self._timeout)
        except grpc.RpcError as err:
            _raise(err)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))

    # ------------------------------------------------------------ calls

    @staticmethod
    def _answer(reply: pb.MatchResponse) -> Answer:
        return Answer(codec.state_from_proto(reply.state), codec.events_from_proto(reply.events))

    def list_variants(self) -> list[Json]:
        """Presets with their options, allowed values, defaults and player counts."""
        return codec.variants_from_proto(self._call("ListVariants", pb.ListVariantsRequest))

    def new_match(self, variant: str, players: int, options: dict[str, Any] | None = None, *,
                  seed: int | None = None, deal: Json | None = None, setup: Json | None = None,
                  no_deal: bool = False) -> Answer:
        """A new match, its first round dealt from `deal` or `seed` (a random seed if neither) unless `no_deal`."""

        def build() -> pb.NewMatchRequest:
            request = pb.NewMatchRequest(variant=variant, players=codec.uint32(players, "players"),
                                         no_deal=no_deal, options=codec.options_to_proto(options))
            if seed is not None:
                request.seed = codec.uint64(seed, "seed")
            if deal is not None:
                request.deal.CopyFrom(codec.deal_to_proto(deal))
            codec.setup_to_proto(setup, request)
            return request

        return self._answer(self._call("NewMatch", build))

    def start_round(self, state: Json, deal: Json | None = None) -> Answer:
        """Deal the next round: explicitly, or from the match seed."""

        def build() -> pb.StartRoundRequest:
            request = pb.StartRoundRequest(state=codec.state_to_proto(state))
            if deal is not None:
                request.deal.CopyFrom(codec.deal_to_proto(deal))
            return request

        return self._answer(self._call("StartRound", build))

    def legal_actions(self, state: Json) -> tuple[int, list[str]]:
        """(seat to move, its legal action strings)."""
        reply = self._call("LegalActions", lambda: pb.StateRequest(state=codec.state_to_proto(state)))
        return reply.seat, list(reply.actions)

    def apply(self, state: Json, action: str, seat: int | None = None, *, view_as: int | None = None) -> Answer:
        """Apply one action of the seat to move (`seat`, if given, must be that seat).

        With `view_as`, the answer's `view` is that seat's view of the new state (what `view` would
        answer for it), in the same call.
        """

        def build() -> pb.ApplyRequest:
            request = pb.ApplyRequest(state=codec.state_to_proto(state), action=action)
            if seat is not None:
                request.seat = codec.uint32(seat, "seat")
            if view_as is not None:
                request.view_as = codec.uint32(view_as, "view_as")
            return request

        reply = self._call("Apply", build)
        answer = self._answer(reply)
        if view_as is None:
            return answer
        return Answer(answer.state, answer.events, codec.view_from_proto(reply.view))

    def replay(self, state: Json, actions: Sequence[str]) -> ReplayResult:
        """Apply `actions` in order, stopping at the first refused one (a refusal is not an exception)."""
        reply = self._call(
            "Replay", lambda: pb.ReplayRequest(state=codec.state_to_proto(state), actions=actions))
        return ReplayResult(codec.state_from_proto(reply.state), codec.events_from_proto(reply.events),
                            reply.applied, reply.ok, reply.failed_index, reply.reason, reply.error_kind)

    def settle(self, state: Json, ending: str, hands: Sequence[Sequence[str]],
               last_placer: int | None = None) -> Answer:
        """Score a round played at a physical table from the hands left ("out" or "blocked")."""

        def build() -> pb.SettleRequest:
            request = pb.SettleRequest(state=codec.state_to_proto(state),
                                       ending=codec.ending_to_proto(ending, "ending"),
                                       hands=codec.hands_to_proto(list(hands), "hands"))
            if last_placer is not None:
                request.last_placer = codec.uint32(last_placer, "last_placer")
            return request

        return self._answer(self._call("Settle", build))

    def view(self, state: Json, seat: int) -> Json:
        """What `seat` may see."""
        reply = self._call("View", lambda: pb.ViewRequest(state=codec.state_to_proto(state),
                                                          seat=codec.uint32(seat, "seat")))
        return codec.view_from_proto(reply)

    def timeout(self, state: Json, seat: int) -> Answer:
        """Seat `seat` timed out: the match ends by the variant's timeout rule."""
        return self._answer(self._call(
            "Timeout", lambda: pb.TimeoutRequest(state=codec.state_to_proto(state),
                                                 seat=codec.uint32(seat, "seat"))))

    # ------------------------------------------------------------ Bykovo micro-tournament (B)

    @staticmethod
    def _tournament_answer(reply: pb.TournamentResponse) -> Answer:
        return Answer(tournament_codec.tournament_from_proto(reply.state),
                      tournament_codec.events_from_proto(reply.events))

    def create_tournament(self, participants: Sequence[str], *, seed: int | None = None,
                          rating: Sequence[str] | None = None) -> Answer:
        """A new micro-tournament of 4-7 participants (`rating`: names, best first; a random seed if none)."""

        def build() -> pb.CreateTournamentRequest:
            request = pb.CreateTournamentRequest(participants=list(participants), rating=list(rating or ()))
            if seed is not None:
                request.seed = codec.uint64(seed, "seed")
            return request

        return self._tournament_answer(self._call("CreateTournament", build))

    def record_tournament_round(self, state: Json, points: Sequence[int], winner: int) -> Answer:
        """Record the round the next four played: their points in seat order and the winning seat (0..3)."""

        def build() -> pb.RecordTournamentRoundRequest:
            return pb.RecordTournamentRoundRequest(state=tournament_codec.tournament_to_proto(state),
                                                   points=list(points), winner=codec.uint32(winner, "winner"))

        return self._tournament_answer(self._call("RecordTournamentRound", build))

    def tournament_standings(self, state: Json) -> Standings:
        """Everyone ranked, who plays next, whether the tournament is over."""
        reply = self._call("TournamentStandings",
                           lambda: pb.TournamentStateRequest(state=tournament_codec.tournament_to_proto(state)))
        return Standings(tournament_codec.standings_from_proto(reply.standings), list(reply.next_players),
                         reply.over)
