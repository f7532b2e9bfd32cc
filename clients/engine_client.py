"""A small typed Python client for the domino engine over gRPC.

States, deals, events and views are the JSON of docs/rest.md (plain dicts a
caller can store as JSON and pass back): the client calls the engine's JSON
face (`domino.v1.JsonEngine`), so the engine does every conversion and this
client none. Every call has a deadline; calls answered UNAVAILABLE (engine
restarting, pod replaced) are retried by gRPC itself with backoff, which is safe
because every engine call is a pure function of its request. The channel
(`domino.v1.channel.EngineChannel`, shared with the REST gateway) is created on
first use in each process, so a client built before a fork still works; its
typed stub is `EngineClient.stub`, for calls with protobuf messages.

Refusals come back as the rules' own exceptions, like the library raises them
(the contract's table, `domino.v1.errors`):

- INVALID_ARGUMENT -> `MalformedError`
- FAILED_PRECONDITION -> `IllegalActionError` (`MisdealError` when the details start "misdeal:")
- any other status -> `EngineError` (with `.code` and `.details`)

>>> with EngineClient("127.0.0.1:50051") as engine:          # doctest: +SKIP
...     answer = engine.new_match("kozel", 4, seed=42)
...     seat, actions = engine.legal_actions(answer.state)
...     answer = engine.apply(answer.state, actions[0])
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Self

import grpc
import orjson
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc as pb_grpc
from domino.v1.channel import DEFAULT_TIMEOUT, ENGINE, EngineChannel
from domino.v1.errors import Refusal, refusal_of

from engine_service.rules.errors import IllegalActionError, MalformedError, MisdealError, RulesError

__all__ = ["Answer", "EngineClient", "EngineError", "ReplayResult", "Standings"]

Json = dict[str, Any]

_REFUSALS: dict[Refusal, type[RulesError]] = {
    Refusal.MALFORMED: MalformedError, Refusal.ILLEGAL: IllegalActionError, Refusal.MISDEAL: MisdealError,
}


class EngineError(RuntimeError):
    """The engine could not answer (unavailable, deadline, internal error ...), not a rules refusal."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(frozen=True, slots=True)
class Answer:
    """The new state and what happened."""

    state: Json
    events: list[Json] = field(default_factory=list)


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


def _raise(err: grpc.RpcError) -> NoReturn:
    code: grpc.StatusCode = err.code()
    details: str = err.details() or ""
    refusal = refusal_of(code, details)
    if refusal is not None:
        raise _REFUSALS[refusal](details) from None
    raise EngineError(code, details) from None


