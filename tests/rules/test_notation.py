"""Action strings of docs/FORMAT.md "Notation": every form round-trips, bad ones are malformed."""
from __future__ import annotations

import itertools

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Match, RulesError
from engine_service.rules.notation import (
    ARM_NAMES,
    CENTER,
    DRAW,
    LEAD,
    PASS,
    PLAY,
    Move,
    format_placement,
    parse_placement,
)
from engine_service.rules.tiles import NAMES, parse_tile

TILES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]
DOUBLES = [f"{v}-{v}" for v in range(7)]
ARMS = ["N", "E", "S", "W"] + [f"{s}{k}" for k in range(2, 8) for s in ("N", "S")]


def _flip(tile: str) -> str:
    a, b = tile.split("-")
    return f"{b}-{a}"


def test_the_two_error_kinds_are_distinct_value_errors() -> None:
    # ARCHITECTURE: bad notation vs illegal here, both ValueError, neither a kind of the other.
    assert issubclass(MalformedError, ValueError)
    assert issubclass(IllegalActionError, ValueError)
    assert issubclass(MalformedError, RulesError) and issubclass(IllegalActionError, RulesError)
    assert not issubclass(MalformedError, IllegalActionError)
    assert not issubclass(IllegalActionError, MalformedError)
    with pytest.raises(MalformedError) as caught:
        Move.parse("nonsense")
    assert not isinstance(caught.value, IllegalActionError)


def test_arm_names() -> None:
    # FORMAT: N, E, S, W, then N2, S2, ... for further spinners.
    assert list(ARM_NAMES) == ARMS


@pytest.mark.parametrize("tile", TILES)
def test_lead_round_trips(tile: str) -> None:
    move = Move.parse(tile)
    assert move[0] == LEAD
    assert move[1] == ((parse_tile(tile), CENTER, False),)
    assert move.text() == tile
    assert Move.parse(move.text()) == move
    assert format_placement(move[1][0]) == tile


@pytest.mark.parametrize("tile", [t for t in TILES if t not in DOUBLES])
def test_a_high_first_lead_keeps_its_orientation_in_the_layout(tile: str) -> None:
    # FORMAT: "The first tile a-b of a round lies with a facing W": "6-3" puts 6 on W.
    spelled = _flip(tile)
    move = Move.parse(spelled)
    assert move == (LEAD, ((parse_tile(tile), CENTER, True),))
    assert format_placement(move[1][0]) == spelled      # the layout keeps the orientation
    assert move.text() == spelled                        # and so does the move's notation
    assert parse_placement(spelled, True) == move[1][0]


@pytest.mark.parametrize("tile,arm", list(itertools.product(TILES, ARMS)))
def test_single_tile_play_round_trips_from_both_spellings(tile: str, arm: str) -> None:
    text = f"{tile}@{arm}"
    move = Move.parse(text)
    assert move == (PLAY, ((parse_tile(tile), ARM_NAMES.index(arm), False),))
    assert move.text() == text
    assert Move.parse(f"{_flip(tile)}@{arm}").text() == text
    assert parse_placement(text, False) == move[1][0]


@pytest.mark.parametrize("tile,arm", list(itertools.product(DOUBLES, ARMS)))
def test_closing_double_round_trips(tile: str, arm: str) -> None:
    text = f"{tile}@{arm}!"
    move = Move.parse(text)
    assert move == (PLAY, ((parse_tile(tile), ARM_NAMES.index(arm), True),))
    assert move.text() == text


def test_every_pair_and_triple_of_doubles_round_trips_in_ascending_arm_order() -> None:
    # FORMAT: several doubles in one move joined by "+" in ascending arm order N, E, S, W.
    arms4 = ["N", "E", "S", "W"]
    checked = 0
    for size in (2, 3, 4):
        for doubles in itertools.combinations(DOUBLES, size):
            for arms in itertools.permutations(arms4, size):
                for closes in itertools.product(("", "!"), repeat=size):
                    parts = [f"{d}@{a}{c}" for d, a, c in zip(doubles, arms, closes)]
                    canonical = "+".join(sorted(parts, key=lambda p: arms4.index(p.split("@")[1][0])))
                    move = Move.parse("+".join(parts))
                    assert move[0] == PLAY and len(move[1]) == size
                    assert move.text() == canonical
                    assert Move.parse(canonical) == move
                    checked += 1
    assert checked > 1000
    assert Move.parse("5-5@W+2-2@E").text() == "2-2@E+5-5@W"


def test_draw_and_pass() -> None:
    assert Move.parse("draw") == (DRAW, ())
    assert Move.parse("pass") == (PASS, ())
    assert Move.parse("draw").text() == "draw"
    assert Move.parse("pass").text() == "pass"


@pytest.mark.parametrize("bad", [
    "", " ", "@", "3-6@", "@E", "3-6@X", "3-6@e", "3-6@N1", "3-6@N8", "3-6@NE", "3-6E",
    "3-6@E!!", "3-6@E!",            # only a double closes
    "7-7", "7-7@E", "3-6@E@W",
    "2-2@E+2-2@W",                  # a tile twice
    "2-2@E+5-5@E",                  # an arm twice
    "2-2@E+3-5@W",                  # only doubles go together
    "2-2+5-5", "2-2@E+", "+2-2@E", "2-2@E++5-5@W", "draw+pass", "2-2@E+draw",
    "DRAW", "Pass", "knock", "draw!", "pass@E",
])
def test_bad_action_strings_are_malformed(bad: str) -> None:
    with pytest.raises(MalformedError):
        Move.parse(bad)


@pytest.mark.parametrize("bad", [None, 7, 3.5, b"draw", ["draw"], {"act": "draw"}, True])
def test_non_string_actions_are_malformed(bad: object) -> None:
    with pytest.raises(MalformedError):
        Move.parse(bad)


def test_parse_placement_checks_the_position_in_the_layout() -> None:
    with pytest.raises(MalformedError):
        parse_placement("3-6@E", True)      # the first entry is a bare tile
    with pytest.raises(MalformedError):
        parse_placement("3-6", False)       # later entries name an arm
    with pytest.raises(MalformedError):
        parse_placement("2-2@E+5-5@W", False)
    with pytest.raises(MalformedError):
        parse_placement("draw", False)


def test_a_match_refuses_bad_notation_as_malformed_and_bad_moves_as_illegal() -> None:
    hands = [["1-1", "0-2", "1-4", "0-0", "0-1", "0-3", "0-4"],
             ["1-2", "2-3", "2-4", "0-5", "1-3", "1-5", "1-6"],
             ["2-6", "3-5", "2-2", "3-3", "3-4", "3-6", "4-4"],
             ["0-6", "2-5", "4-5", "4-6", "5-5", "5-6", "6-6"]]
    match, _ = Match.new("kozel", 4, deal={"hands": hands})
    before = match.to_dict()
    for bad in ("1-1@Q", "", "eleven", "2-2@E+2-2@W"):
        with pytest.raises(MalformedError):
            match.apply(bad)
    with pytest.raises(MalformedError):
        match.apply(None)  # type: ignore[arg-type]
    for illegal in ("0-2", "1-1@E", "6-6", "draw", "pass"):
        with pytest.raises(IllegalActionError):
            match.apply(illegal)
    assert match.to_dict() == before
    assert NAMES[parse_tile("1-1")] == "1-1"
