"""The rules library as a conformance surface (no service in between)."""
from __future__ import annotations

from typing import Any

from engine_service.rules import IllegalActionError, Kingdomino, Match

from .surface import State


class LibrarySurface:
    """Runs every step through `engine_service.rules.Match`, decoding and encoding the
    state each time as a service would, and checking that a refused action leaves the
    match exactly as it was."""

    name = "library"

    def __init__(self) -> None:
        #: Kingdomino scenarios (FORMAT.md "Kingdomino scenarios") run here; surfaces
        #: without this attribute do not serve Kingdomino.
        self.kingdomino = KingdominoLibrary()

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


class KingdominoLibrary:
    """Kingdomino through `engine_service.rules.Kingdomino` (RULES.md KD), state in, state out,
    with the same check as for the matching games: a refused action changes nothing."""

    def new_game(self, players: int, options: dict[str, Any], deal: dict[str, Any]) -> State:
        game, _ = Kingdomino.new(players, options=options, deal=deal)
        return game.to_dict()

    def legal(self, state: State) -> tuple[int | None, list[str]]:
        game = Kingdomino.from_dict(state)
        return game.to_move, game.legal_actions()

    def apply(self, state: State, action: str) -> State:
        game = Kingdomino.from_dict(state)
        before = game.to_dict()
        try:
            game.apply(action)
        except Exception:
            if game.to_dict() != before:
                raise IllegalActionError("BUG: a refused action changed the game") from None
            raise
        return game.to_dict()

    def summary(self, state: State) -> dict[str, Any]:
        """What a scenario's expect step may check, besides the legal actions."""
        game = Kingdomino.from_dict(state)
        return {
            "to_move": game.to_move,
            "scores": game.scores(),
            "largest_region": game.largest_region(),
            "crowns": game.crowns(),
            "game_over": game.game_over,
            "winners": game.winners(),
        }
