"""How much thinking one call may do: playouts and, optionally, wall-clock milliseconds.

A budget counts *iterations* (playouts for the matching games, rollouts for
Kingdomino) so that a given seed always gives the same decision on any machine.
A millisecond cap (`ms`) may be added for callers that must answer in time; a
call stopped by it is no longer reproducible, which is why no default sets one.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

#: The iteration count of a time-only budget: more than any call does in a second.
TIME_ONLY_ITERATIONS = 10**7


@dataclass(frozen=True, slots=True)
class Budget:
    """Playouts per decision (`iterations`) and an optional wall-clock cap (`ms`)."""

    iterations: int
    ms: float | None = None

    @classmethod
    def time(cls, ms: float) -> Budget:
        """As many iterations as fit in `ms` milliseconds (not reproducible: the machine decides)."""
        return cls(iterations=TIME_ONLY_ITERATIONS, ms=ms)

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise ValueError("a budget needs at least one iteration")
        if self.ms is not None and self.ms <= 0:
            raise ValueError("budget ms must be positive")


#: Matching games: playouts per decision, spread over the legal moves (docs/bots.md has the times).
MATCHING_DEFAULT = Budget(iterations=200)
#: Kingdomino, 2 players: full games' worth of rollouts per decision, spread over the best candidate
#: actions (bots/kingdomino/search.py). With more players (longer games) see `kingdomino_default`.
KINGDOMINO_DEFAULT = Budget(iterations=300)


def kingdomino_default(players: int) -> Budget:
    """Kingdomino's default: 300 with 2 players, 270 with 3 or 4 (their rollouts are longer); both keep
    the CPU p99 per move well under 1 s (docs/bots.md)."""
    return KINGDOMINO_DEFAULT if players <= 2 else Budget(iterations=270)

BudgetLike = Budget | int | None


def resolve(budget: BudgetLike, default: Budget) -> Budget:
    """A `Budget` from what a caller passed: None (the default), an int (iterations) or a Budget."""
    if budget is None:
        return default
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValueError(f"budget must be a Budget or a number of iterations, not {budget!r}")
    return Budget(iterations=budget)


class Clock:
    """Says when a budget's time cap has run out (never, without one)."""

    __slots__ = ("deadline",)

    def __init__(self, budget: Budget) -> None:
        self.deadline = None if budget.ms is None else time.perf_counter() + budget.ms / 1000.0

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline
