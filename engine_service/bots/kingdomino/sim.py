"""A lean copy of a Kingdomino game for the expert's rollouts, with greedy play made cheap.

The rules' `Kingdomino` logs every action as text, builds event dicts and scores a
kingdom by flooding every region; a rollout needs none of that. `SimGame` plays
the rules' own turn order (RULES.md KD, `rules.kingdomino_turns`, as
`Kingdomino.apply_move` does) on bit masks, and each `Board` keeps its regions,
per terrain, as ``(mask, squares, crowns)``, updated when a tile is placed. Then:

- the score a placement adds is found from the few regions its squares touch:
  a square joining regions of sizes s_k with crowns c_k, bringing c crowns,
  makes one region of ``1 + sum s_k`` squares and ``c + sum c_k`` crowns;
- only the placements whose squares touch a region that scores (one with
  crowns, or any, when the square brings crowns) can add more than the tile's
  own crowns (``c1 + c2``, or twice that for a tile of one terrain), so greedy
  looks only at those, and otherwise takes the first legal placement.

`greedy_place` and `greedy_pick` choose exactly what `policy.greedy_action`
chooses (the same gains, the same ties: first in legal order; tested). Legality
is the rules' own mask test (`Kingdom.candidates`, same geometry, same bits).
"""
from __future__ import annotations

from ...rules.kingdomino import Kingdomino
from ...rules.kingdomino_board import Geometry, Kingdom
from ...rules.kingdomino_score import HARMONY_BONUS, MIDDLE_KINGDOM_BONUS
from ...rules.kingdomino_setup import KDConfig
from ...rules.kingdomino_tiles import FIRST_CROWNS, FIRST_TERRAIN, SECOND_CROWNS, SECOND_TERRAIN
from ...rules.kingdomino_turns import pick as pick_tile
from ...rules.kingdomino_turns import placed as tile_placed

#: A region of one terrain: (mask of its squares, squares, crowns).
Region = tuple[int, int, int]

_NEIGHBOURS: dict[int, tuple[int, ...]] = {}


def neighbours(geo: Geometry) -> tuple[int, ...]:
    """Per bit index, the mask of the orthogonally adjacent squares (spare columns absorb wraps)."""
    found = _NEIGHBOURS.get(geo.size)
    if found is None:
        w = geo.width
        found = tuple(((1 << i) << 1) | ((1 << i) >> 1) | ((1 << i) << w) | ((1 << i) >> w)
                      for i in range(geo.dim * geo.width + 1))
        _NEIGHBOURS[geo.size] = found
    return found


