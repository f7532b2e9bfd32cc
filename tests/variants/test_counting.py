"""Counting games (RULES.md TF, fives-and-threes, A3, A5): behaviour beyond the scenarios, known bugs."""
from __future__ import annotations

import pytest

from engine_service.rules import IllegalActionError, Match

HANDS = [["5-5", "1-1", "0-2", "0-3", "0-4", "2-2", "2-4"],
         ["1-5", "3-5", "0-6", "2-6", "3-6", "4-6", "6-6"]]


def test_draw_when_able_lead_offers_what_it_accepts() -> None:
    """The lead is a play of a tile: neither draw nor pass before it, even with draw_when_able."""
    match, _ = Match.new("threes-fives", 2, options={"draw_when_able": True},
                         deal={"hands": HANDS, "leader": 0})
    legal = match.legal_actions()
    assert "draw" not in legal and "pass" not in legal
    before = match.to_dict()
    for action in ("draw", "pass"):
        with pytest.raises(IllegalActionError):
            match.apply(action)
        assert match.to_dict() == before
    match.apply("5-5")
    assert "draw" in match.legal_actions()          # after the lead, draw_when_able applies


def test_lot_lead_is_reproducible_and_varies_with_the_seed() -> None:
    leaders = set()
    for seed in range(40):
        a, _ = Match.new("all-fives", 3, seed=seed)
        b, _ = Match.new("all-fives", 3, seed=seed)
        assert a.to_move == b.to_move
        leaders.add(a.to_move)
    assert leaders == {0, 1, 2}


def test_points_scored_event_and_ledger_agree() -> None:
    match, _ = Match.new("threes-fives", 2, deal={"hands": HANDS, "leader": 0})
    events = match.apply("5-5")
    scored = [e for e in events if e["type"] == "points_scored"]
    assert scored == [{"type": "points_scored", "seat": 0, "points": 10, "count": 10}]
    assert match.ledger.scores == [10, 0]


def test_exact_target_refuses_points_in_the_event_too() -> None:
    match, _ = Match.new("fives-and-threes", 2, deal={"hands": HANDS, "leader": 0},
                         setup={"scores": [60, 0]})
    events = match.apply("5-5")                                   # 10 -> 2 would pass 61
    assert match.ledger.scores == [60, 0]
    assert all(e["points"] == 0 for e in events if e["type"] == "points_scored")


def test_view_shows_count_and_last_score() -> None:
    match, _ = Match.new("all-fives", 2, deal={"hands": HANDS, "leader": 0})
    match.apply("5-5")
    view = match.view(1)
    assert view["count"] == 10 and view["last_score"] == 10 and view["ends"] == {"N": 5, "E": 5, "S": 5, "W": 5}
    assert view["legal"] == match.legal_actions()


@pytest.mark.parametrize(("variant", "setup", "lead", "points"), [
    ("threes-fives", [245, 0], "5-5", 10),        # 245 + 10 reaches 251 in play
    ("all-fives", [95, 0], "5-5", 10),            # 95 + 10 reaches 100
    ("fives-and-threes", [59, 0], "5-5", 2),      # exactly 61
])
def test_reaching_the_target_in_play_ends_the_match_at_once(variant: str, setup: list[int], lead: str,
                                                            points: int) -> None:
    match, _ = Match.new(variant, 2, deal={"hands": HANDS, "leader": 0}, setup={"scores": setup})
    events = match.apply(lead)
    assert match.ledger.scores == [setup[0] + points, 0]
    assert match.match_over and match.losers == [1] and match.winners == [0]
    assert any(e["type"] == "match_ended" for e in events)
    assert match.legal_actions() == []
    with pytest.raises(IllegalActionError):
        match.apply("1-5@E")
