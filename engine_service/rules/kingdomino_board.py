"""One player's kingdom as bit masks: placement rules and scoring (RULES.md KD).

Squares have integer coordinates relative to the castle at 0,0 (x east, y
north; FORMAT.md "Kingdomino scenarios"). The kingdom's bounding box, castle
included, stays within `size` x `size` (5, or 7 with `mighty_duel`), so every
square lies in the field ``-(size-1) .. size-1`` on both axes. A square is bit
``(y + reach) * width + (x + reach)`` of a Python int, with one spare column
per row (``width = 2 * reach + 2``) so that shifting a mask one square east or
west never wraps into a real square of the next row.

Why masks: listing every legal placement of a tile is a handful of shifts, ands
and ors per direction, then one string per set bit; checking one placement is
the same few operations and a bit test. A random 4-player game (48 placements,
48 picks, every legal list built) takes a few milliseconds in pure Python.

RULES.md KD "Placement": at least one square of the new tile is orthogonally
adjacent to the castle or to a square of the same terrain, the tile does not
overlap, and the bounding box stays within size x size.

>>> k = Kingdom(geometry(5))
>>> len(k.placements(17))            # the first tile: 12 positions x 2 ways round
24
>>> k.place(17, 1, 0, 0)             # forest on 1,0, lake on 1,1 (north)
>>> k.can_place(18, 2, 0, 1), k.can_place(18, 3, 0, 1)   # forest next to forest, then a gap
(True, False)
"""
from __future__ import annotations

from typing import Final

from .kingdomino_tiles import FIRST_CROWNS, FIRST_TERRAIN, SECOND_CROWNS, SECOND_TERRAIN, TERRAINS

#: Directions of the second square from the first, in the order legal lists use.
DIRECTIONS: Final[tuple[str, ...]] = ("N", "E", "S", "W")
DX: Final[tuple[int, ...]] = (0, 1, 0, -1)
DY: Final[tuple[int, ...]] = (1, 0, -1, 0)
DIRECTION_INDEX: Final[dict[str, int]] = {"N": 0, "E": 1, "S": 2, "W": 3}


class Geometry:
    """The field of one kingdom size: bit positions, coordinate texts and bounding-box masks."""

    __slots__ = (
        "castle",
        "col_ranges",
        "deltas",
        "dim",
        "reach",
        "row_ranges",
        "size",
        "texts",
        "width",
        "xs",
        "ys",
    )

    def __init__(self, size: int) -> None:
        self.size = size
        self.reach = size - 1
        self.dim = 2 * self.reach + 1
        self.width = self.dim + 1
        reach, dim, width = self.reach, self.dim, self.width
        self.castle = 1 << self.bit(0, 0)
        #: Bit offset of the second square from the first, per direction N, E, S, W.
        self.deltas: tuple[int, ...] = (width, 1, -width, -1)
        texts = [""] * (dim * width)
        xs = [0] * (dim * width)
        ys = [0] * (dim * width)
        for y in range(-reach, reach + 1):
            for x in range(-reach, reach + 1):
                i = self.bit(x, y)
                texts[i] = f"{x},{y}"
                xs[i] = x
                ys[i] = y
        self.texts: tuple[str, ...] = tuple(texts)
        self.xs: tuple[int, ...] = tuple(xs)
        self.ys: tuple[int, ...] = tuple(ys)
        column = [0] * dim
        row = [0] * dim
        for y in range(-reach, reach + 1):
            for x in range(-reach, reach + 1):
                column[x + reach] |= 1 << self.bit(x, y)
                row[y + reach] |= 1 << self.bit(x, y)
        # col_ranges[lo * dim + hi]: the squares with lo <= x + reach <= hi (rows alike).
        cols = [0] * (dim * dim)
        rows = [0] * (dim * dim)
        for lo in range(dim):
            c = r = 0
            for hi in range(lo, dim):
                c |= column[hi]
                r |= row[hi]
                cols[lo * dim + hi] = c
                rows[lo * dim + hi] = r
        self.col_ranges: tuple[int, ...] = tuple(cols)
        self.row_ranges: tuple[int, ...] = tuple(rows)

    def bit(self, x: int, y: int) -> int:
        """The bit index of square x,y (which must lie in the field)."""
        return (y + self.reach) * self.width + (x + self.reach)

    def index(self, x: int, y: int) -> int:
        """The bit index of x,y, or -1 when it lies outside the field."""
        r = self.reach
        if -r <= x <= r and -r <= y <= r:
            return (y + r) * self.width + (x + r)
        return -1


