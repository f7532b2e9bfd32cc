"""Same view, level, budget and seed: same action; the seed is what varies the expert."""
from __future__ import annotations

from engine_service.bots import Budget, hints, suggest

from .conftest import kingdomino_positions, matching_positions, seat_view


def test_same_seed_same_action() -> None:
    for variant in ("kozel", "osel", "threes-fives", "block"):
        for match, log in matching_positions(variant, 6, seed=2):
            view = seat_view(match, log)
            for level in ("random", "greedy", "expert"):
                first = suggest(view, level, budget=Budget(iterations=30), seed=11)
                assert all(suggest(view, level, budget=Budget(iterations=30), seed=11) == first
                           for _ in range(2))


def test_same_seed_same_hints() -> None:
    match, log = next(matching_positions("kozel", 1, seed=4))
    view = seat_view(match, log)
    assert hints(view, budget=20, seed=5) == hints(view, budget=20, seed=5)


def test_kingdomino_same_seed_same_action() -> None:
    for game in kingdomino_positions(4, seed=3):
        player = game.to_move
        assert player is not None
        view = game.view(player)
        assert suggest(view, "expert", budget=8, seed=2) == suggest(view, "expert", budget=8, seed=2)


def test_a_time_budget_answers_a_legal_action() -> None:
    from engine_service.bots import Budget
    for match, log in matching_positions("kozel", 3, seed=6):
        view = seat_view(match, log)
        assert suggest(view, "expert", budget=Budget.time(20), seed=1) in view["legal"]
