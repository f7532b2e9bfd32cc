"""Worlds drawn uniformly from the deals consistent with a seat's knowledge (issue 42).

A world deals the unseen tiles to the other seats (as many as each holds) and to
the boneyard (in a random draw order). Deals being equally likely, a world's chance
is proportional to the number of deals and draw sequences that lead to it: the
product over the other seats of `deals.SeatDeals.weight` of its hand (1 for a seat
that never drew). The sampler draws from exactly that, by sequential sampling with
exact counts: the unseen tiles fall into classes by the seats that may hold them
(`SeatDeals.possible`) and, for a seat whose hands differ in weight, the level
they would sit at there; `_Counter` counts, from any point of a deal (the places
left, the weighted seats' level counts so far), the weighted number of ways to
finish it, and each world is drawn class by class, each split of a class among
its seats and the boneyard with its share of those. Nothing is rejected or
repaired, and no world is favoured: "deal the constrained seats first and repair"
was not uniform (issue 42).

If no world fits (a history the rules did not play), the world is dealt ignoring
what cannot be met and `Sampler.relaxed` counts it: a silent fallback would hide
it. tests/bots/test_exact_deals.py checks the worlds against an exhaustive
enumeration of the deals.
"""
from __future__ import annotations

import random
from math import comb

from ...rules.round import Round
from ...rules.tiles import bits
from .deals import SeatDeals
from .knowledge import Knowledge

#: A deal in progress: places left per seat, and per weighted seat how many of its tiles sit at each level.
State = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]


class _Counter:
    """Exact weighted counts of the ways to deal classes of tiles to seats of given sizes.

    `classes[i]` is (its tiles, the seats (indexes into the sizes) that may hold them, and per
    weighted seat the level they would sit at there, -1 where that seat may not hold them);
    `weighted` is, per weighted seat, (its index, its weights by level counts). A deal counts
    its number of ways times the product of the weighted seats' weights (1 without any);
    the tiles not dealt to a seat go to the boneyard, which takes whatever is left.
    """

    __slots__ = ("_count", "_splits", "classes", "weighted")

    def __init__(self, classes: list[tuple[list[int], list[int], tuple[int, ...]]],
                 weighted: list[tuple[int, dict[tuple[int, ...], int], int]]) -> None:
        self.classes = classes
        self.weighted = weighted
        self._count: dict[tuple[int, State], int] = {}
        self._splits: dict[tuple[int, State], list[tuple[int, tuple[int, ...]]]] = {}

    def start(self, room: tuple[int, ...]) -> State:
        return room, tuple((0,) * levels for _k, _w, levels in self.weighted)

    def count(self, i: int, state: State) -> int:
        """The weighted ways to deal classes i.. from `state`, every seat filled exactly."""
        key = (i, state)
        hit = self._count.get(key)
        if hit is not None:
            return hit
        if i == len(self.classes):
            room, hists = state
            total = 0 if any(room) else 1
            for (_k, weights, _levels), hist in zip(self.weighted, hists):
                total *= weights.get(hist, 0)
        else:
            total = sum(w for w, _x in self.splits(i, state))
        self._count[key] = total
        return total

    def after(self, i: int, state: State, take: tuple[int, ...]) -> State:
        """The state once class i has given `take[k]` tiles to each seat k."""
        room, hists = state
        levels = self.classes[i][2]
        new_hists = []
        for j, ((k, _w, _n), hist) in enumerate(zip(self.weighted, hists)):
            if take[k]:
                lv = levels[j]
                hist = hist[:lv] + (hist[lv] + take[k],) + hist[lv + 1:]
            new_hists.append(hist)
        return tuple(r - t for r, t in zip(room, take)), tuple(new_hists)

    def splits(self, i: int, state: State) -> list[tuple[int, tuple[int, ...]]]:
        """Every split of class i (how many to each of its seats) with its weighted completions."""
        key = (i, state)
        hit = self._splits.get(key)
        if hit is not None:
            return hit
        tiles, seats, _levels = self.classes[i]
        room = state[0]
        out: list[tuple[int, tuple[int, ...]]] = []
        take = [0] * len(room)

        def go(k: int, left: int, ways: int) -> None:
            if k == len(seats):
                x = tuple(take)
                w = ways * self.count(i + 1, self.after(i, state, x))
                if w:
                    out.append((w, x))
                return
            s = seats[k]
            for c in range(min(left, room[s]) + 1):
                take[s] = c
                go(k + 1, left - c, ways * comb(left, c))
            take[s] = 0

        go(0, len(tiles), 1)
        self._splits[key] = out
        return out

    def total(self, room: tuple[int, ...]) -> int:
        """The weighted number of deals (0: none fits)."""
        return self.count(0, self.start(room))

    def draw(self, room: tuple[int, ...], rng: random.Random) -> list[int] | None:
        """One deal with its weight's share: per seat a bit set of tiles (the rest: the boneyard)."""
        state = self.start(room)
        if not self.count(0, state):
            return None
        hands = [0] * len(room)
        for i, (tiles, _seats, _levels) in enumerate(self.classes):
            take = _pick(self.splits(i, state), rng)
            pool = tiles.copy()
            rng.shuffle(pool)
            at = 0
            for s, c in enumerate(take):
                for t in pool[at:at + c]:
                    hands[s] |= 1 << t
                at += c
            state = self.after(i, state, take)
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

    __slots__ = ("counter", "deals", "know", "others", "plain", "relaxed", "rng", "room", "unseen")

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
        #: The seats whose hands are not all alike in weight (they drew, and not every hand came the
        #: same number of ways): their tiles' levels split the classes, their weights count.
        weighted = [k for k, d in enumerate(self.deals) if d.draws and len(set(d.weights.values())) > 1]
        classes: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        for t in self.unseen:
            may = 0
            for k, deals in enumerate(self.deals):
                if deals.possible >> t & 1:
                    may |= 1 << k
            levels = tuple(self.deals[k].level[t] if may >> k & 1 else -1 for k in weighted)
            classes.setdefault((may, levels), []).append(t)
        listed = [(tiles, [k for k in range(len(self.others)) if may >> k & 1], levels)
                  for (may, levels), tiles in sorted(classes.items())]
        self.counter = _Counter(listed, [(k, self.deals[k].weights, self.deals[k].draws + 1) for k in weighted])
        #: The same classes unweighted: how many worlds there are.
        self.plain = _Counter([(tiles, seats, ()) for tiles, seats, _lv in listed], [])

    def hands(self) -> tuple[list[int], list[int]]:
        """One world: every seat's hand (this seat's as it is) and the boneyard in draw order."""
        return self.complete(self.deal())

    def deal(self) -> list[int]:
        """One world's hands only (every seat's, this seat's as it is); `complete` adds the boneyard."""
        dealt = self.counter.draw(self.room, self.rng)
        if dealt is None:
            self.relaxed += 1
            return self._deal_free()[0]
        hands = [0] * self.know.players
        hands[self.know.seat] = self.know.hand
        for s, hand in zip(self.others, dealt):
            hands[s] = hand
        return hands

    def complete(self, hands: list[int]) -> tuple[list[int], list[int]]:
        """The world of these hands: with the rest of the unseen tiles as the boneyard, in a random order."""
        taken = 0
        for s in self.others:
            taken |= hands[s]
        boneyard = [t for t in self.unseen if not taken >> t & 1]
        self.rng.shuffle(boneyard)
        return hands, boneyard

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
        if self.plain.total(self.room) > limit:
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
