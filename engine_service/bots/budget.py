"""How much thinking one call may do: playouts and, optionally, wall-clock milliseconds.

A budget counts *iterations* (playouts for the matching games, rollouts for
Kingdomino) so that a given seed always gives the same decision on any machine.
A millisecond cap (`ms`) may be added for callers that must answer in time; a
call stopped by it is no longer reproducible, which is why no default sets one.
A `Deadline` (`until`) is the engine's own stop: when the call that asked for the
decision runs out of time or is cancelled, the search stops at its next
iteration, and the engine throws the decision away (`engine_service.admission`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

#: The iteration count of a time-only budget: more than any call does in a second.
TIME_ONLY_ITERATIONS = 10**7


class Deadline:
    """When the work of one call must stop: a time on `time.monotonic`'s clock (the system's, so a
    worker process reads it as its parent does), or sooner once `cancel` is called (from another
    thread: the call was cancelled, its caller gone)."""

    __slots__ = ("at", "cancelled")

    def __init__(self, at: float) -> None:
        self.at = at
        self.cancelled = False

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def cancel(self) -> None:
        self.cancelled = True

    def remaining(self) -> float:
        """Seconds left (0 once cancelled or past)."""
        return 0.0 if self.cancelled else max(0.0, self.at - time.monotonic())

    def passed(self) -> bool:
        return self.cancelled or time.monotonic() >= self.at


@dataclass(frozen=True, slots=True)
class Budget:
    """Playouts per decision (`iterations`), an optional wall-clock cap (`ms`) and the deadline of
    the call it serves (`until`: the search stops there; see `Deadline`)."""

    iterations: int
    ms: float | None = None
    until: Deadline | None = None

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


def default_budget(variant: object, players: int) -> Budget:
    """The default budget of a decision in `variant` with `players` (`kingdomino_default` for
    Kingdomino, `MATCHING_DEFAULT` for every matching game)."""
    return kingdomino_default(players) if variant == "kingdomino" else MATCHING_DEFAULT

BudgetLike = Budget | int | None


def resolve(budget: BudgetLike, default: Budget, until: Deadline | None = None) -> Budget:
    """A `Budget` from what a caller passed: None (the default), an int (iterations) or a Budget;
    with `until`, that deadline too."""
    if budget is None:
        chosen = default
    elif isinstance(budget, Budget):
        chosen = budget
    elif isinstance(budget, bool) or not isinstance(budget, int):
        raise ValueError(f"budget must be a Budget or a number of iterations, not {budget!r}")
    else:
        chosen = Budget(iterations=budget)
    return chosen if until is None else Budget(chosen.iterations, chosen.ms, until)


class Clock:
    """Says when a budget's time cap has run out, or its call's deadline has (never, without either)."""

    __slots__ = ("deadline", "until")

    def __init__(self, budget: Budget) -> None:
        self.deadline = None if budget.ms is None else time.perf_counter() + budget.ms / 1000.0
        self.until = budget.until

    def expired(self) -> bool:
        if self.until is not None and self.until.passed():
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline
