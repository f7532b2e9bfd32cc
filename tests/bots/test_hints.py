"""The coach: proven-missing numbers, where each unseen tile may be, the expert's values."""
from __future__ import annotations

from engine_service.bots import hints
from engine_service.rules.tiles import NUMBER_MASK, parse_tile

from .conftest import kingdomino_positions, matching_positions, seat_view


def test_hints_add_up_and_honour_what_is_proven() -> None:
    checked_voids = 0
    for variant in ("kozel", "block", "all-fives", "osel"):
        for match, log in matching_positions(variant, 6, seed=3):
            view = seat_view(match, log)
            answer = hints(view, budget=20, seed=1)
            seat = view["seat"]
            assert set(answer["values"]) == set(view["legal"])
            assert all(0 <= v <= 1 for v in answer["values"].values())  # chances of winning the round
            assert answer["history_used"]
            for name, where in answer["whereabouts"].items():
                assert name not in view["hand"]
                # Each chance is rounded to 4 decimals (exact ones need not add up to 1 after rounding).
                assert abs(sum(where["hands"]) + where["boneyard"] - 1) <= 0.00005 * (len(where["hands"]) + 1)
                assert where["hands"][seat] == 0
            for other, numbers in enumerate(answer["proven_missing"]):
                for v in numbers:
                    for name, where in answer["whereabouts"].items():
                        if NUMBER_MASK[v] >> parse_tile(name) & 1:
                            assert where["hands"][other] == 0
                            checked_voids += 1
            if view["boneyard_size"] == 0:
                assert all(w["boneyard"] == 0 for w in answer["whereabouts"].values())
    assert checked_voids > 0


def test_kingdomino_hints() -> None:
    for game in kingdomino_positions(3, seed=2):
        player = game.to_move
        assert player is not None
        view = game.view(player)
        answer = hints(view, budget=6, seed=1)
        assert set(answer["values"]) <= set(view["legal"]) and answer["values"]
        assert all(0 <= v <= 1 for v in answer["values"].values())  # chances of first place
        assert all(0 <= p <= 1 for p in answer["pile"].values())


def test_hints_for_a_seat_not_to_move_have_no_values() -> None:
    for match, log in matching_positions("block", 3, seed=9):
        other = (match.to_move + 1) % match.players
        answer = hints(log.view(match, other), budget=10, seed=1)
        assert answer["values"] == {} and answer["seat"] == other
        assert answer["whereabouts"]
