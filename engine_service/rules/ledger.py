"""The match ledger: written and remembered points, the eggs pot, running scores, the score table.

Shared by the families that keep it (RULES.md K and O: written/remembered/pot;
TF, A3, A5, B: running scores). The ledger has one entry per side: a seat, or
a team when playing in teams.
"""
from __future__ import annotations

from typing import Any


class Ledger:
    """One match's points, per side. `scores` is "the score" in every variant, the one place an app
    reads to draw a score table: the running score (TF, A3, A5, B, BL), or in K and O the written
    points, which `score_with_opening` keeps it equal to (remembered points and the pot beside it).

    A plain class with __slots__, not a dataclass: every decoded state builds one, and compiled by
    mypyc a plain class is built natively (a dataclass through its generated Python __init__, 8.6k
    instructions of a 136k state decode)."""

    __slots__ = ("history", "pot", "remembered", "scores", "written")

    def __init__(self, written: list[int], remembered: list[int], pot: int = 0, scores: list[int] | None = None,
                 history: list[dict[str, Any]] | None = None) -> None:
        self.written = written
        self.remembered = remembered
        self.pot = pot
        self.scores: list[int] = [] if scores is None else scores
        self.history: list[dict[str, Any]] = [] if history is None else history

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return (self.written == other.written and self.remembered == other.remembered and self.pot == other.pot
                and self.scores == other.scores and self.history == other.history)

    def __repr__(self) -> str:
        return (f"Ledger(written={self.written!r}, remembered={self.remembered!r}, pot={self.pot!r}, "
                f"scores={self.scores!r}, history={self.history!r})")

    @classmethod
    def empty(cls, sides: int) -> Ledger:
        return cls([0] * sides, [0] * sides, 0, [0] * sides, [])

    def copy(self) -> Ledger:
        return Ledger(self.written.copy(), self.remembered.copy(), self.pot, self.scores.copy(),
                      [dict(r) for r in self.history])

    def opened(self, side: int) -> bool:
        """A side has opened its score once anything is written for it."""
        return self.written[side] > 0

    def score_with_opening(self, side: int, points: int, threshold: int) -> None:
        """K/O opening rule: below the threshold a closed side remembers; at it, it opens.

        An opened side writes every round at once. Opening writes the round's
        points plus everything remembered.
        """
        if self.opened(side):
            self.written[side] += points
        elif points >= threshold:
            self.written[side] += points + self.remembered[side]
            self.remembered[side] = 0
        else:
            self.remembered[side] += points
        self.scores[side] = self.written[side]

    def forget(self, side: int) -> None:
        """The side loses its remembered points (went out before opening, or K fish on one)."""
        self.remembered[side] = 0

    def add_score(self, side: int, points: int) -> None:
        """Running scores (TF, A3, A5, B, BL): `points` more for `side`."""
        self.scores[side] += points

    def feed_pot(self, points: int) -> None:
        """The eggs pot (K, O): a round's points that no single side takes wait for the next one."""
        self.pot += points

    def take_pot(self) -> int:
        """Empty the eggs pot; returns what it held, for the side that wins it (K, O)."""
        pot = self.pot
        self.pot = 0
        return pot

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": self.written.copy(),
            "remembered": self.remembered.copy(),
            "pot": self.pot,
            "scores": self.scores.copy(),
            "history": [dict(r) for r in self.history],
        }


def single_highest(points: list[int]) -> int | None:
    """The side with strictly the most points, or None on a tie."""
    best = max(points)
    leaders = [i for i, p in enumerate(points) if p == best]
    return leaders[0] if len(leaders) == 1 else None