class Board:
    """One kingdom: occupied squares, terrain masks, regions per terrain and the bounding box."""

    __slots__ = ("discards", "geo", "maxx", "maxy", "memo", "minx", "miny", "nb", "occ", "regs", "terr")

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.nb = neighbours(geo)
        self.occ = geo.castle
        self.terr: list[int] = [0] * 6
        self.regs: list[tuple[Region, ...]] = [()] * 6
        self.minx = self.maxx = self.miny = self.maxy = 0
        self.discards = 0
        #: tile -> `best` on the board as it is (cleared when a tile is placed).
        self.memo: dict[int, tuple[int, int, int]] = {}

    @classmethod
    def of(cls, kingdom: Kingdom) -> Board:
        """The board of a rules kingdom (its regions flooded once)."""
        b = cls(kingdom.geo)
        b.occ = kingdom.occupied
        b.terr = kingdom.terrain.copy()
        b.minx, b.maxx, b.miny, b.maxy = kingdom.minx, kingdom.maxx, kingdom.miny, kingdom.maxy
        b.discards = kingdom.discards
        regs: list[list[Region]] = [[] for _ in range(len(b.regs))]
        for t, region, crowns in kingdom.region_masks():
            regs[t].append((region, region.bit_count(), crowns))
        b.regs = [tuple(found) for found in regs]
        return b

    def copy(self) -> Board:
        new = Board.__new__(Board)
        new.geo = self.geo
        new.nb = self.nb
        new.occ = self.occ
        new.terr = self.terr.copy()
        new.regs = self.regs.copy()
        new.minx, new.maxx, new.miny, new.maxy = self.minx, self.maxx, self.miny, self.maxy
        new.discards = self.discards
        new.memo = self.memo.copy()
        return new

    def candidates(self, tile: int) -> tuple[int, int, int, int]:
        """Per direction N, E, S, W, the squares where the tile's first square may go (as the rules)."""
        geo = self.geo
        span, reach, dim, width = geo.size - 1, geo.reach, geo.dim, geo.width
        free = (geo.col_ranges[(self.maxx - span + reach) * dim + self.minx + span + reach]
                & geo.row_ranges[(self.maxy - span + reach) * dim + self.miny + span + reach] & ~self.occ)
        castle = geo.castle
        t = self.terr
        n1 = t[FIRST_TERRAIN[tile]] | castle
        n2 = t[SECOND_TERRAIN[tile]] | castle
        near1 = (n1 << 1) | (n1 >> 1) | (n1 << width) | (n1 >> width)
        near2 = (n2 << 1) | (n2 >> 1) | (n2 << width) | (n2 >> width)
        return (free & (free >> width) & (near1 | (near2 >> width)),
                free & (free >> 1) & (near1 | (near2 >> 1)),
                free & (free << width) & (near1 | (near2 << width)),
                free & (free << 1) & (near1 | (near2 << 1)))

    def place(self, tile: int, i: int, d: int) -> None:
        """Put the tile's first square on bit `i`, the second in direction `d` (legal: not checked)."""
        geo = self.geo
        j = i + geo.deltas[d]
        a, b = 1 << i, 1 << j
        self.occ |= a | b
        if self.memo:
            self.memo = {}
        t1, t2 = FIRST_TERRAIN[tile], SECOND_TERRAIN[tile]
        self.terr[t1] |= a
        self.terr[t2] |= b
        nb = self.nb
        if t1 == t2:
            self._join(t1, a | b, nb[i] | nb[j], 2, FIRST_CROWNS[tile] + SECOND_CROWNS[tile])
        else:
            self._join(t1, a, nb[i], 1, FIRST_CROWNS[tile])
            self._join(t2, b, nb[j], 1, SECOND_CROWNS[tile])
        xs, ys = geo.xs, geo.ys
        x1, x2, y1, y2 = xs[i], xs[j], ys[i], ys[j]
        if x1 < self.minx or x2 < self.minx:
            self.minx = min(x1, x2)
        if x1 > self.maxx or x2 > self.maxx:
            self.maxx = max(x1, x2)
        if y1 < self.miny or y2 < self.miny:
            self.miny = min(y1, y2)
        if y1 > self.maxy or y2 > self.maxy:
            self.maxy = max(y1, y2)

    def _join(self, t: int, mask: int, near: int, size: int, crowns: int) -> None:
        kept: list[Region] = []
        for r in self.regs[t]:
            if r[0] & near:
                mask |= r[0]
                size += r[1]
                crowns += r[2]
            else:
                kept.append(r)
        kept.append((mask, size, crowns))
        self.regs[t] = tuple(kept)

    def score(self) -> int:
        return sum(s * c for regs in self.regs for _m, s, c in regs)

    def largest(self) -> int:
        return max((s for regs in self.regs for _m, s, _c in regs), default=0)

    def crowns(self) -> int:
        return sum(c for regs in self.regs for _m, _s, c in regs)

    def best(self, tile: int, masks: tuple[int, int, int, int]) -> tuple[int, int, int]:
        """(gain, bit, direction) of greedy's placement of `tile` (`masks`: its candidates, not all
        empty): the most score added, ties to the first in legal order (direction, then bit)."""
        t1, t2 = FIRST_TERRAIN[tile], SECOND_TERRAIN[tile]
        c1, c2 = FIRST_CROWNS[tile], SECOND_CROWNS[tile]
        width = self.geo.width
        deltas = self.geo.deltas
        nb = self.nb
        regs1 = self.regs[t1]
        best_gain = -1
        best_i = best_d = -1
        if t1 != t2:
            regs2 = self.regs[t2]
            # Squares where a square of this terrain and crowns would add more than its own crowns,
            # and what it would add there (each square's gain worked out once).
            hot1 = hot2 = 0
            for m, _s, c in regs1:
                if c or c1:
                    hot1 |= (m << 1) | (m >> 1) | (m << width) | (m >> width)
            for m, _s, c in regs2:
                if c or c2:
                    hot2 |= (m << 1) | (m >> 1) | (m << width) | (m >> width)
            gain1: dict[int, int] = {}
            gain2: dict[int, int] = {}
            base = c1 + c2
            for d in range(4):
                mask = masks[d]
                if not mask:
                    continue
                if best_i < 0:
                    best_gain, best_i, best_d = base, (mask & -mask).bit_length() - 1, d
                delta = deltas[d]
                first = mask & hot1
                second = mask & (hot2 >> delta if delta > 0 else hot2 << -delta)
                hot = first | second
                while hot:
                    low = hot & -hot
                    hot ^= low
                    i = low.bit_length() - 1
                    g = base
                    if first & low:
                        g1 = gain1.get(i)
                        if g1 is None:
                            near = nb[i]
                            s1, k1, x1 = 1, c1, 0
                            for m, s, c in regs1:
                                if m & near:
                                    s1 += s
                                    k1 += c
                                    x1 += s * c
                            g1 = gain1[i] = s1 * k1 - x1 - c1
                        g += g1
                    if second & low:
                        j = i + delta
                        g2 = gain2.get(j)
                        if g2 is None:
                            near = nb[j]
                            s2, k2, x2 = 1, c2, 0
                            for m, s, c in regs2:
                                if m & near:
                                    s2 += s
                                    k2 += c
                                    x2 += s * c
                            g2 = gain2[j] = s2 * k2 - x2 - c2
                        g += g2
                    if g > best_gain:
                        best_gain, best_i, best_d = g, i, d
            return best_gain, best_i, best_d
        cc = c1 + c2
        hot1 = 0
        for m, _s, c in regs1:
            if c or cc:
                hot1 |= (m << 1) | (m >> 1) | (m << width) | (m >> width)
        base = 2 * cc
        for d in range(4):
            mask = masks[d]
            if not mask:
                continue
            if best_i < 0:
                best_gain, best_i, best_d = base, (mask & -mask).bit_length() - 1, d
            delta = deltas[d]
            hot = mask & (hot1 | (hot1 >> delta if delta > 0 else hot1 << -delta))
            while hot:
                low = hot & -hot
                hot ^= low
                i = low.bit_length() - 1
                near = nb[i] | nb[i + delta]
                s1, k1, x1 = 2, cc, 0
                for m, s, c in regs1:
                    if m & near:
                        s1 += s
                        k1 += c
                        x1 += s * c
                g = s1 * k1 - x1
                if g > best_gain:
                    best_gain, best_i, best_d = g, i, d
        return best_gain, best_i, best_d

    def choice(self, tile: int) -> tuple[int, int, int]:
        """`best` for `tile` on the board as it stands ((-1, -1, -1) when it fits nowhere),
        remembered until the board changes: in a 4-player game the tile a player picks is the
        next one it places, on the same board."""
        found = self.memo.get(tile)
        if found is None:
            masks = self.candidates(tile)
            found = self.best(tile, masks) if masks[0] | masks[1] | masks[2] | masks[3] else (-1, -1, -1)
            self.memo[tile] = found
        return found


