"""The 48 Kingdomino tiles, read from `data/kingdomino-tiles.csv` (RULES.md KD).

A tile is its number 1..48; each has two squares, a *first* (terrain_1,
crowns_1 of the CSV) and a *second*. A placement names where the first square
goes and in which direction the second lies from it (FORMAT.md "Kingdomino
scenarios"). Terrains are small ints, indexes of `TERRAINS`; the tables below
are indexed by tile number (index 0 is unused) so the hot path is a lookup.

>>> TERRAINS[FIRST_TERRAIN[48]], FIRST_CROWNS[48], TERRAINS[SECOND_TERRAIN[48]], SECOND_CROWNS[48]
('wheat', 0, 'mine', 3)
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources
from typing import Final

from .errors import MalformedError

#: The six terrains of RULES.md KD, in the order the CSV's comment lists them.
TERRAINS: Final[tuple[str, ...]] = ("wheat", "forest", "lake", "grassland", "swamp", "mine")
TILE_COUNT: Final = 48
HEADER: Final[tuple[str, ...]] = ("number", "terrain_1", "crowns_1", "terrain_2", "crowns_2")
DATA_FILE: Final = "kingdomino-tiles.csv"


@dataclass(frozen=True, slots=True)
class KTile:
    """One tile: its number and each square's terrain (index of `TERRAINS`) and crowns."""

    number: int
    terrain1: int
    crowns1: int
    terrain2: int
    crowns2: int


def parse_tiles(text: str) -> tuple[KTile, ...]:
    """Read and check the CSV: the header, numbers 1..48 in order, known terrains, crowns 0..3."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(cell.strip() for cell in rows[0]) != HEADER:
        raise MalformedError(f"{DATA_FILE}: the header must be {','.join(HEADER)}")
    tiles: list[KTile] = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(HEADER):
            raise MalformedError(f"{DATA_FILE} line {line}: expected {len(HEADER)} fields")
        cells = [cell.strip() for cell in row]
        try:
            number, crowns1, crowns2 = int(cells[0]), int(cells[2]), int(cells[4])
        except ValueError:
            raise MalformedError(f"{DATA_FILE} line {line}: number and crowns must be integers") from None
        if number != len(tiles) + 1:
            raise MalformedError(f"{DATA_FILE} line {line}: tile {number} out of order")
        for terrain in (cells[1], cells[3]):
            if terrain not in TERRAINS:
                raise MalformedError(f"{DATA_FILE} line {line}: unknown terrain {terrain!r}")
        if not (0 <= crowns1 <= 3 and 0 <= crowns2 <= 3):
            raise MalformedError(f"{DATA_FILE} line {line}: crowns must be 0..3")
        tiles.append(KTile(number, TERRAINS.index(cells[1]), crowns1, TERRAINS.index(cells[3]), crowns2))
    if len(tiles) != TILE_COUNT:
        raise MalformedError(f"{DATA_FILE}: {len(tiles)} tiles, Kingdomino has {TILE_COUNT}")
    return tuple(tiles)


def read_data() -> str:
    """The packaged CSV's text (importlib.resources: works from a wheel, a zip or the sources)."""
    package = __name__.rpartition(".")[0] + ".data"
    return resources.files(package).joinpath(DATA_FILE).read_text(encoding="utf-8")


TILES: Final[tuple[KTile, ...]] = parse_tiles(read_data())
FIRST_TERRAIN: Final[tuple[int, ...]] = (-1,) + tuple(t.terrain1 for t in TILES)
FIRST_CROWNS: Final[tuple[int, ...]] = (0,) + tuple(t.crowns1 for t in TILES)
SECOND_TERRAIN: Final[tuple[int, ...]] = (-1,) + tuple(t.terrain2 for t in TILES)
SECOND_CROWNS: Final[tuple[int, ...]] = (0,) + tuple(t.crowns2 for t in TILES)


def describe(number: int) -> str:
    """A tile in words, for messages: ``17 (forest|lake)``; crowns as ``*``."""
    t = TILES[number - 1]
    return (f"{number} ({TERRAINS[t.terrain1]}{'*' * t.crowns1}|"
            f"{TERRAINS[t.terrain2]}{'*' * t.crowns2})")


__all__ = [
    "FIRST_CROWNS",
    "FIRST_TERRAIN",
    "SECOND_CROWNS",
    "SECOND_TERRAIN",
    "TERRAINS",
    "TILES",
    "TILE_COUNT",
    "KTile",
    "describe",
    "parse_tiles",
    "read_data",
]
