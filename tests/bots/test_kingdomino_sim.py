"""The expert's rollout game (bots/kingdomino/sim.py) plays exactly the greedy level, by the rules."""
from __future__ import annotations

import random

import pytest

from engine_service.bots.kingdomino.policy import greedy_action, legal_actions
from engine_service.bots.kingdomino.sim import from_game
from engine_service.rules import Kingdomino

OPTIONS = [{}, {"mighty_duel": True}, {"middle_kingdom": True, "harmony": True}]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_sim_greedy_chooses_what_greedy_chooses(players: int) -> None:
    rng = random.Random(players)
    checked = 0
    for g in range(12):
        options = OPTIONS[g % 3] if players == 2 else OPTIONS[2 * (g % 2)]
        game, _ = Kingdomino.new(players, options=options, seed=100 * players + g)
        geo = game.kingdoms[0].geo
        while not game.game_over:
            legal = legal_actions(game)
            action = legal[greedy_action(game, legal)]
            sim = from_game(game)
            if action[0] == "pick":
                assert sim.greedy_pick() == action[1]
            elif action[0] == "place":
                assert sim.greedy_place() == (geo.bit(action[2], action[3]), action[4])
            else:
                assert sim.greedy_place() == (-1, -1)
            checked += 1
            if rng.random() < 0.1:
                # The whole greedy game from here: the same kingdoms' scores and tie-break keys.
                ref = game.copy()
                while not ref.game_over:
                    moves = legal_actions(ref)
                    ref.apply_move(moves[greedy_action(ref, moves)])
                sim.play_greedy()
                assert sim.over
                assert sim.scores() == ref.scores()
                assert [b.largest() for b in sim.boards] == ref.largest_region()
                assert [b.crowns() for b in sim.boards] == ref.crowns()
            # Half the moves at random, so the positions are not all greedy's.
            game.apply_move(legal[rng.randrange(len(legal))] if rng.random() < 0.5 else action)
    assert checked > 100
