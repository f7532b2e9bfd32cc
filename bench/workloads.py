"""The games the engine benchmark plays: ours through the public rules API, and the peers.

Every workload plays random full rounds (one deal to the end of the round) with
its own seeded `random.Random` choosing among the legal actions, so every engine
pays the same for the choice. A workload is a class with `play(deadline, games)`
that plays whole games until the clock passes `deadline` (or `games` are done)
and returns ``(games, decisions)``; the time it took is measured by the caller.

- ``ours``: `Match.new(variant, players, seed=...)`, then `legal_actions()` and
  `apply()` until `legal_actions()` is empty (the round is over); Kingdomino,
  which has its own class of the same shape: `Kingdomino.new(players, seed=...)`
  to the end of the game.
- ``dominoes``: the PyPI `dominoes` package, 4 players: `Game.new()`, then
  `make_move(*choice(game.valid_moves))` until `game.result` is set. Its deal
  shuffles with the global `random`, which the workload seeds.
- ``openspiel``: OpenSpiel's `python_block_dominoes`, 2 players:
  `new_initial_state()`, chance outcomes drawn uniformly for the deal, then
  `apply_action(choice(state.legal_actions()))` until `is_terminal()`.
"""
from __future__ import annotations

import random
import time
from typing import Any, Protocol

MAX_SEED = (1 << 63) - 1


class Workload(Protocol):
    def play(self, deadline: float, games: int | None) -> tuple[int, int]: ...


class Ours:
    """Random rounds of one preset through `engine_service.rules.Match`."""

    def __init__(self, variant: str, players: int, seed: int) -> None:
        self.new = new_game_function(variant)
        self.variant = variant
        self.players = players
        self.rng = random.Random(seed)

    def play(self, deadline: float, games: int | None) -> tuple[int, int]:
        new = self.new
        variant, players = self.variant, self.players
        rng = self.rng
        choice = rng.choice
        getrandbits = rng.getrandbits
        clock = time.perf_counter
        done = decisions = 0
        while True:
            match, _ = new(variant, players, seed=getrandbits(63))
            legal = match.legal_actions
            apply = match.apply
            actions = legal()
            while actions:
                apply(choice(actions))
                decisions += 1
                actions = legal()
            done += 1
            if games is not None:
                if done >= games:
                    break
            elif clock() >= deadline:
                break
        return done, decisions


def new_game_function(variant: str) -> Any:
    """`Match.new`, or for a game with its own class (Kingdomino) a function of the same shape."""
    if variant == "kingdomino":
        from engine_service.rules.kingdomino import Kingdomino

        return lambda _variant, players, seed: Kingdomino.new(players, seed=seed)
    from engine_service.rules import Match

    return Match.new


def state_class(variant: str) -> Any:
    """The class whose `from_dict` decodes a state of `variant`."""
    if variant == "kingdomino":
        from engine_service.rules.kingdomino import Kingdomino

        return Kingdomino
    from engine_service.rules import Match

    return Match


class Dominoes:
    """Random 4-player games of the PyPI `dominoes` package with its own API."""

    def __init__(self, seed: int) -> None:
        import dominoes  # type: ignore[import-untyped,unused-ignore]

        self.Game = dominoes.Game
        self.rng = random.Random(seed)
        random.seed(seed)  # its deal uses the module-level generator

    def play(self, deadline: float, games: int | None) -> tuple[int, int]:
        new = self.Game.new
        choice = self.rng.choice
        clock = time.perf_counter
        done = decisions = 0
        while True:
            game = new()
            while game.result is None:
                game.make_move(*choice(game.valid_moves))
                decisions += 1
            done += 1
            if games is not None:
                if done >= games:
                    break
            elif clock() >= deadline:
                break
        return done, decisions


class OpenSpielBlock:
    """Random 2-player games of OpenSpiel's `python_block_dominoes` (legal_actions/apply_action)."""

    def __init__(self, seed: int) -> None:
        import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from open_spiel.python.games import (  # type: ignore[import-untyped,unused-ignore]  # noqa: F401
            block_dominoes,  # registers the game
        )

        self.game = pyspiel.load_game("python_block_dominoes")
        self.rng = random.Random(seed)

    def play(self, deadline: float, games: int | None) -> tuple[int, int]:
        new = self.game.new_initial_state
        rng = self.rng
        choice = rng.choice
        clock = time.perf_counter
        done = decisions = 0
        while True:
            state = new()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(choice(outcomes)[0])
                else:
                    state.apply_action(choice(state.legal_actions()))
                    decisions += 1
            done += 1
            if games is not None:
                if done >= games:
                    break
            elif clock() >= deadline:
                break
        return done, decisions


def make(spec: dict[str, Any]) -> Workload:
    """A workload from its description: {"engine": "ours"|"dominoes"|"openspiel", ...}."""
    seed = int(spec.get("seed", 1))
    engine = spec["engine"]
    if engine == "ours":
        return Ours(spec["variant"], int(spec["players"]), seed)
    if engine == "dominoes":
        return Dominoes(seed)
    if engine == "openspiel":
        return OpenSpielBlock(seed)
    raise ValueError(f"unknown engine {engine!r}")


def available(engine: str) -> str | None:
    """None when the engine can be loaded here, else why not."""
    try:
        if engine == "dominoes":
            import dominoes  # noqa: F401
        elif engine == "openspiel":
            import pyspiel  # noqa: F401
            from open_spiel.python.games import block_dominoes  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken native module
        return f"{engine} cannot be imported ({type(exc).__name__}: {exc}); install the `bench` extra"
    return None