_GEOMETRIES: Final[tuple[Geometry, Geometry]] = (Geometry(5), Geometry(7))


def geometry(size: int) -> Geometry:
    """The shared geometry of a 5x5 or 7x7 kingdom."""
    return _GEOMETRIES[0] if size == 5 else _GEOMETRIES[1]


def _dilate(m: int, width: int) -> int:
    """The squares orthogonally adjacent to a square of `m` (spare columns absorb the wrap)."""
    return (m << 1) | (m >> 1) | (m << width) | (m >> width)


def _popcount(m: int) -> int:
    return m.bit_count()


class Kingdom:
    """One player's castle and placed squares, and what it did with each tile it held.

    `log` lists the player's tile actions in order (``place 17 1,0 E`` or
    ``discard 22``): it is the kingdom's serial form, replayed and checked on
    decoding. `crowns_at_least[k]` holds the squares with more than k crowns, so
    a region's crowns are three popcounts.
    """

    __slots__ = (
        "crowns_at_least",
        "discards",
        "geo",
        "log",
        "maxx",
        "maxy",
        "minx",
        "miny",
        "occupied",
        "terrain",
    )

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.occupied = geo.castle
        self.terrain: list[int] = [0] * len(TERRAINS)
        self.crowns_at_least: list[int] = [0, 0, 0]
        self.minx = self.maxx = self.miny = self.maxy = 0
        self.log: list[str] = []
        self.discards = 0

    def copy(self) -> Kingdom:
        # Through the constructor, not `Kingdom.__new__`: compiled by mypyc, `__new__` runs `__init__`.
        new = Kingdom(self.geo)
        new.occupied = self.occupied
        new.terrain = self.terrain.copy()
        new.crowns_at_least = self.crowns_at_least.copy()
        new.minx, new.maxx, new.miny, new.maxy = self.minx, self.maxx, self.miny, self.maxy
        new.log = self.log.copy()
        new.discards = self.discards
        return new

    # ------------------------------------------------------------ placement

    def free_area(self) -> int:
        """Empty squares a new square may take without the bounding box passing size x size.

        A square is allowed when its x lies within ``maxx - (size-1) .. minx + (size-1)``
        (y alike); both squares of a tile allowed means the box with both is allowed.
        """
        geo = self.geo
        span, reach, dim = geo.size - 1, geo.reach, geo.dim
        cols = geo.col_ranges[(self.maxx - span + reach) * dim + self.minx + span + reach]
        rows = geo.row_ranges[(self.maxy - span + reach) * dim + self.miny + span + reach]
        return cols & rows & ~self.occupied

    def candidates(self, tile: int) -> tuple[int, int, int, int]:
        """Per direction N, E, S, W: the mask of squares where the tile's first square may go."""
        geo = self.geo
        width = geo.width
        free = self.free_area()
        castle = geo.castle
        near1 = _dilate(self.terrain[FIRST_TERRAIN[tile]] | castle, width)
        near2 = _dilate(self.terrain[SECOND_TERRAIN[tile]] | castle, width)
        # N: second at +width; E: +1; S: -width; W: -1. "p + d in M" is "p in M >> d".
        north = free & (free >> width) & (near1 | (near2 >> width))
        east = free & (free >> 1) & (near1 | (near2 >> 1))
        south = free & (free << width) & (near1 | (near2 << width))
        west = free & (free << 1) & (near1 | (near2 << 1))
        return north, east, south, west

    def fits(self, tile: int) -> bool:
        """Whether the tile can be placed anywhere (else it must be discarded)."""
        n, e, s, w = self.candidates(tile)
        return bool(n | e | s | w)

    def placements(self, tile: int) -> list[str]:
        """Every legal ``place`` action for the tile, by direction N, E, S, W then square."""
        texts = self.geo.texts
        out: list[str] = []
        prefix = f"place {tile} "
        for d, mask in enumerate(self.candidates(tile)):
            suffix = " " + DIRECTIONS[d]
            while mask:
                low = mask & -mask
                out.append(prefix + texts[low.bit_length() - 1] + suffix)
                mask ^= low
        return out

    def count_placements(self, tile: int) -> int:
        """How many ``place`` actions `placements` would list, without building them."""
        n, e, s, w = self.candidates(tile)
        return _popcount(n) + _popcount(e) + _popcount(s) + _popcount(w)

    def can_place(self, tile: int, x: int, y: int, d: int) -> bool:
        i = self.geo.index(x, y)
        if i < 0:
            return False
        return bool(self.candidates(tile)[d] >> i & 1)

    def why_not(self, tile: int, x: int, y: int, d: int) -> str:
        """Why a placement is refused, in words (the first rule it breaks)."""
        geo = self.geo
        x2, y2 = x + DX[d], y + DY[d]
        i, j = geo.index(x, y), geo.index(x2, y2)
        if i < 0 or j < 0:
            return f"the kingdom would be wider than {geo.size}x{geo.size}"
        if (self.occupied >> i | self.occupied >> j) & 1:
            return "it overlaps a square already in the kingdom (or the castle)"
        if not (self.free_area() >> i & self.free_area() >> j) & 1:
            return f"the kingdom would be wider than {geo.size}x{geo.size}"
        return "neither square touches the castle or a square of its own terrain"

    def place(self, tile: int, x: int, y: int, d: int) -> None:
        """Put the tile down (the caller has checked `can_place`)."""
        geo = self.geo
        i = geo.bit(x, y)
        j = i + geo.deltas[d]
        a, b = 1 << i, 1 << j
        self.occupied |= a | b
        self.terrain[FIRST_TERRAIN[tile]] |= a
        self.terrain[SECOND_TERRAIN[tile]] |= b
        at_least = self.crowns_at_least
        for k in range(FIRST_CROWNS[tile]):
            at_least[k] |= a
        for k in range(SECOND_CROWNS[tile]):
            at_least[k] |= b
        x2, y2 = x + DX[d], y + DY[d]
        self.minx = min(self.minx, x, x2)
        self.maxx = max(self.maxx, x, x2)
        self.miny = min(self.miny, y, y2)
        self.maxy = max(self.maxy, y, y2)
        self.log.append(f"place {tile} {x},{y} {DIRECTIONS[d]}")

    def discard(self, tile: int) -> None:
        """The tile fits nowhere and leaves the game (the caller has checked `fits`)."""
        self.discards += 1
        self.log.append(f"discard {tile}")

    # ------------------------------------------------------------ scoring

    def region_masks(self) -> list[tuple[int, int, int]]:
        """(terrain, squares as a mask, crowns) of every connected region of one terrain."""
        width = self.geo.width
        c1, c2, c3 = self.crowns_at_least
        out: list[tuple[int, int, int]] = []
        for t, squares in enumerate(self.terrain):
            rest = squares
            while rest:
                region = rest & -rest
                while True:
                    grown = (region | _dilate(region, width)) & squares
                    if grown == region:
                        break
                    region = grown
                rest &= ~region
                crowns = _popcount(region & c1) + _popcount(region & c2) + _popcount(region & c3)
                out.append((t, region, crowns))
        return out

    def regions(self) -> list[tuple[int, int, int]]:
        """(terrain, squares, crowns) of every connected region of one terrain."""
        return [(t, _popcount(region), crowns) for t, region, crowns in self.region_masks()]

    def region_score(self) -> int:
        """RULES.md KD "Score": squares x crowns for each region, summed."""
        return sum(squares * crowns for _t, squares, crowns in self.regions())

    def largest_region(self) -> int:
        """Squares of the largest single region (0 for a castle alone); the first tie-break."""
        return max((squares for _t, squares, _c in self.regions()), default=0)

    def crowns(self) -> int:
        """Crowns in the whole kingdom; the second tie-break."""
        c1, c2, c3 = self.crowns_at_least
        return _popcount(c1) + _popcount(c2) + _popcount(c3)

    def centred(self) -> bool:
        """`middle_kingdom`: the castle is at the centre of the kingdom's bounding box."""
        return self.minx == -self.maxx and self.miny == -self.maxy

    def squares(self) -> int:
        """Squares placed, castle excluded."""
        return _popcount(self.occupied) - 1

    def grid(self) -> list[dict[str, object]]:
        """Every placed square (castle excluded) as {x, y, terrain, crowns}, north row first."""
        geo = self.geo
        c1, c2, c3 = self.crowns_at_least
        found: list[tuple[int, int, int, int]] = []
        for t, mask in enumerate(self.terrain):
            while mask:
                low = mask & -mask
                i = low.bit_length() - 1
                found.append((-geo.ys[i], geo.xs[i], t, (c1 >> i & 1) + (c2 >> i & 1) + (c3 >> i & 1)))
                mask ^= low
        found.sort()
        return [{"x": x, "y": -neg_y, "terrain": TERRAINS[t], "crowns": c} for neg_y, x, t, c in found]


__all__ = ["DIRECTIONS", "DIRECTION_INDEX", "DX", "DY", "Geometry", "Kingdom", "geometry"]
