"""What a finished (or abandoned) round is worth to a seat, per family (docs/bots.md).

A side's round score, higher is better:
- counting games (TF, A3, A5, fives-and-threes): the points it gained in the
  round, in play and with the hand bonus;
- Kozel, Osel, Bykovo, block: minus the points the family charged it for the
  round (`RoundResult.round_points`: the pips left, 0 for the winner where the
  family says so).

A round's *value* for a side is 1 when it has the best round score, 0.5 when it
shares it, 0 behind: its mean over worlds is the chance of winning the round, in
[0, 1] (a shared best counting half), and that is all the coach calls a value. The
*margin* is its own number: the side's round score less the best other side's. The
expert ranks moves by mean value plus `MARGIN_WEIGHT` per point of mean margin:
winning the round first, and by more when it can (issue 42 kept the two apart).
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


def margin(scores: list[int], side: int) -> int:
    """`side`'s round score less the best other side's (positive: ahead)."""
    return scores[side] - max(v for s, v in enumerate(scores) if s != side)


def value(scores: list[int], side: int) -> float:
    """1 if `side` has the best round score alone, 0.5 if shared, 0 behind."""
    m = margin(scores, side)
    return 1.0 if m > 0 else 0.5 if m == 0 else 0.0


def rank(value: float, margin: float) -> float:
    """What the expert maximises of a move's mean value and mean margin."""
    return value + MARGIN_WEIGHT * margin
