"""How likely a world makes the other seats' own plays: the expert's opponent model (issue 42).

The sampler deals every world the history allows equally often (`sampler.Sampler`),
as if the other seats had played at random. They did not: a seat that kept playing
one number, or passed up a big count, did so with the hand it had. In a world, a
seat's hand at one of its past plays is known exactly when it has not drawn since
(its hand now and the tiles it played from then on: `knowledge.Choice`), and the
chance that the playouts' own model of a seat (`policy.playout_choice`: greedy in
the counting games, keeping the most tiles fitting the ends in the others; with
probability `EPSILON` any play) would have made that play with that hand is the
play's likelihood there. A world's weight is the product over those plays.

The expert deals `CANDIDATES` times the worlds it plays out and keeps as many as it
plays by systematic resampling on those weights (`select`), so its playouts fall on
the worlds the other seats' play makes likely (a partner's plays, in the team games,
weigh its hand as an opponent's do). The coach's `values` are the expert's, from
these worlds; its whereabouts stay the uniform ones (what the history proves,
nothing assumed of how anyone plays).

The model reads one-tile plays only (no lead, no move of several doubles, no
closing flag: those plays are left out of the product), and a seat's options at a
play are the tiles of its hand fitting an arm then (never a draw or pass: it played).
"""
from __future__ import annotations

import random

from ...rules.layout import Layout
from ...rules.notation import Move
from ...rules.tiles import NUMBER_MASK, OTHER, PIPS
from .knowledge import Knowledge
from .policy import points_after

#: The model's chance of any play rather than its first choice. Sharper than the playouts' 0.25
#: (`policy.ROLLOUT_EPSILON`): Kozel against suits, 400 pairs of seed 7, won 0.712 with 0.1 and 0.685
#: with 0.25 (0.656 with uniform worlds).
EPSILON = 0.1
#: The prior chance that a seat plays like the model rather than picking any play alike: a seat the
#: model does not describe (another expert, a person with other habits) weighs the worlds by its
#: options only, one it describes by the model. Osel teams against the prior expert lost with the
#: model alone (0.443 of 300 rounds, 0.388-0.500); with 0.8, 0.492 (0.436-0.548), with 0.5, 0.540
#: (0.483-0.596); Kozel against suits, seeds 7 and 3: 0.706 and 0.710 with 0.8, 0.693 and 0.686
#: with 0.5 (docs/bots.md, "Issue 42, the other seats' plays").
MODEL_SHARE = 0.8
#: Worlds dealt per world played out; the likeliest (by weight) are kept.
CANDIDATES = 4

#: One option at a past play: (tile, its bit, the model's hand-free key, the ends after it for the
#: keeping model (0 in the counting games)).
Option = tuple[int, int, int, int]


class Play:
    """One past play of another seat, ready to be weighed in any world."""

    __slots__ = ("counts", "index", "options", "played", "seat")

    def __init__(self, know: Knowledge, seat: int, layout: Layout, move: Move, played: int) -> None:
        fam = know.family
        self.seat = seat
        self.played = played
        self.counts = fam.counts
        self.options: list[Option] = []
        self.index = -1
        count = layout.count() if fam.counts else 0
        tile_played, arm_played, _flag = move[1][0]
        for arm in layout.arms:
            end = layout.end[arm]
            m = NUMBER_MASK[end]
            while m:
                low = m & -m
                t = low.bit_length() - 1
                m ^= low
                if t == tile_played and arm == arm_played:
                    self.index = len(self.options)
                one = Move(move[0], ((t, arm, False),))
                if fam.counts:
                    key = points_after(layout, one, fam.in_play_points, count) * 64 + PIPS[t]
                    ends = 0
                else:
                    key = PIPS[t]
                    ends = NUMBER_MASK[OTHER[t][end]]
                    for a in layout.arms:
                        if a != arm:
                            ends |= NUMBER_MASK[layout.end[a]]
                self.options.append((t, low, key, ends))

    def chance(self, hand_now: int) -> tuple[float, float]:
        """The chance of this play when the seat holds `hand_now` at the decision: the model's, and a
        player's choosing any of its plays alike."""
        hand = hand_now | self.played
        best = -1
        ties = 0
        mine = -1
        n = 0
        for i, (_t, bit, key, ends) in enumerate(self.options):
            if not hand & bit:
                continue
            n += 1
            if not self.counts:
                key = (hand & ~bit & ends).bit_count() * 64 + key
            if i == self.index:
                mine = key
            if key > best:
                best, ties = key, 1
            elif key == best:
                ties += 1
        if n == 0:
            return 1.0, 1.0
        top = (1.0 - EPSILON) / ties if mine == best else 0.0
        return top + EPSILON / n, 1.0 / n


def plays(know: Knowledge) -> list[Play]:
    """The other seats' past one-tile plays a world can weigh (see the module docstring)."""
    out = []
    for seat, layout, move, played in know.choices:
        placements = move[1]
        if len(placements) != 1 or placements[0][2]:
            continue
        p = Play(know, seat, layout, move, played)
        if p.index >= 0:
            out.append(p)
    return out


def weight(past: list[Play], hands: list[int]) -> float:
    """A world's weight (`hands`: every seat's hand): per seat, the chance of all its plays if it plays
    like the model (prior `MODEL_SHARE`) or if it picks any play alike, and the product over the seats."""
    model: dict[int, float] = {}
    alike: dict[int, float] = {}
    for p in past:
        m, a = p.chance(hands[p.seat])
        model[p.seat] = model.get(p.seat, 1.0) * m
        alike[p.seat] = alike.get(p.seat, 1.0) * a
    w = 1.0
    for seat, m in model.items():
        w *= MODEL_SHARE * m + (1.0 - MODEL_SHARE) * alike[seat]
    return w


def select(weights: list[float], n: int, rng: random.Random) -> list[int]:
    """`n` indexes into `weights` by systematic resampling (each about n × its share of the total)."""
    total = sum(weights)
    if total <= 0:
        return list(range(min(n, len(weights))))
    step = total / n
    at = rng.random() * step
    out: list[int] = []
    acc = 0.0
    i = 0
    for _ in range(n):
        while i < len(weights) - 1 and acc + weights[i] <= at:
            acc += weights[i]
            i += 1
        out.append(i)
        at += step
    return out
