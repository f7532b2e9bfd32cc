"""The bench-only opponents of `domino bench bots` (bench/bots_opponents.py): each plays one of its view's legal
actions, and "selfish" is the expert deciding from its team game's view read as the same game played alone."""
from __future__ import annotations

from typing import Any

import pytest

from bench import bots_opponents
from engine_service.bots import suggest
from engine_service.rules.match import Match


def _views(variant: str, options: dict[str, Any] | None, seed: int, moves: int) -> list[dict[str, Any]]:
    """The views of the seat to move at each of the first `moves` decisions of a greedy game."""
    match, _events = Match.new(variant, 4, options, seed=seed)
    views = []
    for _ in range(moves):
        view = match.view(match.to_move)
        if view.get("round_over") or view.get("match_over"):
            break
        views.append(view)
        match.apply(suggest(view, "greedy"))
    return views


@pytest.mark.parametrize("level", bots_opponents.OPPONENTS)
def test_every_opponent_plays_a_legal_action_of_a_team_game(level: str) -> None:
    for view in _views("osel", {"teams": True}, seed=5, moves=6):
        assert bots_opponents.decide(view, level, seed=1) in view["legal"]


def test_selfish_reads_a_team_view_as_the_game_alone_and_is_the_expert_outside_teams() -> None:
    view = _views("all-fives", {"teams": True}, seed=3, moves=1)[0]
    view = {**view, "ledger": {**view["ledger"], "scores": [15, 40]}}
    alone = bots_opponents._alone(view)
    assert "teams" not in alone["options"] and alone["ledger"]["scores"] == [15, 40, 15, 40]
    assert alone["hand"] == view["hand"] and alone["legal"] == view["legal"]
    assert view["options"] == {"teams": True} and view["ledger"]["scores"] == [15, 40]  # the view is not changed
    assert bots_opponents.decide(view, "selfish", seed=2) == suggest(alone, "expert", seed=2)
    for single in _views("all-fives", None, seed=3, moves=4):
        assert bots_opponents._alone(single) is single
        assert bots_opponents.decide(single, "selfish", seed=2) == suggest(single, "expert", seed=2)
