"""Kingdomino's action strings (FORMAT.md "Kingdomino scenarios").

``pick 17`` (the acting king takes tile 17 of the next row), ``place 17 1,0 E``
(the first square of tile 17 on 1,0, the second on its neighbour to the east;
directions N, E, S, W), ``discard 17`` (tile 17 fits nowhere). Words are
separated by single spaces; coordinates are integers, possibly negative.

>>> parse_action("place 17 -1,0 N")
('place', 17, -1, 0, 0)
>>> parse_action("pick 3")
('pick', 3, 0, 0, -1)
"""
from __future__ import annotations

from .errors import MalformedError, shown
from .kingdomino_board import DIRECTION_INDEX
from .kingdomino_tiles import TILE_COUNT

#: (verb, tile, x, y, direction index or -1)
Action = tuple[str, int, int, int, int]

_MAX_TEXT = 40


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


def parse_action(action: object) -> Action:
    """Split an action into (verb, tile, x, y, direction); MalformedError says what is wrong."""
    if not isinstance(action, str):
        raise MalformedError(f"action: expected a string, not {type(action).__name__}")
    if len(action) > _MAX_TEXT:
        raise MalformedError(f"action: {shown(action[:_MAX_TEXT])}... is too long")
    words = action.split(" ")
    verb = words[0]
    if verb in ("pick", "discard"):
        if len(words) != 2:
            raise MalformedError(f"action: expected '{verb} N', not {shown(action)}")
        return verb, _tile(words[1], action), 0, 0, -1
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
        return verb, tile, x, y, d
    raise MalformedError(f"action: expected pick, place or discard ('pick N', 'place N X,Y D', 'discard N'), not {shown(action)}")


__all__ = ["Action", "parse_action"]
