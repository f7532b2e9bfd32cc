"""Kingdomino's moves and their notation (FORMAT.md "Kingdomino scenarios"): a move is a value.

``pick 17`` (the acting king takes tile 17 of the next row), ``place 17 1,0 E``
(the first square of tile 17 on 1,0, the second on its neighbour to the east;
directions N, E, S, W), ``discard 17`` (tile 17 fits nowhere). Words are
separated by single spaces; coordinates are integers, possibly negative.

A `KingdominoMove` is that action parsed (the matching games' twin is
`notation.Move`): a named tuple, so the bots' playouts build and unpack it at
tuple speed; `KingdominoMove.parse` reads the notation, `text` writes it. A game
sends the same few thousand strings again and again, so both remember what they
worked out (a dict lookup after the first time, as `notation.MOVES` is for the
matching games): a string is remembered only when it is the canonical spelling,
so the move a remembered string gives writes back to that very string.

>>> KingdominoMove.parse("place 17 -1,0 N")
KingdominoMove(verb='place', tile=17, x=-1, y=0, direction=0)
>>> KingdominoMove.parse("pick 3")
KingdominoMove(verb='pick', tile=3, x=0, y=0, direction=-1)
>>> KingdominoMove.parse("place 17 -1,0 N").text()
'place 17 -1,0 N'
"""
from __future__ import annotations

from typing import Final, NamedTuple

from .errors import MalformedError, shown
from .kingdomino_board import DIRECTION_INDEX, DIRECTIONS
from .kingdomino_tiles import TILE_COUNT

_MAX_TEXT: Final = 40
#: How many canonical strings `_PARSED` and `_TEXT` remember at most (every placement of every tile:
#: about 15,500 in a 5x5 kingdom, 32,500 in a 7x7; beyond it a move is simply worked out each time).
_REMEMBERED: Final = 1 << 16


class KingdominoMove(NamedTuple):
    """One Kingdomino move: `verb` (``pick``, ``place``, ``discard``), the tile, and for a placement
    the first square (`x`, `y`) and the direction of the second (an index of N, E, S, W; -1 else)."""

    verb: str
    tile: int
    x: int = 0
    y: int = 0
    direction: int = -1

    def text(self) -> str:
        """The canonical action string (``Kingdom.placements`` writes the same for every legal
        placement, from squares it spelled once)."""
        known = _TEXT.get(self)
        if known is not None:
            return known
        if self.verb == "place":
            return f"place {self.tile} {self.x},{self.y} {DIRECTIONS[self.direction]}"
        return f"{self.verb} {self.tile}"

    @classmethod
    def parse(cls, action: object) -> KingdominoMove:
        """The move an action string names; MalformedError says what is wrong (``action: ...``)."""
        if isinstance(action, str):
            known = _PARSED.get(action)
            if known is not None:
                return known
        move = _parse(action)
        if len(_PARSED) < _REMEMBERED:
            text = move.text()
            if text == action:
                _PARSED[text] = move
                _TEXT[move] = text
        return move


#: Canonical action strings read so far, and the moves they name (see the module's docstring).
_PARSED: Final[dict[str, KingdominoMove]] = {}
_TEXT: Final[dict[KingdominoMove, str]] = {}


def _parse(action: object) -> KingdominoMove:
    """`KingdominoMove.parse` when the string is not remembered."""
    if not isinstance(action, str):
        raise MalformedError(f"action: expected a string, not {type(action).__name__}")
    if len(action) > _MAX_TEXT:
        raise MalformedError(f"action: {shown(action[:_MAX_TEXT])}... is too long")
    words = action.split(" ")
    verb = words[0]
    if verb == "pick" or verb == "discard":
        if len(words) != 2:
            raise MalformedError(f"action: expected '{verb} N', not {shown(action)}")
        return KingdominoMove(verb, _tile(words[1], action), 0, 0, -1)
    if verb == "place":
        if len(words) != 4:
            raise MalformedError(f"action: expected 'place N X,Y D', not {shown(action)}")
        tile = _tile(words[1], action)
        xy = words[2].split(",")
        if len(xy) != 2:
            raise MalformedError(f"action: in {shown(action)}, the square must be written X,Y")
        x, y = _int(xy[0], "x", action), _int(xy[1], "y", action)
        d = DIRECTION_INDEX.get(words[3], -1)
        if d < 0:
            raise MalformedError(f"action: in {shown(action)}, the direction must be N, E, S or W")
        return KingdominoMove(verb, tile, x, y, d)
    raise MalformedError(f"action: expected pick, place or discard ('pick N', 'place N X,Y D', 'discard N'), "
                         f"not {shown(action)}")


def _int(text: str, what: str, action: str) -> int:
    body = text[1:] if text[:1] == "-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise MalformedError(f"action: in {shown(action)}, {what} must be an integer, not {shown(text)}")
    if len(body) > 7:
        raise MalformedError(f"action: in {shown(action)}, {what} must be an integer of at most 7 digits, not {shown(text)}")
    return int(text)


def _tile(text: str, action: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 2 or not 1 <= int(text) <= TILE_COUNT:
        raise MalformedError(f"action: in {shown(action)}, {shown(text)} is not a tile number 1..{TILE_COUNT}")
    return int(text)


__all__ = ["KingdominoMove"]
