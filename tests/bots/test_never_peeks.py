"""NEVER PEEKS: worlds that look the same to a seat get the same decisions (issue 15).

For a fixed seed, the hidden tiles (the other hands and the boneyard, or
Kingdomino's pile) are dealt again in another way consistent with what the seat
has seen; the seat's view does not change, and neither does any level's action.
"""
from __future__ import annotations

import random
from typing import Any

from engine_service.bots import LEVELS, Budget, suggest
from engine_service.bots.matching.knowledge import read_view
from engine_service.bots.matching.sampler import Sampler
from engine_service.rules import Kingdomino, Match
from engine_service.rules.tiles import names

from .conftest import kingdomino_positions, matching_positions, seat_view


def rehidden(match: Match, view: dict[str, Any], seed: int) -> Match:
    """The same match with the tiles hidden from the viewing seat dealt again within its knowledge."""
    know = read_view(view)
    sampler = Sampler(know, random.Random(seed))
    hands, boneyard = sampler.hands()
    assert sampler.relaxed == 0
    state = match.to_dict()
    state["round"]["hands"] = [names(h) for h in hands]
    state["round"]["boneyard"] = [names(1 << t)[0] for t in boneyard]
    return Match.from_dict(state)


def test_rehiding_the_tiles_changes_no_matching_decision() -> None:
    changed = 0
    for variant in ("kozel", "osel", "bykovo", "threes-fives", "all-fives", "block"):
        for match, log in matching_positions(variant, 5, seed=7):
            seat = match.to_move
            view = seat_view(match, log)
            other = rehidden(match, view, seed=seat + 1)
            assert other.to_dict()["round"] != match.to_dict()["round"] or view["boneyard_size"] + sum(
                view["hand_sizes"]) - view["hand_sizes"][seat] <= 1
            changed += other.to_dict()["round"] != match.to_dict()["round"]
            other_view = log.view(other, seat)
            assert other_view == view
            for level in LEVELS:
                assert (suggest(view, level, budget=Budget(iterations=40), seed=9)
                        == suggest(other_view, level, budget=Budget(iterations=40), seed=9))
    assert changed > 20


def test_another_pile_changes_no_kingdomino_decision() -> None:
    for game in kingdomino_positions(6, seed=8):
        player = game.to_move
        assert player is not None
        state = game.to_dict()
        unseen = [t for t in range(1, 49) if t not in _seen(state)]
        random.Random(1).shuffle(unseen)
        state["pile"] = sorted(unseen[:len(state["pile"])], reverse=True)
        other = Kingdomino.from_dict(state)
        assert other.view(player) == game.view(player)
        for level in LEVELS:
            assert (suggest(game.view(player), level, budget=6, seed=4)
                    == suggest(other.view(player), level, budget=6, seed=4))


def _seen(state: dict[str, Any]) -> set[int]:
    seen = {item["tile"] for item in state["current"] + state["next"]}
    for log in state["kingdoms"]:
        for action in log:
            seen.add(int(action.split(" ")[1]))
    return seen
