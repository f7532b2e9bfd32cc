"""Bykovo (RULES.md B) behaviour the scenario files cannot express, and known engine bugs."""
from __future__ import annotations

import pytest

from engine_service.rules import IllegalActionError, MalformedError, Match
from engine_service.rules.tiles import DOUBLE_MASK

HANDS = [["0-0", "1-1", "1-2", "1-3", "1-4", "1-5", "1-6"],
         ["0-1", "0-2", "2-2", "2-3", "2-4", "2-5", "2-6"],
         ["0-3", "0-4", "3-3", "3-4", "3-5", "3-6", "4-4"],
         ["0-5", "0-6", "4-5", "4-6", "5-5", "5-6", "6-6"]]


def test_bykovo_leader_cannot_pass_before_laying_zero_zero() -> None:
    """RULES.md B: the holder of 0-0 leads it (seed 000 1.5: "Первый ход ... делает игрок, имеющий
    на руках кость 0-0, выкладывая ее на стол"): the voluntary pass starts after the lead."""
    match, _ = Match.new("bykovo", 4, deal={"hands": HANDS})
    assert match.legal_actions() == ["0-0"]
    before = match.to_dict()
    with pytest.raises(IllegalActionError):
        match.apply("pass")
    assert match.to_dict() == before
    match.apply("0-0")
    assert "pass" in match.legal_actions()


def test_bykovo_random_deals_are_never_misdeals() -> None:
    """B: a hand with 5 or more doubles is dealt again (deterministically from the seed)."""
    for seed in range(400):
        match, _ = Match.new("bykovo", 4, seed=seed)
        assert match.round is not None
        assert all((h & DOUBLE_MASK).bit_count() < 5 for h in match.round.hands)
        assert match.to_move == next(s for s, h in enumerate(match.round.hands) if h & 1)


def test_bykovo_settled_blocked_round_is_won_by_the_last_placer() -> None:
    """A blocked round is won by the seat that placed the last tile, whatever it holds (B)."""
    match, _ = Match.new("bykovo", 4, no_deal=True)
    hands = [["6-6"], ["0-1"], ["5-6", "4-4"], ["2-3"]]
    before = match.to_dict()
    with pytest.raises(MalformedError):
        match.settle("blocked", hands)                       # who placed last is needed
    assert match.to_dict() == before                         # refused: nothing changed
    match.settle("blocked", hands, last_placer=0)
    assert match.round_number == 1
    record = match.ledger.history[-1]
    assert record["winner"] == 0
    assert record["round_points"] == [0, 1, 19, 5]
    assert record["places"] == [1, 2, 4, 3]
    assert match.ledger.scores == [0, 1, 19, 5]


def test_bykovo_without_voluntary_pass_must_play() -> None:
    match, _ = Match.new("bykovo", 4, options={"voluntary_pass": False}, deal={"hands": HANDS})
    match.apply("0-0")
    assert set(match.legal_actions()) == {"0-1@W", "0-1@E", "0-2@W", "0-2@E"}
    with pytest.raises(IllegalActionError):
        match.apply("pass")
    match.apply("0-1@E")
    assert set(match.legal_actions()) == {"0-3@W", "0-4@W"}
