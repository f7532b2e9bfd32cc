"""The rules library as a conformance surface (no service in between)."""
from __future__ import annotations

from typing import Any

from engine_service.rules import IllegalActionError, Match

from .surface import State


class LibrarySurface:
    """Runs every step through `engine_service.rules.Match`, decoding and encoding the
    state each time as a service would, and checking that a refused action leaves the
    match exactly as it was."""

    name = "library"

    def new_match(self, variant: str, players: int, options: dict[str, Any],
                  setup: dict[str, Any] | None, deal: dict[str, Any] | None) -> State:
        match, _ = Match.new(variant, players, options=options, setup=setup, deal=deal,
                             no_deal=deal is None)
        return match.to_dict()

    def start_round(self, state: State, deal: dict[str, Any]) -> State:
        return self._call(state, lambda m: m.start_round(deal))

    def legal(self, state: State) -> tuple[int, list[str]]:
        match = Match.from_dict(state)
        return match.to_move, match.legal_actions()

    def apply(self, state: State, action: str, seat: int | None = None) -> State:
        return self._call(state, lambda m: m.apply(action, seat))

    def settle(self, state: State, ending: str, hands: list[list[str]],
               last_placer: int | None = None) -> State:
        return self._call(state, lambda m: m.settle(ending, hands, last_placer))

    def timeout(self, state: State, seat: int) -> State:
        return self._call(state, lambda m: m.timeout(seat))

    def close(self) -> None:
        pass

    @staticmethod
    def _call(state: State, change: Any) -> State:
        match = Match.from_dict(state)
        before = match.to_dict()
        try:
            change(match)
        except Exception:
            if match.to_dict() != before:
                raise IllegalActionError("BUG: a refused call changed the match") from None
            raise
        return match.to_dict()
