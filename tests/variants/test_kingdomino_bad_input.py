"""Kingdomino refuses bad input with a typed error naming the reason, and changes nothing (issue 14).

MalformedError (the action cannot be read: 400 on REST, INVALID_ARGUMENT on gRPC)
or IllegalActionError (well formed, not allowed now: 409, FAILED_PRECONDITION),
as engine_service/rules/errors.py maps them. After every refusal the state is
exactly what it was (`to_dict` identical), on the game object and when the game
is decoded from its state first, as a service does.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from engine_service.rules import IllegalActionError, Kingdomino, MalformedError, RulesError

PILE = [48, 3, 9, 1, 45, 2, 13, 4, 46, 40, 24, 19, 47, 23, 10, 7, 16, 11, 8, 5, 36, 32, 14, 12]
#: Rows [1, 3, 9, 48], [2, 4, 13, 45], ...; kings: players 0, 1, 1, 0 pick in that order.
DEAL = {"tiles": PILE, "kings": [0, 1, 1, 0]}

#: Moments of the start of that game, by the actions that lead there.
FIRST_PICKS = ["pick 1"]                                          # king 1 (player 1) picks, 1 is taken
PLACING = ["pick 1", "pick 9", "pick 48", "pick 3"]               # player 0 places tile 1
PICKING = PLACING + ["place 1 0,1 N"]                             # player 0 picks from [2, 4, 13, 45]
SECOND_PLACEMENT = PICKING + ["pick 2"]                           # player 0 places tile 3
SECOND_PICK = SECOND_PLACEMENT + ["place 3 1,0 E"]                # player 0 picks; 2 is its own already


def game_at(actions: list[str], options: dict[str, Any] | None = None) -> Kingdomino:
    deal: dict[str, Any] = DEAL
    if options and options.get("dynasty"):
        deal = {"games": [DEAL, DEAL, DEAL]}
    game, _ = Kingdomino.new(2, options=options, deal=deal)
    for action in actions:
        game.apply(action)
    return game


CASES: list[tuple[str, list[str], Any, Any, type[RulesError], str]] = [
    # what, moment, action, player, error, reason (regex)
    # -- a placement off the board
    ("off the board east", PLACING, "place 1 5,0 E", None, IllegalActionError, "wider than 5x5"),
    ("off the board, second square", PLACING, "place 1 4,0 E", None, IllegalActionError, "wider than 5x5"),
    ("off the board south", PLACING, "place 1 0,-5 S", None, IllegalActionError, "wider than 5x5"),
    ("far off the field", PLACING, "place 1 -999999,0 N", None, IllegalActionError, "wider than 5x5"),
    ("a coordinate too long", PLACING, "place 1 12345678,0 N", None, MalformedError, "at most 7 digits"),
    ("off the box of the kingdom", SECOND_PLACEMENT, "place 3 0,-3 S", None, IllegalActionError,
     "wider than 5x5"),
    # -- overlapping
    ("on the castle", PLACING, "place 1 0,0 N", None, IllegalActionError, "overlaps"),
    ("onto the castle, second square", PLACING, "place 1 0,-1 N", None, IllegalActionError, "overlaps"),
    ("on a placed square", SECOND_PLACEMENT, "place 3 0,2 E", None, IllegalActionError, "overlaps"),
    ("half on a placed square", SECOND_PLACEMENT, "place 3 1,1 W", None, IllegalActionError, "overlaps"),
    # -- a tile that is not in the row
    ("pick from no row", PICKING, "pick 46", None, IllegalActionError, r"tile 46 is not in the next row \(2, 4, 13, 45\)"),
    ("pick from the current row", PICKING, "pick 3", None, IllegalActionError, "tile 3 is not in the next row"),
    ("place another tile of the row", PLACING, "place 3 1,0 E", None, IllegalActionError,
     "tile 1 is the one to place now, not tile 3"),
    ("place a tile of no row", PLACING, "place 30 1,0 E", None, IllegalActionError,
     "tile 1 is the one to place now, not tile 30"),
    ("discard a tile of no row", PLACING, "discard 30", None, IllegalActionError,
     "tile 1 is the one to discard now, not tile 30"),
    # -- a tile already taken
    ("taken in the first round", FIRST_PICKS, "pick 1", None, IllegalActionError, "tile 1 is already taken by player 0"),
    ("taken by oneself", SECOND_PICK, "pick 2", None, IllegalActionError, "tile 2 is already taken by player 0"),
    # -- out of turn
    ("player 1 during player 0's placement", PLACING, "place 1 0,1 N", 1, IllegalActionError,
     "it is player 0's turn, not player 1's"),
    ("player 0 during player 1's first pick", FIRST_PICKS, "pick 3", 0, IllegalActionError,
     "it is player 1's turn, not player 0's"),
    ("a player who is not at the table", PLACING, "place 1 0,1 N", 7, IllegalActionError, "not player 7's"),
    ("a player that is not a number", PLACING, "place 1 0,1 N", "0", MalformedError, "player must be an integer"),
    ("a player that is a boolean", PLACING, "place 1 0,1 N", False, MalformedError, "player must be an integer"),
    # -- the wrong kind of action now
    ("a pick before the placement", PLACING, "pick 2", None, IllegalActionError, "must be placed"),
    ("a placement before the pick", PICKING, "place 3 1,0 E", None, IllegalActionError, "pick a tile of the next row first"),
    ("a placement in the first round", FIRST_PICKS, "place 1 0,1 N", None, IllegalActionError,
     "pick a tile of the next row first"),
    ("a discard of a tile that fits", PLACING, "discard 1", None, IllegalActionError, "fits in the kingdom, so it must be placed"),
    # -- malformed strings
    ("empty", PLACING, "", None, MalformedError, "expected pick, place or discard"),
    ("unknown verb", PLACING, "take 1", None, MalformedError, "expected pick, place or discard"),
    ("capitals", PLACING, "PLACE 1 0,1 N", None, MalformedError, "expected pick, place or discard"),
    ("a tab", PLACING, "pick\t2", None, MalformedError, "expected pick, place or discard"),
    ("pick without a tile", PICKING, "pick", None, MalformedError, "expected 'pick N'"),
    ("pick of two tiles", PICKING, "pick 2 4", None, MalformedError, "expected 'pick N'"),
    ("trailing space", PICKING, "pick 2 ", None, MalformedError, "expected 'pick N'"),
    ("a tile in words", PICKING, "pick two", None, MalformedError, r'"two" is not a tile number 1..48'),
    ("tile 0", PICKING, "pick 0", None, MalformedError, "not a tile number"),
    ("tile 49", PICKING, "pick 49", None, MalformedError, "not a tile number"),
    ("a full-width digit", PICKING, "pick \uff12", None, MalformedError, "not a tile number"),
    ("discard without a tile", PLACING, "discard", None, MalformedError, "expected 'discard N'"),
    ("place without a direction", PLACING, "place 1 0,1", None, MalformedError, "expected 'place N X,Y D'"),
    ("two spaces", PLACING, "place 1  0,1 N", None, MalformedError, "expected 'place N X,Y D'"),
    ("a diagonal direction", PLACING, "place 1 0,1 NE", None, MalformedError, "direction must be N, E, S or W"),
    ("a direction in lower case", PLACING, "place 1 0,1 n", None, MalformedError, "direction must be N, E, S or W"),
    ("three coordinates", PLACING, "place 1 0,1,2 N", None, MalformedError, "X,Y"),
    ("a semicolon", PLACING, "place 1 0;1 N", None, MalformedError, "X,Y"),
    ("a space in the square", PLACING, "place 1 0, 1 N", None, MalformedError, "expected 'place N X,Y D'"),
    ("a decimal coordinate", PLACING, "place 1 0.5,1 N", None, MalformedError, "x must be an integer"),
    ("a plus sign", PLACING, "place 1 +1,0 N", None, MalformedError, "x must be an integer"),
    ("a lone minus", PLACING, "place 1 -,0 N", None, MalformedError, "x must be an integer"),
    ("too long", PLACING, "place 1 0,1 N" + " " * 40, None, MalformedError, "too long"),
    ("not a string", PLACING, 17, None, MalformedError, "action: expected a string, not int"),
    ("bytes", PLACING, b"pick 2", None, MalformedError, "action: expected a string, not bytes"),
    ("null", PLACING, None, None, MalformedError, "action: expected a string, not NoneType"),
    ("a list", PLACING, ["pick", 2], None, MalformedError, "action: expected a string, not list"),
]


@pytest.mark.parametrize("what,moment,action,player,error,reason", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("options", [{}, {"dynasty": True}], ids=["game", "dynasty"])
def test_bad_input_is_refused_with_its_reason_and_changes_nothing(
        what: str, moment: list[str], action: Any, player: Any, error: type[RulesError], reason: str,
        options: dict[str, Any]) -> None:
    game = game_at(moment, options)
    before = game.to_dict()
    with pytest.raises(error, match=reason) as refused:
        game.apply(action, player=player)
    assert type(refused.value) is error                 # exactly: a 400 is never a 409 and back
    assert game.to_dict() == before
    # As a service does it: decode the state, refuse, and the state encodes as it came.
    decoded = Kingdomino.from_dict(json.loads(json.dumps(before)))
    with pytest.raises(error, match=reason):
        decoded.apply(action, player=player)
    assert decoded.to_dict() == before
    # and the game goes on: the refused action did not use up the turn
    assert decoded.legal_actions() == game.legal_actions() != []


def test_every_refusal_in_the_list_is_a_rules_error_subclass_the_boundaries_map() -> None:
    assert issubclass(MalformedError, RulesError) and issubclass(IllegalActionError, RulesError)
    assert not issubclass(MalformedError, IllegalActionError) and not issubclass(IllegalActionError, MalformedError)
    kinds = {c[0]: c[4] for c in CASES}
    assert len(kinds) == len(CASES)                     # the ids are unique


def test_nothing_is_accepted_after_the_end_and_nothing_changes() -> None:
    game = game_at([], {})
    while not game.game_over:
        game.apply(game.legal_actions()[0])
    before = game.to_dict()
    for action in ("pick 2", "place 1 0,1 N", "discard 12"):
        with pytest.raises(IllegalActionError, match="the game is over"):
            game.apply(action)
    with pytest.raises(MalformedError, match="expected pick, place or discard"):
        game.apply("pass")
    assert game.to_dict() == before


def test_a_refusal_mid_way_through_the_legal_list_leaves_every_kingdom_as_it_was() -> None:
    # Every square and direction of the field around player 0's first tile: each is either
    # legal (and then applied to a copy) or refused with the state unchanged.
    game = game_at(PLACING)
    legal = set(game.legal_actions())
    before = game.to_dict()
    refused = 0
    for x in range(-6, 7):
        for y in range(-6, 7):
            for d in "NESW":
                action = f"place 1 {x},{y} {d}"
                if action in legal:
                    trial = game.copy()
                    trial.apply(action)
                    assert trial.kingdoms[0].log == [action]
                    continue
                with pytest.raises(IllegalActionError):
                    game.apply(action)
                refused += 1
    assert game.to_dict() == before and refused == 13 * 13 * 4 - len(legal)