class EngineClient:
    """A connection to one engine target ("host:port", or "dns:///name:port" for every replica)."""

    def __init__(self, target: str, *, timeout: float = DEFAULT_TIMEOUT, max_attempts: int = 4,
                 max_message_bytes: int = 4 * 1024 * 1024) -> None:
        self.target = target
        self._timeout = timeout
        self._channel = EngineChannel(target, max_attempts=max_attempts, max_message_bytes=max_message_bytes)

    # ------------------------------------------------------------ connection

    @property
    def stub(self) -> pb_grpc.EngineStub:
        """The typed service's stub (protobuf messages in and out), on this process's channel."""
        return self._channel.engine

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self, service: str = ENGINE) -> str:
        """The health status name of `service` ("SERVING", "NOT_SERVING", ...)."""
        try:
            return self._channel.health(self._timeout, service)
        except grpc.RpcError as err:
            _raise(err)

    def _call(self, method: str, args: Json) -> Json:
        """`method` of the JSON face with `args`, within the deadline: its answer."""
        try:
            encoded = orjson.dumps(args)
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise MalformedError(f"{method}: {exc}") from None
        try:
            reply: pb.JsonAnswer = getattr(self._channel.json, method)(pb.JsonCall(args=encoded),
                                                                        timeout=self._timeout)
        except grpc.RpcError as err:
            _raise(err)
        answer: Json = orjson.loads(reply.answer)
        return answer

    def _answer(self, method: str, args: Json) -> Answer:
        answer = self._call(method, args)
        return Answer(answer["state"], answer["events"])

    # ------------------------------------------------------------ calls

    def list_variants(self) -> list[Json]:
        """Presets with their options (type, allowed values, typed default) and player counts."""
        variants: list[Json] = self._call("ListVariants", {})["variants"]
        return variants

    def new_match(self, variant: str, players: int, options: dict[str, Any] | None = None, *,
                  seed: int | None = None, deal: Json | None = None, setup: Json | None = None,
                  no_deal: bool = False) -> Answer:
        """A new match, its first round dealt from `deal` or `seed` (a random seed if neither) unless `no_deal`."""
        args: Json = {"variant": variant, "players": players, "no_deal": no_deal}
        for key, value in (("options", options), ("seed", seed), ("deal", deal), ("setup", setup)):
            if value is not None:
                args[key] = value
        return self._answer("NewMatch", args)

    def start_round(self, state: Json, deal: Json | None = None) -> Answer:
        """Deal the next round: explicitly, or from the match seed."""
        return self._answer("StartRound", {"state": state} if deal is None else {"state": state, "deal": deal})

    def legal_actions(self, state: Json) -> tuple[int, list[str]]:
        """(seat to move, its legal action strings)."""
        answer = self._call("LegalActions", {"state": state})
        return answer["seat"], answer["actions"]

    def apply(self, state: Json, action: str, seat: int | None = None) -> Answer:
        """Apply one action of the seat to move (`seat`, if given, must be that seat)."""
        args: Json = {"state": state, "action": action}
        if seat is not None:
            args["seat"] = seat
        return self._answer("Apply", args)

    def replay(self, state: Json, actions: Sequence[str]) -> ReplayResult:
        """Apply `actions` in order, stopping at the first refused one (a refusal is not an exception)."""
        a = self._call("Replay", {"state": state, "actions": list(actions)})
        return ReplayResult(a["state"], a["events"], a["applied"], a["ok"], a["failed_index"], a["reason"],
                            a["error_kind"])

    def settle(self, state: Json, ending: str, hands: Sequence[Sequence[str]],
               last_placer: int | None = None) -> Answer:
        """Score a round played at a physical table from the hands left ("out" or "blocked")."""
        args: Json = {"state": state, "ending": ending, "hands": [list(h) for h in hands]}
        if last_placer is not None:
            args["last_placer"] = last_placer
        return self._answer("Settle", args)

    def view(self, state: Json, seat: int) -> Json:
        """What `seat` may see."""
        view: Json = self._call("View", {"state": state, "seat": seat})["view"]
        return view

    def timeout(self, state: Json, seat: int) -> Answer:
        """Seat `seat` timed out: the match ends by the variant's timeout rule."""
        return self._answer("Timeout", {"state": state, "seat": seat})

    # ------------------------------------------------------------ Bykovo micro-tournament (B)

    def create_tournament(self, participants: Sequence[str], *, seed: int | None = None,
                          rating: Sequence[str] | None = None) -> Answer:
        """A new micro-tournament of 4-7 participants (`rating`: names, best first; a random seed if none)."""
        args: Json = {"participants": list(participants)}
        if seed is not None:
            args["seed"] = seed
        if rating:
            args["rating"] = list(rating)
        return self._answer("CreateTournament", args)

    def record_tournament_round(self, state: Json, points: Sequence[int], winner: int) -> Answer:
        """Record the round the next four played: their points in seat order and the winning seat (0..3)."""
        return self._answer("RecordTournamentRound", {"state": state, "points": list(points), "winner": winner})

    def tournament_standings(self, state: Json) -> Standings:
        """Everyone ranked, who plays next, whether the tournament is over."""
        a = self._call("TournamentStandings", {"state": state})
        return Standings(a["standings"], a["next_players"], a["over"])
