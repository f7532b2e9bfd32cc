"""The skill rating: openskill's Plackett-Luce model, free-for-all or in teams, with its uncertainty; pure.

Each player has, per variant family, a skill ``mu`` and an uncertainty ``sigma``
(openskill's defaults: 25 and 25/3 for a newcomer). A rated match updates every
player at the table at once from the sides' places (`results.places`): 2-7
sides each for oneself, or 2v2 partners as teams (a team's players move
together). The figure a leaderboard sorts by is the *ordinal*, ``mu - 3 sigma``:
a conservative skill that starts at 0 and grows as matches make the rating both
better and surer, so a newcomer's one lucky win does not top the board.

Why this model, and how it was measured against another: docs/tables.md
("Ratings"), bench/ratings.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
#: How many uncertainties below the skill the ordinal sits.
Z = 3.0


@dataclass(frozen=True, slots=True)
class Skill:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - Z * self.sigma


def newcomer() -> Skill:
    return Skill(MODEL.mu, MODEL.sigma)


def rate(sides: Sequence[Sequence[Skill]], places: Sequence[int]) -> list[list[Skill]]:
    """The skills after a match: `sides` (each a list of players' skills) ranked by `places` (1 best, ties equal).

    At least two sides; a side of one player is a free-for-all seat, of several a team.
    """
    if len(sides) < 2 or len(sides) != len(places) or not all(sides):
        raise ValueError("a rated match has at least two sides, each with a player, and a place per side")
    teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma) for s in side] for side in sides]
    rated = MODEL.rate(teams, ranks=[float(p) for p in places])
    return [[Skill(r.mu, r.sigma) for r in team] for team in rated]
