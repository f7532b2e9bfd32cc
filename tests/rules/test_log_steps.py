"""The round's moves held as step codes (issue 27): `MatchState.log_steps` beside the text entries.

A match holds the moves after its round's deal as a code each (a pass, a draw, a play of the layout's
next tiles) and writes their text only when the log is read. These tests play random matches of every
matching preset (explicit deals, settled rounds and timeouts among them) and check at every step that
the text read from the codes is the log a text-only match would keep, and that the form held is the one
`history.steps_of` finds in that text, whichever way the state came (played here, copied, or decoded
from its JSON form).
"""
from __future__ import annotations

import random

from random_matches import random_matches

from engine_service.edge import game_state
from engine_service.rules import Match
from engine_service.rules.history import is_deal, steps_of


def _form(match: Match) -> tuple[list[str], bytes | None]:
    return match.log_text, None if match.log_steps is None else bytes(match.log_steps)


def _found(match: Match) -> tuple[list[str], bytes | None]:
    """The form `steps_of` finds in the match's log read as text."""
    rnd = match.round
    found = steps_of(match.log, match.log_count, None if rnd is None else rnd.layout.placements)
    return (match.log, None) if found is None else (found[0], bytes(found[1]))


def test_the_text_read_from_the_steps_is_the_log_a_text_only_match_keeps() -> None:
    stepped = 0
    for match, text, shed in random_matches():
        assert match.log == text
        assert match.shed == shed
        assert _form(match) == _found(match)
        stepped += bool(match.log_steps)
    assert stepped > 1000


def test_a_copy_and_a_decoded_json_state_hold_the_same_form_and_play_on_alike() -> None:
    rng = random.Random(27)
    for match, _, _ in random_matches(1):
        copied, decoded = match.copy(), Match.from_dict(match.to_dict())
        assert _form(copied) == _form(match) == _form(decoded)
        if match.turn is not None:
            action = rng.choice(match.legal_actions())
            for other in (copied, decoded):
                other.apply(action)
                assert other.log == copied.log and _form(other) == _found(other)


def test_a_move_that_is_no_step_turns_the_rounds_moves_to_text_until_the_next_deal() -> None:
    match, _ = Match.new("kozel", 4, seed=5)
    for _ in range(6):
        match.apply(match.legal_actions()[0])
    assert match.log_text == ["new", "deal"] and match.log_steps is not None and len(match.log_steps) == 6
    moves = match.log[2:]
    match.timeout(2)
    assert match.log_steps is None and match.log_text == ["new", "deal", *moves, "timeout 2"]
    assert Match.from_dict(match.to_dict()).log_steps is None
    assert is_deal("deal") and is_deal('deal {"hands":[]}') and not is_deal("dealt")


#: A sealed two-player All Fives state that the engine's fuzzer made (a mutated Settle): its round over and
#: its moves still held as step codes.
ENDED_WITH_STEPS = bytes.fromhex(
    "0a09616c6c2d6669766573100220f585b3a5a08feddec701280432290a020000120200002202283b2a1b08031001180120012a"
    "021200320200003a0200004a02283b5a01013a3b080112060a041113171912050a0300081b1a0e161a0403120c05070e010f14"
    "0a184801580160017a02020292010d099501860182018b028d0190017a046465616c90014e9a0110227cbd8be0253ab19829e7"
    "f644bd7da6a2010702020202020202")


def test_settling_after_a_round_that_still_holds_its_steps_writes_them_out_first() -> None:
    """Settle cleared the round before logging its own entry, and the steps held had no layout left to be
    written from: an AssertionError, INTERNAL to the caller. Now the moves are written out, then the entry."""
    match = game_state.decode(ENDED_WITH_STEPS)
    assert isinstance(match, Match) and match.round is not None and match.round.over and match.log_steps
    moves = match.log[len(match.log_text):]
    assert len(moves) == len(match.log_steps) == 7
    events = match.settle("out", [[], ["1-6", "4-4"]], 0)
    assert [e["type"] for e in events] == ["round_ended"]
    assert match.round is None and match.log_steps is None
    assert match.shed[-8:] == [*moves, 'settle {"ending":"out","hands":[[],["1-6","4-4"]],"last_placer":0}']
