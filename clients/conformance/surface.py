"""The one interface the scenario runner drives: library, gRPC engine or REST gateway.

Every method takes and returns the match state as the canonical JSON dict of
`engine_service.rules.Match.to_dict()` (the same JSON the REST gateway's
transparent mode carries). A refused action or deal raises the rules' own
exceptions, whatever the surface: `IllegalActionError` (illegal here; a refused
misdeal is `MisdealError`, a subclass) or `MalformedError` (bad input). Anything
else (a service down, a protocol error) raises `SurfaceError`.
"""
from __future__ import annotations

from typing import Any, Protocol

State = dict[str, Any]


class SurfaceError(RuntimeError):
    """The surface itself failed (not a rules answer)."""


class Surface(Protocol):
    name: str

    def new_match(
        self,
        variant: str,
        players: int,
        options: dict[str, Any],
        setup: dict[str, Any] | None,
        deal: dict[str, Any] | None,
    ) -> State:
        """A new match; `deal` None means: do not deal yet (setup/settle-only scenarios)."""

    def start_round(self, state: State, deal: dict[str, Any]) -> State:
        """Deal the next round explicitly (`deal` as in FORMAT.md's deal step)."""

    def legal(self, state: State) -> tuple[int, list[str]]:
        """(seat to move, its legal actions)."""

    def apply(self, state: State, action: str, seat: int | None = None) -> State:
        ...

    def settle(self, state: State, ending: str, hands: list[list[str]],
               last_placer: int | None = None) -> State:
        """Score a round from the hands left; `last_placer` (the fisherman) is an extension
        of FORMAT.md's settle step that Bykovo's blocked rounds need."""

    def timeout(self, state: State, seat: int) -> State:
        ...

    def close(self) -> None:
        ...
