"""Worlds drawn uniformly from the deals consistent with a seat's knowledge (issue 42).

A world deals the unseen tiles to the other seats (as many as each holds) and to
the boneyard (in a random draw order). Deals being equally likely, a world's chance
is proportional to the number of deals and draw sequences that lead to it: the
product over the other seats of `deals.SeatDeals.weight` of its hand (1 for a seat
that never drew). The sampler draws from exactly that, in two steps:

1. A *proposal*, uniform over the worlds where every seat holds only tiles its
   history allows (`SeatDeals.possible`), drawn exactly: the unseen tiles fall in
   classes by the set of seats that may hold them; `_Counter` counts the ways to
   split each class among those seats and the boneyard, and each world is drawn
   class by class, each split with its share of the completions (sequential
   sampling with exact counts: uniform, no repair and no bias).
2. *Rejection*: the proposal is kept with chance prod weight / max weight, which
   makes the kept worlds follow the product of the weights exactly. Seats that never
   drew have one weight, so in games without a boneyard nothing is ever rejected.

If no world fits (a history the rules did not play) or `MAX_PROPOSALS` are rejected
in a row, the world is dealt ignoring what cannot be met and `Sampler.relaxed`
counts it: a silent fallback would hide it. tests/bots/test_bots_exact.py checks the
worlds against an exhaustive enumeration of the deals.
"""
from __future__ import annotations

import random
from math import comb

from ...rules.round import Round
from ...rules.tiles import bits
from .deals import SeatDeals
from .knowledge import Knowledge

#: Proposals rejected in a row before a world is dealt regardless (counted in `Sampler.relaxed`).
MAX_PROPOSALS = 2000


