"""The gRPC engine service as a conformance surface (`domino conformance --grpc HOST:PORT`).

Every step is a call to the engine over gRPC (`clients.engine_client`, on the
engine's JSON face: states travel as the JSON dicts the library surface
produces, converted by the engine); refusals come back as the rules' exceptions
(INVALID_ARGUMENT and FAILED_PRECONDITION, mapped by the contract's table), and
anything else the service answers is a `SurfaceError`. The typed face
(`domino.v1.Engine`, states as MatchState messages) computes every call with the
same code, and tests/engine hold it equal to the JSON face on every preset.

Kingdomino scenarios run on the typed face's Kingdomino calls (`NewKingdomino`,
`KingdominoApply` ...): the state the runner passes back is then the engine's own
KingdominoState message, carried unread, and the REST surface covers the JSON face.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from domino.v1 import engine_pb2 as pb
from domino.v1.errors import Refusal, refusal_of

from clients.engine_client import EngineClient, EngineError
from engine_service.rules.errors import IllegalActionError, MalformedError

from .surface import State, SurfaceError

T = TypeVar("T")


class GrpcSurface:
    """Runs every step through a running engine at `address`."""

    name = "grpc"

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self._client = EngineClient(address, timeout=timeout)
        self.kingdomino = GrpcKingdomino(self._client, timeout)

    @staticmethod
    def _call(call: Callable[[], T]) -> T:
        try:
            return call()
        except EngineError as exc:
            raise SurfaceError(f"gRPC engine: {exc}") from exc

    def new_match(self, variant: str, players: int, options: dict[str, Any],
                  setup: dict[str, Any] | None, deal: dict[str, Any] | None) -> State:
        return self._call(lambda: self._client.new_match(
            variant, players, options, setup=setup, deal=deal, no_deal=deal is None)).state

    def start_round(self, state: State, deal: dict[str, Any]) -> State:
        return self._call(lambda: self._client.start_round(state, deal)).state

    def legal(self, state: State) -> tuple[int, list[str]]:
        return self._call(lambda: self._client.legal_actions(state))

    def apply(self, state: State, action: str, seat: int | None = None) -> State:
        return self._call(lambda: self._client.apply(state, action, seat)).state

    def settle(self, state: State, ending: str, hands: list[list[str]],
               last_placer: int | None = None) -> State:
        return self._call(lambda: self._client.settle(state, ending, hands, last_placer)).state

    def timeout(self, state: State, seat: int) -> State:
        return self._call(lambda: self._client.timeout(state, seat)).state

    def close(self) -> None:
        self._client.close()


class GrpcKingdomino:
    """Kingdomino through the typed face's calls; states are KingdominoState messages."""

    def __init__(self, client: EngineClient, timeout: float) -> None:
        self._client = client
        self._timeout = timeout

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self._client.stub, method)(request, timeout=self._timeout)
        except grpc.RpcError as err:
            code, details = err.code(), err.details() or ""
            refusal = refusal_of(code, details)
            if refusal is Refusal.MALFORMED:
                raise MalformedError(details) from None
            if refusal is not None:
                raise IllegalActionError(details) from None
            raise SurfaceError(f"gRPC engine: {code.name}: {details}") from None

    def new_game(self, players: int, options: dict[str, Any], deal: dict[str, Any]) -> Any:
        deals = deal["games"] if isinstance(deal, dict) and "games" in deal else [deal]
        request = pb.NewKingdominoRequest(
            players=players, options={k: str(v).lower() if isinstance(v, bool) else str(v)
                                      for k, v in (options or {}).items()},
            deal=[pb.KingdominoDeal(tiles=d["tiles"], kings=d["kings"]) for d in deals])
        return self._call("NewKingdomino", request).state

    def legal(self, state: Any) -> tuple[int | None, list[str]]:
        answer = self._call("KingdominoLegalActions", pb.KingdominoStateRequest(state=state))
        return (answer.player if answer.HasField("player") else None), list(answer.actions)

    def apply(self, state: Any, action: str) -> Any:
        return self._call("KingdominoApply", pb.KingdominoApplyRequest(state=state, action=action)).state

    def summary(self, state: Any) -> dict[str, Any]:
        view = self._call("KingdominoView", pb.KingdominoViewRequest(state=state, player=0))
        return {"to_move": view.to_move if view.HasField("to_move") else None, "scores": list(view.scores),
                "largest_region": list(view.largest_region), "crowns": list(view.crowns),
                "game_over": view.game_over, "winners": list(view.winners)}
