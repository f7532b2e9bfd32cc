"""Arms and moves of docs/FORMAT.md: a move is a value, `Move`, with its notation.

An action string names what the seat to move does:
``3-6`` (lead), ``3-6@E`` (attach to arm E), ``4-4@E!`` (a double closing its
arm, O), ``2-2@E+5-5@W`` (several doubles in one move), ``draw``, ``pass``.

Parsed, an action is a `Move` (as python-chess's ``Move`` with ``uci()`` and
``Move.from_uci()``): ``Move(kind, placements)`` where a placement is
``(tile, arm, flag)``; for a lead the arm is `CENTER` and the flag says the high
number faces W ("6-3"); otherwise the flag says the double closes its arm.
`Move.parse` reads the notation, `Move.text` writes it; a move is a named tuple,
so the rules and the bots' playouts unpack and hash it at tuple speed. Parsing is
a dict lookup for every single-tile action, and every single-tile move, draw and
pass is built once here (`MOVES`, `PLAY_MOVE`, ...), so the hot path never splits
strings nor builds moves.

>>> Move.parse("6-3@E")
Move(kind=1, placements=((21, 1, False),))
>>> Move.parse("5-5@W+2-2@E").text()
'2-2@E+5-5@W'
>>> Move.parse("6-3").text()
'6-3'
"""
from __future__ import annotations

from typing import Final, NamedTuple

from .errors import MalformedError, shown
from .tiles import HIGH, IS_DOUBLE, LOW, NAMES, TILE_COUNT

# Arms: N E S W, then the sides of the 2nd..7th spinner (A5 all-doubles).
ARM_NAMES: Final[tuple[str, ...]] = ("N", "E", "S", "W") + tuple(
    f"{side}{k}" for k in range(2, 8) for side in ("N", "S")
)
ARM_COUNT: Final = len(ARM_NAMES)
N: Final = 0
E: Final = 1
S: Final = 2
W: Final = 3
CENTER: Final = -1
ARM_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(ARM_NAMES)}


def spinner_sides(k: int) -> tuple[int, int]:
    """The arms opened by the k-th spinner (1-based): N/S, then N2/S2, ..."""
    if k == 1:
        return N, S
    return 4 + 2 * (k - 2), 5 + 2 * (k - 2)


# Move kinds.
LEAD: Final = 0
PLAY: Final = 1
DRAW: Final = 2
PASS: Final = 3

Placement = tuple[int, int, bool]


class Move(NamedTuple):
    """One move of a matching game: its kind (`LEAD`, `PLAY`, `DRAW`, `PASS`) and its placements.

    A tuple (equal to and hashed as ``(kind, placements)``), so it costs what a bare tuple
    costs; `parse` and `text` are its notation, the only reader and writer of action strings.
    """

    kind: int
    placements: tuple[Placement, ...]

    def text(self) -> str:
        """The canonical action string: placements in ascending arm order, a lead's orientation kept
        (``Move.parse(m.text()) == m`` for every move)."""
        known = MOVE_TEXT.get(self)
        return known if known is not None else _format(self)

    @classmethod
    def parse(cls, text: object) -> Move:
        """The move an action string names; MalformedError naming the field (``action: ...``) when it
        is not one. A dict lookup for every single-tile action, draw and pass."""
        if isinstance(text, str):
            move = _CACHE.get(text)
            if move is not None:
                return move
        try:
            return _parse(text)
        except MalformedError as exc:
            raise MalformedError(f"action: {exc}") from None


DRAW_MOVE: Final[Move] = Move(DRAW, ())
PASS_MOVE: Final[Move] = Move(PASS, ())

#: PLAY_TEXT[tile][arm] and CLOSE_TEXT[tile][arm]: canonical single-tile action strings.
PLAY_TEXT: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(f"{NAMES[t]}@{arm}" for arm in ARM_NAMES) for t in range(TILE_COUNT)
)
CLOSE_TEXT: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(f"{NAMES[t]}@{arm}!" for arm in ARM_NAMES) for t in range(TILE_COUNT)
)
#: LEAD_TEXT[tile]: the canonical lead (low number facing W).
LEAD_TEXT: Final[tuple[str, ...]] = NAMES

_CACHE: Final[dict[str, Move]] = {"draw": DRAW_MOVE, "pass": PASS_MOVE}
#: Every single-tile action string (both spellings), draw and pass, parsed: a dict lookup.
MOVES: Final[dict[str, Move]] = _CACHE


