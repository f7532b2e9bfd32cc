"""Kingdomino's turn order (RULES.md KD): who picks, who places, when the rows move on.

One copy of it, played by the rules' `Kingdomino` (which checks an action before,
and announces and logs it after) and by the expert's rollouts
(`bots/kingdomino/sim.SimGame`, on bit masks, with none of that): both hold the
rows in the fields of `Rows`, and both call these functions between their own
checks and kingdoms.

>>> class Game:  # the fields `Rows` names: a 2-player game (4 kings), its first row laid
...     pile, current_tiles, current_kings, picker = [9, 2, 30, 41], [], [], 0
...     next_tiles, next_kings = [5, 12, 20, 33], [-1, -1, -1, -1]
>>> g = Game()
>>> [pick(g, i, 4) for i in (2, 0, 3, 1)], g.current_tiles, g.current_kings, g.next_tiles, g.picker
([False, False, False, True], [5, 12, 20, 33], [1, 3, 0, 2], [2, 9, 30, 41], -1)
>>> placed(g), g.current_tiles, g.picker
(1, [12, 20, 33], 1)
"""
from __future__ import annotations

from typing import Protocol


class Rows(Protocol):
    """What the turn order reads and changes: the pile, the two rows and the king to pick.

    `current_tiles` are the current row's tiles still to be placed (ascending), the king on each
    in `current_kings`; `next_tiles` the next row, `next_kings` its kings (-1: not picked yet);
    `picker` the king that picks now (-1: none, a tile is to be placed or the game is over).
    """

    pile: list[int]
    current_tiles: list[int]
    current_kings: list[int]
    next_tiles: list[int]
    next_kings: list[int]
    picker: int


def lay_row(rows: Rows, size: int) -> list[int]:
    """Lay the next row from the pile: its first `size` tiles, in ascending order (none once the pile is
    empty), nobody's yet. The row laid."""
    row = sorted(rows.pile[:size])
    del rows.pile[:size]
    rows.next_tiles = row
    rows.next_kings = [-1] * len(row)
    return row


def pick(rows: Rows, i: int, size: int) -> bool:
    """King `rows.picker` takes the next row's `i`-th tile (free: the caller checked). Then, in the
    first round, the next king in lot order picks; later the current row's next tile is placed; and
    once the current row is used up and the next one taken, the next becomes current and a new row of
    `size` is laid (True: the caller announces it)."""
    rows.next_kings[i] = rows.picker
    rows.picker = -1
    if rows.current_tiles:
        return False
    taken = sum(1 for k in rows.next_kings if k >= 0)
    if taken < len(rows.next_kings):
        rows.picker = taken
        return False
    rows.current_tiles = rows.next_tiles
    rows.current_kings = rows.next_kings
    lay_row(rows, size)
    return True


def placed(rows: Rows) -> int:
    """The current row's first tile has been placed or discarded: it leaves the row, and its king picks
    from the next row, if there is one (after the last row nobody does: the game is over). Its king."""
    del rows.current_tiles[0]
    king = rows.current_kings.pop(0)
    if rows.next_tiles:
        rows.picker = king
    return king
