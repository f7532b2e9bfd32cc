"""The simple levels and the playout policy of the matching games, on typed moves.

- `random`: uniform over the legal moves.
- `greedy` (documented in docs/bots.md): in the counting games (TF, A3, A5,
  fives-and-threes) the move scoring the most points now (the open-end count
  after it, as the family scores it), ties to the heavier move; in Kozel, Osel,
  Bykovo and block the heaviest move (most pips laid; several doubles add up).
  It never draws or passes while it can play. Remaining ties: the first in the
  legal list.
- `rollout_move`: what the expert assumes every seat plays in a playout: most of
  the time `playout_choice` (greedy in the counting games; in the others the move
  keeping the most of the mover's tiles fitting the ends, then the heaviest), a
  random legal move otherwise, so that playouts are fast and not naive.
"""
from __future__ import annotations

import random
from collections.abc import Callable

from ...rules.layout import SPINNER, TIP_DOUBLE, TIP_PLAIN, TIP_SIDE, Layout
from ...rules.notation import CENTER, DRAW, PASS, E, Move, W
from ...rules.round import Round
from ...rules.tiles import IS_DOUBLE, NUMBER_MASK, OTHER, PIPS

#: In a playout, the chance that a seat plays a random legal move rather than the greedy one.
ROLLOUT_EPSILON = 0.25


def move_pips(move: Move) -> int:
    """Pips laid by a move (0 for draw and pass)."""
    return sum(PIPS[t] for t, _arm, _flag in move[1])


def _tip_value(layout: Layout, kind: int, v: int) -> int:
    """What an arm's tip adds to the open-end count (layout.Layout.count, one arm)."""
    if kind == TIP_PLAIN:
        return v
    if kind == TIP_DOUBLE:
        return 2 * v
    if kind == TIP_SIDE and layout.spinner_counts:
        return v
    return 0


def points_after(layout: Layout, move: Move, in_play_points: Callable[[int], int],
                 count: int | None = None) -> int:
    """Points a counting family scores for `move` on `layout` (0 for draw and pass).

    One tile on an arm that opens and closes nothing (the usual case) is one arm's
    tip changing: the count is adjusted in place. Anything else (a lead, a spinner,
    a pending side, a lead double's far side) is laid on a copy of the layout.
    tests/bots/test_policy.py checks both ways agree.
    """
    kind, placements = move
    if kind in (DRAW, PASS):
        return 0
    if len(placements) == 1 and layout.placements and not layout.pending:
        tile, arm, closes = placements[0]
        if (not closes and not (layout.length[arm] == 0 and layout.centre_tip >= 0 and arm in (E, W))
                and not (layout.shape == SPINNER and IS_DOUBLE[tile]
                         and (layout.all_spinners or layout.spinners == 0))):
            before = layout.count() if count is None else count
            end = layout.end[arm]
            far = OTHER[tile][end]
            after = (before - _tip_value(layout, layout.tip[arm], end)
                     + _tip_value(layout, TIP_DOUBLE if IS_DOUBLE[tile] else TIP_PLAIN, far))
            return in_play_points(after)
    board = layout.copy()
    for tile, arm, flag in placements:
        if arm == CENTER:
            board.lead(tile, flag)
        else:
            board.place((tile, arm, flag), OTHER[tile][board.end[arm]])
    return in_play_points(board.count())


def greedy_move(rnd: Round, moves: list[Move]) -> Move:
    """The greedy level's choice among `moves` (see the module docstring)."""
    fam = rnd.family
    best = moves[0]
    if len(moves) == 1:
        return best
    if fam.counts:
        layout = rnd.layout
        count = layout.count()
        best_key = (-1, -1)
        for m in moves:
            if m[0] in (DRAW, PASS):
                key = (-1, -1)
            else:
                key = (points_after(layout, m, fam.in_play_points, count), move_pips(m))
            if key > best_key:
                best, best_key = m, key
        return best
    best_pips = -1
    for m in moves:
        p = move_pips(m) if m[0] not in (DRAW, PASS) else -1
        if p > best_pips:
            best, best_pips = m, p
    return best


def fitting_after(layout: Layout, hand: int, move: Move) -> int:
    """How many tiles of `hand` left after a one-tile `move` fit the ends it leaves (-1 for others).

    The ends are the open arms' numbers with the arm played on showing the tile's far
    number: an estimate that ignores arms the move opens or closes (spinners, a lead)."""
    kind, placements = move
    if kind in (DRAW, PASS) or len(placements) != 1 or not layout.placements:
        return -1
    tile, arm, _flag = placements[0]
    ends = NUMBER_MASK[OTHER[tile][layout.end[arm]]]
    for a in layout.arms:
        if a != arm:
            ends |= NUMBER_MASK[layout.end[a]]
    return (hand & ~(1 << tile) & ends).bit_count()


def keeping_move(rnd: Round, moves: list[Move]) -> Move:
    """The move that keeps the most of the mover's tiles fitting the ends, then the heaviest."""
    layout = rnd.layout
    hand = rnd.hands[rnd.to_move]
    best = moves[0]
    best_key = (-2, -2)
    for m in moves:
        if m[0] in (DRAW, PASS):
            key = (-2, -2)
        else:
            key = (fitting_after(layout, hand, m), move_pips(m))
        if key > best_key:
            best, best_key = m, key
    return best


def playout_choice(rnd: Round, moves: list[Move]) -> Move:
    """A playout's considered move: greedy in the counting games, `keeping_move` in the others."""
    return greedy_move(rnd, moves) if rnd.family.counts else keeping_move(rnd, moves)


def random_move(moves: list[Move], rng: random.Random) -> Move:
    """The random level: uniform over the legal moves."""
    return moves[rng.randrange(len(moves))] if len(moves) > 1 else moves[0]


def rollout_move(rnd: Round, moves: list[Move], rng: random.Random) -> Move:
    """A playout's move: `playout_choice`, or with probability `ROLLOUT_EPSILON` a random one."""
    if len(moves) == 1:
        return moves[0]
    if rng.random() < ROLLOUT_EPSILON:
        return moves[rng.randrange(len(moves))]
    return playout_choice(rnd, moves)
