"""Tiles of the double-six set and their notation (RULES.md C).

A tile is an int id 0..27 in ascending (low, high) order: 0-0=0, 0-1=1, ...,
0-6=6, 1-1=7, ..., 6-6=27 (the ids of the gRPC contract). A hand or any set of
tiles is a bit set: bit `t` set means tile `t` is in it. Everything the hot
path needs is a table lookup.

>>> tile_name(parse_tile("6-3"))
'3-6'
>>> PIPS[parse_tile("5-6")]
11
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from .errors import MalformedError

TILE_COUNT: Final = 28
ALL_TILES: Final = (1 << TILE_COUNT) - 1


def _tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    low: list[int] = []
    high: list[int] = []
    for a in range(7):
        for b in range(a, 7):
            low.append(a)
            high.append(b)
    return tuple(low), tuple(high)


# Final: the compiled build reads these tables from static slots, not the module's dict, on every use.
_LOW_HIGH: Final = _tables()
LOW: Final[tuple[int, ...]] = _LOW_HIGH[0]
HIGH: Final[tuple[int, ...]] = _LOW_HIGH[1]
PIPS: Final[tuple[int, ...]] = tuple(a + b for a, b in zip(LOW, HIGH))
IS_DOUBLE: Final[tuple[bool, ...]] = tuple(a == b for a, b in zip(LOW, HIGH))
NAMES: Final[tuple[str, ...]] = tuple(f"{a}-{b}" for a, b in zip(LOW, HIGH))
_ID: Final[dict[tuple[int, int], int]] = {}
for _t, (_a, _b) in enumerate(zip(LOW, HIGH)):
    _ID[(_a, _b)] = _t
    _ID[(_b, _a)] = _t

#: NUMBER_MASK[v]: the 7 tiles showing number v.
NUMBER_MASK: Final[tuple[int, ...]] = tuple(
    sum(1 << t for t in range(TILE_COUNT) if LOW[t] == v or HIGH[t] == v) for v in range(7)
)
#: DOUBLE_MASK: the 7 doubles; DOUBLE_OF[v]: the tile v-v.
DOUBLE_MASK: Final[int] = sum(1 << t for t in range(TILE_COUNT) if IS_DOUBLE[t])
DOUBLE_OF: Final[tuple[int, ...]] = tuple(_ID[(v, v)] for v in range(7))
#: OTHER[t][v]: the number a tile shows on its far side when its `v` side is attached (-1: no fit).
OTHER: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(HIGH[t] if LOW[t] == v else LOW[t] if HIGH[t] == v else -1 for v in range(7))
    for t in range(TILE_COUNT)
)
#: Tile names, both orientations, to ids ("3-6" and "6-3").
NAME_TO_ID: Final[dict[str, int]] = {f"{a}-{b}": t for (a, b), t in _ID.items()}


def tile_id(a: int, b: int) -> int:
    """The id of the tile with halves `a` and `b` (either order)."""
    try:
        return _ID[(a, b)]
    except KeyError:
        raise MalformedError(f"no tile {a}-{b} in the double-six set") from None


def parse_tile(text: object, where: str = "") -> int:
    """Parse `a-b` (either order) into a tile id; MalformedError otherwise (naming `where` it was)."""
    t = NAME_TO_ID.get(text) if isinstance(text, str) else None
    if t is None:
        prefix = f"{where}: " if where else ""
        raise MalformedError(f"{prefix}not a tile: {text!r} (expected 'a-b' with 0 <= a, b <= 6)")
    return t


def tile_name(t: int) -> str:
    """The canonical name of a tile, low number first."""
    return NAMES[t]


def bits(mask: int) -> Iterator[int]:
    """The tile ids in a bit set, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(tiles: Iterable[int]) -> int:
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


def names(mask: int) -> list[str]:
    """Canonical names of the tiles in a bit set, ascending."""
    return [NAMES[t] for t in bits(mask)]


def pips_of(mask: int) -> int:
    """Sum of pips of the tiles in a bit set."""
    return sum(PIPS[t] for t in bits(mask))


def parse_hand(items: object, what: str = "hand") -> int:
    """A list of tile names as a bit set; duplicates are malformed."""
    if not isinstance(items, (list, tuple)):
        raise MalformedError(f"{what} must be a list of tiles")
    m = 0
    for i, item in enumerate(items):
        t = NAME_TO_ID.get(item) if isinstance(item, str) else None
        if t is None:
            t = parse_tile(item, f"{what}[{i}]")
        if m >> t & 1:
            raise MalformedError(f"{what} holds {NAMES[t]} twice")
        m |= 1 << t
    return m


def parse_hands(hands: list[object] | tuple[object, ...], what: str, twice: str,
                size: int | None = None) -> tuple[list[int], int]:
    """Each of `hands` as a bit set (`parse_hand`, hand i named ``what[i]``), no tile in two of them:
    (the hands, every tile they hold). A tile held twice is refused with `twice` formatted with its
    name; `size`, when given, is how many tiles each hand must hold. A deal, a state's round and a
    settled round read their hands alike."""
    masks: list[int] = []
    seen = 0
    for seat, items in enumerate(hands):
        m = parse_hand(items, f"{what}[{seat}]")
        held = m.bit_count()  # the hand's length: parse_hand refuses a tile named twice
        if size is not None and held != size:
            raise MalformedError(f"{what}[{seat}]: holds {held} tiles, the variant deals {size}")
        if m & seen:
            raise MalformedError(twice.format(NAMES[next(bits(m & seen))]))
        seen |= m
        masks.append(m)
    return masks, seen

