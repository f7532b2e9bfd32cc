"""Worlds consistent with a seat's knowledge: the hidden hands and the boneyard, sampled.

A world deals the unseen tiles to the other seats (as many as each holds) and
to the boneyard (in a random draw order), so that every `Limit` holds: a seat
proven void in a number gets no tile showing it, and a seat that has drawn
since gets at most as many as its draws allow. Seats with limits are filled
first, each from the tiles still allowed to it, then the rest is dealt at
random. When the limits are tight (late in a round, several seats void) and
that fails `ATTEMPTS` times, a free deal is repaired by swapping offending tiles
with tiles elsewhere that break no limit, and failing that dealt depth-first,
most constrained tile first. Should even that fail (a history from
a game the rules did not play), the world is dealt ignoring the limits and
`Sampler.relaxed` counts it: a silent fallback would hide the contradiction.
"""
from __future__ import annotations

import random

from ...rules.round import Round
from ...rules.tiles import bits
from .knowledge import Knowledge

#: Attempts at dealing the limited seats first, before a free deal is repaired instead.
ATTEMPTS = 8
#: Swaps a repair may make.
REPAIR_STEPS = 200
#: Steps of the last resort, a depth-first deal.
SEARCH_NODES = 20000


class Sampler:
    """Deals worlds for one `Knowledge` from a seeded `random.Random`."""

    __slots__ = ("know", "order", "relaxed", "rng", "unseen")

    def __init__(self, know: Knowledge, rng: random.Random) -> None:
        self.know = know
        self.rng = rng
        self.unseen = list(bits(know.unseen))
        # Most limited seats first: they have the fewest tiles to choose from.
        others = [s for s in range(know.players) if s != know.seat]
        self.order = sorted(others, key=lambda s: (-len(know.limits[s]), s))
        self.relaxed = 0

    def hands(self) -> tuple[list[int], list[int]]:
        """One world: every seat's hand (this seat's as it is) and the boneyard in draw order."""
        for _ in range(ATTEMPTS):
            dealt = self._try_deal()
            if dealt is not None:
                return dealt
        hands, boneyard = self._deal_free()
        if self._repair(hands, boneyard):
            return hands, boneyard
        found = self._search()
        if found is not None:
            return found
        self.relaxed += 1
        return hands, boneyard

    def _search(self) -> tuple[list[int], list[int]] | None:
        """A randomized depth-first deal, most constrained tile first (tight late positions)."""
        know = self.know
        rng = self.rng
        seats = [s for s in range(know.players) if s != know.seat]
        dests = seats + [-1]  # -1: the boneyard
        room = {s: know.hand_sizes[s] for s in seats}
        room[-1] = know.boneyard_size
        used = {s: [0] * len(know.limits[s]) for s in seats}
        tiles = self.unseen.copy()
        rng.shuffle(tiles)

        def eligible(t: int) -> int:
            return sum(1 for s in seats if not any(
                lim.allowed == 0 and lim.tiles >> t & 1 for lim in know.limits[s]))
        tiles.sort(key=eligible)
        placed: dict[int, int] = {}
        nodes = [0]

        def fits(t: int, s: int) -> bool:
            for k, lim in enumerate(know.limits[s]):
                if lim.tiles >> t & 1 and used[s][k] >= lim.allowed:
                    return False
            return True

        def go(i: int) -> bool:
            if i == len(tiles):
                return True
            nodes[0] += 1
            if nodes[0] > SEARCH_NODES:
                return False
            t = tiles[i]
            order = dests.copy()
            rng.shuffle(order)
            for s in order:
                if room[s] == 0 or (s >= 0 and not fits(t, s)):
                    continue
                room[s] -= 1
                if s >= 0:
                    for k, lim in enumerate(know.limits[s]):
                        if lim.tiles >> t & 1:
                            used[s][k] += 1
                placed[t] = s
                if go(i + 1):
                    return True
                room[s] += 1
                if s >= 0:
                    for k, lim in enumerate(know.limits[s]):
                        if lim.tiles >> t & 1:
                            used[s][k] -= 1
            return False

        if not go(0):
            return None
        hands = [0] * know.players
        hands[know.seat] = know.hand
        boneyard: list[int] = []
        for t, s in placed.items():
            if s < 0:
                boneyard.append(t)
            else:
                hands[s] |= 1 << t
        rng.shuffle(boneyard)
        return hands, boneyard

    def _excess(self, seat: int, hand: int) -> int:
        """How many tiles too many `hand` holds against the limits of `seat` (0: it keeps them all)."""
        excess = 0
        for lim in self.know.limits[seat]:
            over = (hand & lim.tiles).bit_count() - lim.allowed
            if over > 0:
                excess += over
        return excess

    def _repair(self, hands: list[int], boneyard: list[int]) -> bool:
        """Swap tiles until every seat keeps its limits (True), or give up (False)."""
        know = self.know
        rng = self.rng
        limited = [s for s in self.order if know.limits[s]]
        for _ in range(REPAIR_STEPS):
            bad = [s for s in limited if self._excess(s, hands[s])]
            if not bad:
                return True
            s = bad[rng.randrange(len(bad))]
            offending = 0
            for lim in know.limits[s]:
                if (hands[s] & lim.tiles).bit_count() > lim.allowed:
                    offending |= hands[s] & lim.tiles
            out = list(bits(offending))
            t = out[rng.randrange(len(out))]
            # Where it could go: the boneyard, or another seat's tile u that may come back in its place.
            options: list[tuple[int, int]] = [(-1, i) for i in range(len(boneyard))]
            for o in range(know.players):
                if o != s and o != know.seat:
                    options.extend((o, u) for u in bits(hands[o]))
            rng.shuffle(options)
            for o, u in options:
                tile_u = boneyard[u] if o < 0 else u
                new_s = (hands[s] & ~(1 << t)) | (1 << tile_u)
                if self._excess(s, new_s) >= self._excess(s, hands[s]):
                    continue
                if o >= 0:
                    new_o = (hands[o] & ~(1 << u)) | (1 << t)
                    if self._excess(o, new_o) > self._excess(o, hands[o]):
                        continue
                hands[s] = new_s
                if o >= 0:
                    hands[o] = new_o
                else:
                    boneyard[u] = t
                break
        return not any(self._excess(s, hands[s]) for s in limited)

    def _try_deal(self) -> tuple[list[int], list[int]] | None:
        know = self.know
        rng = self.rng
        pool = self.unseen.copy()
        rng.shuffle(pool)
        taken = 0
        hands = [0] * know.players
        hands[know.seat] = know.hand
        for s in self.order:
            limits = know.limits[s]
            if not limits:
                continue
            need = know.hand_sizes[s]
            room = [(lim.tiles, lim.allowed) for lim in limits]
            hand = 0
            for t in pool:
                if need == 0:
                    break
                if taken >> t & 1:
                    continue
                bit = 1 << t
                ok = True
                for tiles, allowed in room:
                    if tiles & bit and allowed <= 0:
                        ok = False
                        break
                if not ok:
                    continue
                room = [(tiles, allowed - 1) if tiles & bit else (tiles, allowed) for tiles, allowed in room]
                hand |= bit
                taken |= bit
                need -= 1
            if need:
                return None
            hands[s] = hand
            rng.shuffle(pool)  # the next seat chooses in a fresh order
        rest = [t for t in pool if not taken >> t & 1]
        i = 0
        for s in range(know.players):
            if s == know.seat or know.limits[s]:
                continue
            n = know.hand_sizes[s]
            m = 0
            for t in rest[i:i + n]:
                m |= 1 << t
            hands[s] = m
            i += n
        return hands, rest[i:]

    def _deal_free(self) -> tuple[list[int], list[int]]:
        know = self.know
        pool = self.unseen.copy()
        self.rng.shuffle(pool)
        hands = [0] * know.players
        hands[know.seat] = know.hand
        i = 0
        for s in range(know.players):
            if s == know.seat:
                continue
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
