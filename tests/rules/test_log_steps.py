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
