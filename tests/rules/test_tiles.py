"""Tiles of the double-six set (RULES.md C "Set"): ids, names, parsing, tables."""
from __future__ import annotations

import pytest

from engine_service.rules import MalformedError, parse_tile, tile_name
from engine_service.rules import tiles as T

ALL_NAMES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def test_the_set_has_28_tiles_in_ascending_low_high_order() -> None:
    # C "Set": double-six, 28 tiles; the ids of the contract are 0-0=0, 0-1=1, ..., 6-6=27.
    assert T.TILE_COUNT == 28
    assert [tile_name(t) for t in range(28)] == ALL_NAMES
    assert T.ALL_TILES == (1 << 28) - 1
    assert parse_tile("0-0") == 0
    assert parse_tile("0-6") == 6
    assert parse_tile("1-1") == 7
    assert parse_tile("6-6") == 27


@pytest.mark.parametrize("name", ALL_NAMES)
def test_parse_both_orientations_and_name_low_first(name: str) -> None:
    # C "Set": a-b and b-a are the same tile; answers write it low number first.
    a, b = name.split("-")
    t = parse_tile(name)
    assert parse_tile(f"{b}-{a}") == t
    assert tile_name(t) == name
    assert T.LOW[t] == int(a) and T.HIGH[t] == int(b)
    assert T.PIPS[t] == int(a) + int(b)
    assert T.IS_DOUBLE[t] == (a == b)
    assert T.tile_id(int(b), int(a)) == t


@pytest.mark.parametrize("bad", [
    "", "1", "12", "1-", "-1", "1-7", "7-1", "7-7", "-1-2", "1--2", "1_2", "1 - 2",
    "a-b", "1-2-3", "١-٢", "1-2@E", "draw", "6-6!", "01-2", "1.0-2",
])
def test_bad_tile_text_is_malformed(bad: str) -> None:
    with pytest.raises(MalformedError):
        parse_tile(bad)


@pytest.mark.parametrize("bad", [None, 3, 3.0, b"1-2", ["1-2"], ("1", "2"), {"1-2": 1}])
def test_non_string_tile_is_malformed(bad: object) -> None:
    with pytest.raises(MalformedError):
        parse_tile(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("a,b", [(7, 0), (0, 7), (-1, 3), (3, -1), (10, 10)])
def test_tile_id_outside_the_set_is_malformed(a: int, b: int) -> None:
    with pytest.raises(MalformedError):
        T.tile_id(a, b)


def test_doubles_and_number_masks() -> None:
    doubles = [t for t in range(28) if T.IS_DOUBLE[t]]
    assert [tile_name(t) for t in doubles] == [f"{v}-{v}" for v in range(7)]
    assert T.DOUBLE_MASK == sum(1 << t for t in doubles)
    for v in range(7):
        assert tile_name(T.DOUBLE_OF[v]) == f"{v}-{v}"
        # Each number shows on 7 tiles: its double and six non-doubles.
        shown = T.names(T.NUMBER_MASK[v])
        assert len(shown) == 7
        assert all(str(v) in name.split("-") for name in shown)


def test_other_half_table() -> None:
    t = parse_tile("3-6")
    assert T.OTHER[t][3] == 6
    assert T.OTHER[t][6] == 3
    assert [T.OTHER[t][v] for v in (0, 1, 2, 4, 5)] == [-1] * 5
    d = parse_tile("4-4")
    assert T.OTHER[d][4] == 4


def test_bit_set_helpers() -> None:
    m = T.mask_of([parse_tile("6-6"), parse_tile("0-0"), parse_tile("2-5")])
    assert list(T.bits(m)) == [0, parse_tile("2-5"), 27]
    assert T.names(m) == ["0-0", "2-5", "6-6"]
    assert T.pips_of(m) == 0 + 7 + 12
    assert T.pips_of(T.ALL_TILES) == 168  # every number shows 8 times: 8 * (0+1+...+6)
    assert T.names(0) == []


def test_parse_hand() -> None:
    assert T.names(T.parse_hand(["6-3", "0-0"])) == ["0-0", "3-6"]
    assert T.parse_hand([]) == 0
    with pytest.raises(MalformedError, match="twice"):
        T.parse_hand(["3-6", "6-3"])
    with pytest.raises(MalformedError):
        T.parse_hand("3-6")
    with pytest.raises(MalformedError):
        T.parse_hand(["3-6", "9-9"])
    with pytest.raises(MalformedError):
        T.parse_hand(None)