class SimGame:
    """The game on `Board`s, in the rules' turn order (`kingdomino_turns.Rows`: what
    `Kingdomino.apply_move` does, minus checks, logs and events)."""

    __slots__ = ("boards", "cfg", "current_kings", "current_tiles", "kings", "next_kings", "next_tiles", "picker",
                 "pile", "row")

    def __init__(self, cfg: KDConfig, kings: list[int], boards: list[Board], pile: list[int],
                 current_tiles: list[int], current_kings: list[int], next_tiles: list[int], next_kings: list[int],
                 picker: int) -> None:
        self.cfg = cfg
        self.row = cfg.kings
        self.kings = kings
        self.boards = boards
        self.pile = pile
        self.current_tiles = current_tiles
        self.current_kings = current_kings
        self.next_tiles = next_tiles
        self.next_kings = next_kings
        self.picker = picker

    def copy(self, pile: list[int]) -> SimGame:
        """A copy with `pile` (owned by the copy) as its undrawn pile."""
        return SimGame(self.cfg, self.kings, [b.copy() for b in self.boards], pile,
                       self.current_tiles.copy(), self.current_kings.copy(), self.next_tiles.copy(),
                       self.next_kings.copy(), self.picker)

    @property
    def over(self) -> bool:
        return self.picker < 0 and not self.current_tiles

    def pick(self, tile: int) -> None:
        """The king to pick takes `tile` of the next row (free: not checked)."""
        pick_tile(self, self.next_tiles.index(tile), self.row)

    def place(self, i: int, d: int) -> None:
        """Place the current tile's first square on bit `i` in direction `d` (`i` < 0: discard it)."""
        board = self.boards[self.kings[self.current_kings[0]]]
        if i < 0:
            board.discards += 1
        else:
            board.place(self.current_tiles[0], i, d)
        tile_placed(self)

    def greedy_pick(self) -> int:
        """The free tile whose best placement now adds the most (one that fits nowhere: -1);
        ties: the lowest number (the first legal)."""
        board = self.boards[self.kings[self.picker]]
        best_tile, best_gain = -1, -2
        for tile, k in zip(self.next_tiles, self.next_kings):
            if k < 0:
                g = board.choice(tile)[0]
                if g > best_gain:
                    best_tile, best_gain = tile, g
        return best_tile

    def greedy_place(self) -> tuple[int, int]:
        """(bit, direction) of the placement adding the most to the kingdom ((-1, -1): discard)."""
        _g, i, d = self.boards[self.kings[self.current_kings[0]]].choice(self.current_tiles[0])
        return i, d

    def play_greedy(self) -> None:
        """Everyone plays greedy to the end of the game."""
        while True:
            if self.picker >= 0:
                self.pick(self.greedy_pick())
            elif self.current_tiles:
                i, d = self.greedy_place()
                self.place(i, d)
            else:
                return

    def scores(self) -> list[int]:
        """Final scores: regions, plus the options' bonuses (the game is over)."""
        cfg = self.cfg
        out = []
        for b in self.boards:
            s = b.score()
            if cfg.middle_kingdom and b.minx == -b.maxx and b.miny == -b.maxy:
                s += MIDDLE_KINGDOM_BONUS
            if cfg.harmony and b.discards == 0:
                s += HARMONY_BONUS
            out.append(s)
        return out


def from_game(game: Kingdomino) -> SimGame:
    """The rules game's position (its pile included) as a `SimGame`."""
    return SimGame(game.cfg, game.kings.copy(), [Board.of(k) for k in game.kingdoms], game.pile.copy(),
                   game.current_tiles.copy(), game.current_kings.copy(), game.next_tiles.copy(),
                   game.next_kings.copy(), game.picker)
