"""Every level answers a legal action, in every variant, from many random positions."""
from __future__ import annotations

import pytest

from engine_service.bots import LEVELS, Budget, suggest
from engine_service.rules.registry import PRESETS

from .conftest import kingdomino_positions, matching_positions, seat_view

SMALL = Budget(iterations=12)


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_matching_levels_play_legal_actions(variant: str) -> None:
    for match, log in matching_positions(variant, 12):
        view = seat_view(match, log)
        for level in LEVELS:
            action = suggest(view, level, budget=SMALL, seed=3)
            assert action in match.legal_actions(), (variant, level, action)


@pytest.mark.parametrize("variant", ["kozel", "block", "all-fives"])
def test_bots_play_whole_rounds(variant: str) -> None:
    for match, log in matching_positions(variant, 2, seed=5):
        rnd = match.round
        assert rnd is not None
        level = 0
        while not rnd.over and not match.match_over:
            action = suggest(seat_view(match, log), LEVELS[level % 3], budget=SMALL, seed=level)
            log.record(match.apply(action))
            level += 1


def test_kingdomino_levels_play_legal_actions() -> None:
    for game in kingdomino_positions(9):
        player = game.to_move
        assert player is not None
        view = game.view(player)
        for level in LEVELS:
            assert suggest(view, level, budget=Budget(iterations=6), seed=1) in game.legal_actions()


def test_a_view_where_the_seat_is_not_to_move_is_refused() -> None:
    match, log = next(matching_positions("block", 1))
    other = (match.to_move + 1) % match.players
    with pytest.raises(ValueError):
        suggest(log.view(match, other), "greedy")
    with pytest.raises(ValueError):
        suggest(seat_view(match, log), "grandmaster")
