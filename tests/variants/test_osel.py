"""Osel (RULES.md O) behaviour the scenario files cannot express, and known engine bugs."""
from __future__ import annotations

import pytest

from engine_service.rules import IllegalActionError, Match


def _teams_tie_then_out(heavy_partner: bool) -> Match:
    match, _ = Match.new("osel", 4, options={"teams": True}, no_deal=True)
    match.settle("blocked", [["0-4"], ["3-6"], ["1-5"], ["0-1"]])       # 10 / 10: eggs 20
    assert match.ledger.pot == 20
    seat3 = ["6-6"] if heavy_partner else ["0-0"]
    match.settle("out", [["1-2"], [], ["0-2"], seat3])                  # team 1 out, team 0 holds 5
    return match


def test_osel_eggs_go_to_the_losing_team_when_the_winners_hold_less() -> None:
    match = _teams_tie_then_out(heavy_partner=False)
    assert match.ledger.written == [25, 0] and match.ledger.pot == 0


def test_osel_eggs_go_to_the_losing_team_even_when_the_winners_partner_holds_more() -> None:
    """RULES.md O eggs; seed 000: "Все очки этого раунда добавляются тому, кто проиграет в
    следующем раунде": the team that went out scores nothing, whatever its partner holds."""
    match = _teams_tie_then_out(heavy_partner=True)
    assert match.ledger.written == [25, 0] and match.ledger.pot == 0


def test_osel_a_closed_arm_stays_closed_in_a_stored_state() -> None:
    """The state carries the closing flag: a decoded match still refuses the closed arm."""
    match, _ = Match.new("osel", 2, deal={"hands": [
        ["0-1", "2-3", "2-5", "3-5", "5-6", "3-6", "2-6"],
        ["1-4", "4-5", "0-2", "1-2", "1-3", "1-5", "1-6"]],
        "boneyard": ["4-4", "0-0", "0-3", "0-4", "0-5", "0-6", "1-1", "2-2", "2-4", "3-3", "3-4", "4-6",
                     "5-5", "6-6"]})
    for action in ("0-1", "1-4@E", "draw", "4-4@E!"):
        match.apply(action)
    state = match.to_dict()
    assert state["round"]["layout"][-1] == "4-4@E!"
    again = Match.from_dict(state)
    assert again.round is not None and again.round.layout.ends() == {"W": 0}
    with pytest.raises(IllegalActionError):
        again.apply("4-5@E")


def test_osel_view_hides_other_hands_and_the_boneyard() -> None:
    match, _ = Match.new("osel", 3, seed=11)
    seat = match.to_move
    view = match.view(seat)
    other = (seat + 1) % 3
    assert view["hand"] == match.to_dict()["round"]["hands"][seat]
    assert view["hand_sizes"] == [7, 7, 7] and view["boneyard_size"] == 7
    assert "boneyard" not in view and view["revealed_hands"] == []
    assert match.view(other)["legal"] == [] and view["legal"] == match.legal_actions()
