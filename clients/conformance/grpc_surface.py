"""The gRPC engine service as a conformance surface (`domino conformance --grpc HOST:PORT`).

Every step is a call to the engine over gRPC (`clients.engine_client`, on the
engine's JSON face: states travel as the JSON dicts the library surface
produces, converted by the engine); refusals come back as the rules' exceptions
(INVALID_ARGUMENT and FAILED_PRECONDITION, mapped by the contract's table), and
anything else the service answers is a `SurfaceError`. The typed face
(`domino.v1.Engine`, states as MatchState messages) computes every call with the
same code, and tests/engine hold it equal to the JSON face on every preset.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from clients.engine_client import EngineClient, EngineError

from .surface import State, SurfaceError

T = TypeVar("T")


class GrpcSurface:
    """Runs every step through a running engine at `address`."""

    name = "grpc"

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self._client = EngineClient(address, timeout=timeout)

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
