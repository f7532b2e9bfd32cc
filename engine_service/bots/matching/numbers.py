"""Numbers as 7-bit sets, and the tiles showing them: what a pass or a draw proves is about numbers."""
from __future__ import annotations

from ...rules.layout import Layout
from ...rules.tiles import NUMBER_MASK


def numbers_tiles(numbers: int) -> int:
    """The tiles showing any number in the 7-bit set `numbers`."""
    m = 0
    for v in range(7):
        if numbers >> v & 1:
            m |= NUMBER_MASK[v]
    return m


def ends_numbers(layout: Layout) -> int:
    """The numbers the open ends show, as a 7-bit set."""
    s = 0
    for a in layout.arms:
        s |= 1 << layout.end[a]
    return s
