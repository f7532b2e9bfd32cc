"""What a finished (or abandoned) round is worth to a seat, per family (docs/bots.md).

A side's round score, higher is better:
- counting games (TF, A3, A5, fives-and-threes): the points it gained in the
  round, in play and with the hand bonus;
- Kozel, Osel, Bykovo, block: minus the points the family charged it for the
  round (`RoundResult.round_points`: the pips left, 0 for the winner where the
  family says so).

The value the expert maximises is 1 for the best side, 0.5 shared, 0 behind,
plus `MARGIN_WEIGHT` per point of margin over the best other side: winning the
round first, and by more when it can.
"""
from __future__ import annotations

from ...rules.family import Family, RoundResult

MARGIN_WEIGHT = 0.002


def side_scores(family: Family, result: RoundResult | None, gains: list[int]) -> list[int]:
    """Each side's round score (see the module docstring); `gains` the in-play and bonus points."""
    if family.counts or result is None:
        return gains
    scores = [0] * family.sides
    for seat, points in enumerate(result.round_points):
        scores[family.side_of(seat)] -= points
    return scores


def value(scores: list[int], side: int) -> float:
    """The expert's value of side scores for `side`: win/tie/loss plus a small margin term."""
    mine = scores[side]
    best_other = max(v for s, v in enumerate(scores) if s != side)
    if mine > best_other:
        base = 1.0
    elif mine == best_other:
        base = 0.5
    else:
        base = 0.0
    return base + MARGIN_WEIGHT * (mine - best_other)