class _Counter:
    """Exact counts of the ways to deal classes of tiles to seats of given sizes (sequential sampling).

    `classes[i]` is (tiles of the class, the seats, as indexes into the sizes, that may hold them);
    the tiles not dealt to a seat go to the boneyard, which takes whatever is left.
    """

    __slots__ = ("_count", "_splits", "classes")

    def __init__(self, classes: list[tuple[list[int], list[int]]]) -> None:
        self.classes = classes
        self._count: dict[tuple[int, tuple[int, ...]], int] = {}
        self._splits: dict[tuple[int, tuple[int, ...]], list[tuple[int, tuple[int, ...]]]] = {}

    def count(self, i: int, room: tuple[int, ...]) -> int:
        """The ways to deal classes i.. into seats with `room` places left, each filled exactly."""
        key = (i, room)
        hit = self._count.get(key)
        if hit is not None:
            return hit
        if i == len(self.classes):
            total = int(not any(room))
        else:
            total = sum(w for w, _x in self.splits(i, room))
        self._count[key] = total
        return total

    def splits(self, i: int, room: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """Every split of class i (how many to each of its seats) with its number of completions."""
        key = (i, room)
        hit = self._splits.get(key)
        if hit is not None:
            return hit
        tiles, seats = self.classes[i]
        n = len(tiles)
        out: list[tuple[int, tuple[int, ...]]] = []
        take = [0] * len(room)

        def go(k: int, left: int, ways: int) -> None:
            if k == len(seats):
                rest = tuple(r - t for r, t in zip(room, take))
                w = ways * self.count(i + 1, rest)
                if w:
                    out.append((w, tuple(take)))
                return
            s = seats[k]
            for c in range(min(left, room[s]) + 1):
                take[s] = c
                go(k + 1, left - c, ways * comb(left, c))
            take[s] = 0

        go(0, n, 1)
        self._splits[key] = out
        return out

    def draw(self, room: tuple[int, ...], rng: random.Random) -> list[int] | None:
        """One deal, uniform: per seat a bit set of tiles (the rest: the boneyard); None when none exists."""
        if not self.count(0, room):
            return None
        hands = [0] * len(room)
        for i, (tiles, _seats) in enumerate(self.classes):
            take = _pick(self.splits(i, room), rng)
            pool = tiles.copy()
            rng.shuffle(pool)
            at = 0
            for s, c in enumerate(take):
                for t in pool[at:at + c]:
                    hands[s] |= 1 << t
                at += c
            room = tuple(r - t for r, t in zip(room, take))
        return hands


def _pick(options: list[tuple[int, tuple[int, ...]]], rng: random.Random) -> tuple[int, ...]:
    """One of the weighted `options`, each with its weight's share."""
    pick = rng.randrange(sum(w for w, _x in options))
    for w, x in options:
        if pick < w:
            return x
        pick -= w
    raise AssertionError("a pick below the total weight falls in some option")


class Sampler:
    """Deals worlds for one `Knowledge` from a seeded `random.Random` (see the module docstring)."""

    __slots__ = ("counter", "deals", "know", "others", "relaxed", "rejected", "rng", "room", "unseen")

    def __init__(self, know: Knowledge, rng: random.Random) -> None:
        self.know = know
        self.rng = rng
        self.unseen = list(bits(know.unseen))
        self.others = [s for s in range(know.players) if s != know.seat]
        self.deals: list[SeatDeals] = []
        for s in self.others:
            deals = know.seats[s]
            assert deals is not None
            self.deals.append(deals)
        self.room = tuple(know.hand_sizes[s] for s in self.others)
        self.relaxed = 0
        #: Proposals turned down so far (the price of step 2, for the bench and the tests).
        self.rejected = 0
        classes: dict[int, list[int]] = {}
        for t in self.unseen:
            may = 0
            for k, deals in enumerate(self.deals):
                if deals.possible >> t & 1:
                    may |= 1 << k
            classes.setdefault(may, []).append(t)
        self.counter = _Counter([(tiles, [k for k in range(len(self.others)) if may >> k & 1])
                                 for may, tiles in sorted(classes.items())])

    def hands(self) -> tuple[list[int], list[int]]:
        """One world: every seat's hand (this seat's as it is) and the boneyard in draw order."""
        rng = self.rng
        weighted = [d for d in self.deals if d.draws and len(d.weights) > 1]
        for _ in range(MAX_PROPOSALS):
            dealt = self.counter.draw(self.room, rng)
            if dealt is None:
                break
            if weighted and not self._keep(dealt, rng):
                self.rejected += 1
                continue
            return self._world(dealt)
        self.relaxed += 1
        return self._deal_free()

    def weight(self, dealt: list[int]) -> int:
        """A world's weight: the product over the other seats (in `others` order) of their hands' weights."""
        w = 1
        for hand, deals in zip(dealt, self.deals):
            if deals.draws:
                w *= deals.weights.get(deals.counts_of(hand), 0)
        return w

    def every_world(self, limit: int) -> list[tuple[list[int], int]] | None:
        """Every world with its weight (the other seats' hands, in `others` order), when there are at
        most `limit` worlds to go through; None otherwise (then sample)."""
        if self.counter.count(0, self.room) > limit:
            return None
        out: list[tuple[list[int], int]] = []
        tiles = self.unseen
        hands = [0] * len(self.others)
        room = list(self.room)
        left = [len(tiles) - sum(room)]  # the boneyard's places

        def go(i: int) -> None:
            if i == len(tiles):
                w = self.weight(hands)
                if w:
                    out.append((hands.copy(), w))
                return
            t = tiles[i]
            for k, deals in enumerate(self.deals):
                if room[k] and deals.possible >> t & 1:
                    room[k] -= 1
                    hands[k] |= 1 << t
                    go(i + 1)
                    hands[k] &= ~(1 << t)
                    room[k] += 1
            if left[0]:
                left[0] -= 1
                go(i + 1)
                left[0] += 1

        go(0)
        return out

    def _keep(self, dealt: list[int], rng: random.Random) -> bool:
        """Step 2: keep a proposal with chance prod weight / max weight."""
        num = 1
        den = 1
        for hand, deals in zip(dealt, self.deals):
            if deals.draws and len(deals.weights) > 1:
                num *= deals.weights.get(deals.counts_of(hand), 0)
                den *= deals.max_weight
        return num == den or rng.randrange(den) < num

    def _world(self, dealt: list[int]) -> tuple[list[int], list[int]]:
        know = self.know
        hands = [0] * know.players
        hands[know.seat] = know.hand
        taken = 0
        for s, hand in zip(self.others, dealt):
            hands[s] = hand
            taken |= hand
        boneyard = [t for t in self.unseen if not taken >> t & 1]
        self.rng.shuffle(boneyard)
        return hands, boneyard

    def _deal_free(self) -> tuple[list[int], list[int]]:
        know = self.know
        pool = self.unseen.copy()
        self.rng.shuffle(pool)
        hands = [0] * know.players
        hands[know.seat] = know.hand
        i = 0
        for s in self.others:
            for t in pool[i:i + know.hand_sizes[s]]:
                hands[s] |= 1 << t
            i += know.hand_sizes[s]
        return hands, pool[i:]

    def world(self) -> Round:
        """One world as a `Round` ready to play from this seat's turn."""
        hands, boneyard = self.hands()
        return build_round(self.know, hands, boneyard)


def build_round(know: Knowledge, hands: list[int], boneyard: list[int]) -> Round:
    """A `Round` in the position the view shows, with these hands and boneyard (draw order)."""
    lead_mask = 0
    if not know.layout.placements:
        for _kind, placements in know.legal:
            for tile, _arm, _flag in placements:
                lead_mask |= 1 << tile
    leader = know.leader if know.leader is not None else know.seat
    rnd = Round(know.family, hands, boneyard, leader, lead_mask or hands[know.seat], know.layout.copy())
    rnd.to_move = know.to_move
    rnd.passes = know.passes
    rnd.out = list(know.out) if know.history_used else [s for s, n in enumerate(know.hand_sizes) if n == 0]
    rnd.last_placer = know.last_placer
    if rnd.last_placer is None and know.layout.placements:
        rnd.last_placer = (know.seat - 1) % know.players  # a guess, without a history (B scores it)
    return rnd