def _fill_cache() -> None:
    for t in range(TILE_COUNT):
        a, b = LOW[t], HIGH[t]
        spellings = {f"{a}-{b}": False, f"{b}-{a}": a != b}
        for text, flipped in spellings.items():
            _CACHE[text] = Move(LEAD, ((t, CENTER, flipped),))
            for arm, arm_name in enumerate(ARM_NAMES):
                _CACHE[f"{text}@{arm_name}"] = Move(PLAY, ((t, arm, False),))
                if IS_DOUBLE[t]:
                    _CACHE[f"{text}@{arm_name}!"] = Move(PLAY, ((t, arm, True),))


_fill_cache()

#: The canonical spelling of every single-tile action ("6-3@E" -> "3-6@E"); a lead keeps its
#: orientation ("6-3" stays "6-3": it says which number faces W).
CANONICAL: Final[dict[str, str]] = {}


def _parse(text: object) -> Move:
    """`Move.parse` after a cache miss; the reason it refuses names no field (a layout's entry
    is read with it too)."""
    if not isinstance(text, str):
        raise MalformedError(f"expected a string, not {type(text).__name__}")
    move = _CACHE.get(text)
    if move is not None:
        return move
    stripped = text.strip()
    if stripped != text:
        return _parse(stripped)
    if "+" in text:
        parts: list[Placement] = []
        for piece in text.split("+"):
            sub = _CACHE.get(piece)
            if sub is None or sub[0] != PLAY:
                raise MalformedError(f"{shown(text)} is not an action (bad part {shown(piece)})")
            parts.append(sub[1][0])
        tiles = {p[0] for p in parts}
        arms = {p[1] for p in parts}
        if len(tiles) != len(parts) or len(arms) != len(parts):
            raise MalformedError(f"{shown(text)} is not an action (a tile or an arm is named twice)")
        if not all(IS_DOUBLE[p[0]] for p in parts):
            raise MalformedError(f"{shown(text)} is not an action (only doubles are played together)")
        return Move(PLAY, tuple(sorted(parts, key=lambda p: p[1])))
    raise MalformedError(
        f"{shown(text)} is not an action (expected e.g. \"3-6\", \"3-6@E\", \"4-4@E!\", \"2-2@E+5-5@W\", "
        "\"draw\", \"pass\")"
    )


def format_placement(p: Placement) -> str:
    """One placement as a layout's entry writes it: ``3-6@E``, ``4-4@E!``, a lead as it lies (``6-3``)."""
    tile, arm, flag = p
    if arm == CENTER:
        return f"{HIGH[tile]}-{LOW[tile]}" if flag else NAMES[tile]
    return CLOSE_TEXT[tile][arm] if flag else PLAY_TEXT[tile][arm]


def _format(move: Move) -> str:
    """`Move.text` for a move not in `MOVE_TEXT` (several doubles at once), and how that table is made."""
    kind, placements = move
    if kind == DRAW:
        return "draw"
    if kind == PASS:
        return "pass"
    return "+".join(format_placement(p) for p in sorted(placements, key=lambda p: p[1]))


def _fill_canonical() -> None:
    for text, move in _CACHE.items():
        CANONICAL[text] = _format(move)


_fill_canonical()

#: The canonical text of every parsed single-tile move, draw and pass (what `Move.text` looks up):
#: ``MOVE_TEXT[Move.parse("6-3@E")] == "3-6@E"``; a lead keeps its orientation.
MOVE_TEXT: Final[dict[Move, str]] = {move: CANONICAL[text] for text, move in _CACHE.items()}
#: PLAY_MOVE[tile][arm], CLOSE_MOVE[tile][arm], LEAD_MOVE[tile]: the parsed single-tile moves, the
#: very values `Move.parse` returns, so a bot builds moves by table lookup and never parses.
PLAY_MOVE: Final[tuple[tuple[Move, ...], ...]] = tuple(
    tuple(_CACHE[PLAY_TEXT[t][a]] for a in range(ARM_COUNT)) for t in range(TILE_COUNT))
CLOSE_MOVE: Final[tuple[tuple[Move | None, ...], ...]] = tuple(
    tuple(_CACHE.get(CLOSE_TEXT[t][a]) for a in range(ARM_COUNT)) for t in range(TILE_COUNT))
LEAD_MOVE: Final[tuple[Move, ...]] = tuple(_CACHE[LEAD_TEXT[t]] for t in range(TILE_COUNT))


def parse_placement(text: object, first: bool) -> Placement:
    """A placement of a serialized layout: the lead (`first`) or a tile on an arm."""
    kind, placements = _parse(text)
    if first and kind == LEAD:
        return placements[0]
    if not first and kind == PLAY and len(placements) == 1:
        return placements[0]
    raise MalformedError(
        f"bad layout entry {text!r}: " + ("the first is a bare tile" if first else "expected 'a-b@ARM'")
    )
