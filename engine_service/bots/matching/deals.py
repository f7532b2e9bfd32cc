"""Exactly what one seat's round history allows of its current hand (issue 42).

A seat's tiles came in through *slots*: slot 0 is the deal (`hand_size` tiles at
once), slot j >= 1 its j-th draw (one tile). Each tile it played, and each tile it
holds now, came through one slot, and was in its hand from that slot until it left
(played, or now). A *proof* (a pass or a draw while the ends showed numbers N,
where the rules forced it) says no tile in the hand at that moment shows N. A forced
first lead (RULES.md K, O, B: the first of an order held by anyone leads) says the
tiles before the led one were in no hand at the deal: they are *barred* from slot 0.

So a tile may have come through slot a only if that slot came before the tile left
and no proof between the slot and its leaving forbids it (and a != 0 for a barred
tile). Because proofs after a later slot are a subset of those after an earlier
one, the slots open to a tile form an interval [lo, hi]: for a tile held now,
hi = the last draw and lo its *level*. A history is consistent with a current hand H
when the played tiles and H can be matched one to one onto the slots (the deal
taking `hand_size`): `weight(counts)` is the number of such matchings, which
depends only on how many tiles of H sit at each level, and it is exactly the
number of ways the deal and draws could have gone to give H. Deals being equally
likely, a world's chance is proportional to the product of its seats' weights
(sampler.Sampler samples from exactly that).

Nothing here is an estimate: a tile no consistent hand can hold is excluded
(`possible`), which is every void the history proves, draws later played
included (a seat that drew at {4, 6}, played the drawn 5-6, and drew again at {1, 4}
then played the drawn 1-2 holds no 6: both draws are spent on tiles it played).
"""
from __future__ import annotations

from collections.abc import Iterator

from ...rules.tiles import bits
from .numbers import numbers_tiles

#: A seat's timeline entry: ("proof", numbers 7-bit set), ("draw", 0) or ("play", tile), in order.
Entry = tuple[str, int]


class SeatDeals:
    """One other seat: its slots, its played tiles' intervals, its current tiles' levels, the weights."""

    __slots__ = ("avail", "consistent", "draws", "hand_size", "level", "played", "possible", "weights")

    def __init__(self, timeline: list[Entry], held: int, unseen: int, barred: int) -> None:
        """`held`: how many tiles the seat holds now; `unseen`: the tiles it may hold (bit set);
        `barred`: tiles in no hand at the deal (the lead's information)."""
        draw_at = [i for i, (kind, _v) in enumerate(timeline) if kind == "draw"]
        self.draws = len(draw_at)
        self.hand_size = held
        acquired = [-1, *draw_at]  # where each slot's tile came in
        proofs = [(i, numbers_tiles(v)) for i, (kind, v) in enumerate(timeline) if kind == "proof" and v]
        #: False for a history the rules could not have played (no hand fits it).
        self.consistent = True
        self.played: list[tuple[int, int]] = []
        for pos, (kind, tile) in enumerate(timeline):
            if kind != "play":
                continue
            span = _interval(tile, pos, acquired, proofs, barred)
            if span is None:
                self.consistent = False  # a tile it played could have come from nowhere
                span = (0, sum(1 for d in draw_at if d < pos))
            self.played.append(span)
        now = len(timeline)
        #: Per unseen tile that some slot admits: the first slot it could have come through.
        self.level: dict[int, int] = {}
        for t in bits(unseen):
            span = _interval(t, now, acquired, proofs, barred)
            if span is not None:
                self.level[t] = span[0]
        self.avail = [0] * (self.draws + 1)
        for lv in self.level.values():
            self.avail[lv] += 1
        #: Weight of every level count a hand of this size may have (zero weights left out).
        self.weights: dict[tuple[int, ...], int] = {}
        for counts in _compositions(self.avail, held):
            w = self.weight(counts)
            if w:
                self.weights[counts] = w
        if not self.weights:
            self.consistent = False
        open_levels = 0
        for counts in self.weights:
            for lv, c in enumerate(counts):
                if c:
                    open_levels |= 1 << lv
        #: The unseen tiles some consistent hand of this seat holds (bit set).
        self.possible = 0
        for t, lv in self.level.items():
            if open_levels >> lv & 1:
                self.possible |= 1 << t

    def counts_of(self, hand: int) -> tuple[int, ...]:
        """How many tiles of `hand` sit at each level."""
        counts = [0] * (self.draws + 1)
        for t in bits(hand):
            counts[self.level[t]] += 1
        return tuple(counts)

    def weight(self, counts: tuple[int, ...]) -> int:
        """The number of ways the deal and the draws could have given a hand with these level counts.

        The draws are filled from the last to the first. A tile may fill draw j when j is in its
        interval; walking down, a tile becomes available at its hi and must be placed before j
        passes below its lo (a tile with lo 0 may stay for the deal). Available tiles with the
        same lo are alike for what is left, so the count only needs, per lo, how many wait:
        choosing which of them fills a draw multiplies by that number."""
        k = self.draws
        arriving: list[list[int]] = [[] for _ in range(k + 1)]
        for lo, hi in self.played:
            arriving[hi].append(lo)
        for lv, c in enumerate(counts):
            arriving[k].extend([lv] * c)
        memo: dict[tuple[int, tuple[int, ...]], int] = {}

        def fill(j: int, waiting: tuple[int, ...]) -> int:
            key = (j, waiting)
            hit = memo.get(key)
            if hit is not None:
                return hit
            now = list(waiting)
            for lo in arriving[j]:
                now[lo] += 1
            if any(now[j + 1:]):
                total = 0  # a tile that could only have come by a later draw is left over
            elif j == 0:
                total = 1  # the deal takes what waits (all of lo 0)
            else:
                total = 0
                for lo in range(j + 1):
                    if now[lo]:
                        now[lo] -= 1
                        total += (now[lo] + 1) * fill(j - 1, tuple(now))
                        now[lo] += 1
            memo[key] = total
            return total

        return fill(k, (0,) * (k + 1))


def _interval(tile: int, end: int, acquired: list[int], proofs: list[tuple[int, int]],
              barred: int) -> tuple[int, int] | None:
    """The slots [lo, hi] `tile` may have come through if it left the hand at timeline position `end`."""
    hi = sum(1 for pos in acquired[1:] if pos < end)
    for a in range(hi + 1):
        if a == 0 and barred >> tile & 1:
            continue
        start = acquired[a]
        if all(not (mask >> tile & 1) for pos, mask in proofs if start < pos < end):
            return a, hi
    return None


def _compositions(avail: list[int], total: int) -> Iterator[tuple[int, ...]]:
    """Every way to take `total` tiles, at most avail[i] from level i, as per-level counts."""
    n = len(avail)
    after = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        after[i] = after[i + 1] + avail[i]
    chosen = [0] * n

    def go(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if i == n:
            if left == 0:
                yield tuple(chosen)
            return
        for c in range(max(0, left - after[i + 1]), min(avail[i], left) + 1):
            chosen[i] = c
            yield from go(i + 1, left - c)
        chosen[i] = 0

    yield from go(0, total)
